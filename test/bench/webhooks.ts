/**
 * Webhook delivery benchmark (not a test): embedded service, local receivers, events emitted by
 * signing.quote. Prints delivered events/s and p50/p99 from emit (the event's occurredAt) to a
 * verified receipt, with 1 and with 100 endpoints.   pnpm bench:webhooks
 * Both webhook.register and signing.quote are offer-gated: every call carries `Accept-Price`, so each
 * offer is settled in the same request (docs/money.md) and the answer is the capability's own.
 * One service serves the three runs; each run has its own key (so its own account: an event reaches only its
 * account's endpoints), its own endpoints and its own receivers, and ends when every delivery has arrived. The
 * endpoints are registered a few at a time (set-up, not measured).
 *   BENCH_EVENTS_1=300 BENCH_EVENTS_100=30 BENCH_PACED_SECONDS=5 pnpm bench:webhooks
 * BENCH_ENDPOINTS (100): the many-endpoint runs' endpoint count (the smoke suite registers 10).
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { createLogger } from '@vcs/platform';

process.env.WEBHOOK_ALLOW_PRIVATE_TARGETS = 'true';
process.env.WEBHOOK_POLL_MS ??= '50';
const { startEmbedded } = await import('@vcs/embedded');

/** The receivers' thread: one HTTP server, a standardwebhooks verifier per endpoint (plain JavaScript, run by eval). */
const RECEIVERS = `
const { parentPort } = require('node:worker_threads');
const { createServer } = require('node:http');
const { Webhook } = require(${JSON.stringify(createRequire(import.meta.url).resolve('standardwebhooks'))});
const verifiers = new Map();
parentPort.on('message', (m) => verifiers.set(m.endpoint, new Webhook(m.secret)));
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => { body += c; });
  req.on('end', () => {
    const at = Date.now();
    try { parentPort.postMessage({ ms: at - Date.parse(verifiers.get(req.url.slice(6)).verify(body, req.headers).occurredAt), at }); }
    catch { parentPort.postMessage({ at }); }
    res.writeHead(204).end();
  });
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
`;

const EMIT_CONCURRENCY = Number(process.env.BENCH_EMIT_CONCURRENCY ?? 10);
const MANY = Number(process.env.BENCH_ENDPOINTS ?? 100);
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

const svc = await startEmbedded({ pgliteDir: 'memory://', log: createLogger('bench', 'silent') });
const base = await svc.app.listen({ port: 0, host: '127.0.0.1' });

async function run(endpoints: number, events: number, eventsPerSecond?: number) {
  // The receivers run in a thread of their own, as another program would: their HTTP and signature checks do not
  // share the service's event loop. They verify each delivery and report its latency (emit → receipt).
  const receivers = new Worker(RECEIVERS, { eval: true });
  const port = await new Promise<number>((r) => receivers.once('message', r));
  const latencies: number[] = [];
  let first = 0;
  let last = 0;
  let bad = 0;
  receivers.on('message', (m: { ms?: number; at: number }) => {
    if (m.ms === undefined) bad++;
    else {
      latencies.push(m.ms);
      first ||= m.at;
      last = m.at;
    }
  });
  const post = async (path: string, body: unknown, key?: string) => {
    const headers = {
      'content-type': 'application/json',
      ...(key ? { authorization: `Bearer ${key}`, 'accept-price': '1000.00 USD' } : {}),
    };
    const res = await fetch(base + path, { method: 'POST', headers, body: JSON.stringify(body) });
    const answer = (await res.json()) as any;
    // A refused call would otherwise surface later as a missing member; say which call and why.
    if (!res.ok) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(answer.value ?? answer)}`);
    return answer;
  };
  const { key } = await post('/keys', {});
  let registered = 0;
  await Promise.all(
    Array.from({ length: Math.min(EMIT_CONCURRENCY, endpoints) }, async () => {
      while (registered < endpoints) {
        const i = registered++;
        const reg = await post('/webhooks/register', { url: `http://127.0.0.1:${port}/hook/${i}` }, key);
        receivers.postMessage({ endpoint: String(i), secret: reg.value.registration.secretOnce });
        const sub = { endpointId: reg.value.registration.id, eventTypes: ['Signing.quoted'] };
        await post('/webhooks/subscribe', sub, key);
      }
    }),
  );
  const started = Date.now();
  if (eventsPerSecond) {
    // Paced: one event every 1/eventsPerSecond s, so the latency is the one at that delivery rate, not a backlog's.
    const emits: Promise<unknown>[] = [];
    for (let i = 0; i < events; i++) {
      emits.push(post('/signings/quote', {}, key));
      await new Promise((r) => setTimeout(r, Math.max(0, started + ((i + 1) * 1000) / eventsPerSecond - Date.now())));
    }
    await Promise.all(emits);
  } else {
    // A burst: callers emit at once (EMIT_CONCURRENCY at a time), so the figure is the sender's rate, not one caller's pace.
    let emitted = 0;
    await Promise.all(
      Array.from({ length: EMIT_CONCURRENCY }, async () => {
        while (emitted < events) {
          emitted++;
          await post('/signings/quote', {}, key);
        }
      }),
    );
  }
  const expected = endpoints * events;
  while (latencies.length + bad < expected && Date.now() - started < 120_000)
    await new Promise((r) => setTimeout(r, 50));
  const seconds = (last - started) / 1000;
  console.log(
    JSON.stringify({
      endpoints,
      events,
      mode: eventsPerSecond ? `paced at ${eventsPerSecond * endpoints} deliveries/s` : 'burst',
      deliveries: latencies.length,
      expected,
      signatureFailures: bad,
      deliveredPerSecond: Math.round(latencies.length / seconds),
      p50Ms: pct(latencies, 50),
      p99Ms: pct(latencies, 99),
    }),
  );
  await receivers.terminate();
}

await run(1, Number(process.env.BENCH_EVENTS_1 ?? 300));
await run(MANY, Number(process.env.BENCH_EVENTS_100 ?? 30));
// The goal's latency is at 2,000 deliveries/s: 20 events a second to 100 endpoints (BENCH_ENDPOINTS), for
// BENCH_PACED_SECONDS.
await run(MANY, Math.round(20 * Number(process.env.BENCH_PACED_SECONDS ?? 5)), 20);
await svc.stop();
process.exit(0);
