/**
 * Webhook delivery benchmark (not a test): embedded service, local receivers, events emitted by
 * signing.quote. Prints delivered events/s and p50/p99 from emit (the event's occurredAt) to a
 * verified receipt, with 1 and with 100 endpoints.   pnpm bench:webhooks
 * Both webhook.register and signing.quote are offer-gated: every call carries `Accept-Price`, so each
 * offer is settled in the same request (docs/money.md) and the answer is the capability's own.
 */
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { createLogger } from '@vcs/platform';

process.env.WEBHOOK_ALLOW_PRIVATE_TARGETS = 'true';
process.env.WEBHOOK_POLL_MS ??= '50';
const { startEmbedded } = await import('@vcs/embedded');

const pct = (xs: number[], p: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN; };

async function run(endpoints: number, events: number) {
  const svc = await startEmbedded({ pgliteDir: 'memory://', log: createLogger('bench', 'silent') });
  const base = await svc.app.listen({ port: 0, host: '127.0.0.1' });
  const secrets = new Map<string, Webhook>();
  const latencies: number[] = [];
  let first = 0; let last = 0; let bad = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      const now = Date.now();
      try {
        const evt = secrets.get(req.url!.slice(6))!.verify(body, req.headers as Record<string, string>) as { occurredAt: string };
        latencies.push(now - Date.parse(evt.occurredAt));
        first ||= now; last = now;
      } catch { bad++; }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  const post = async (path: string, body: unknown, key?: string) => {
    const headers = { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}`, 'accept-price': '1000.00 USD' } : {}) };
    const res = await fetch(base + path, { method: 'POST', headers, body: JSON.stringify(body) });
    const answer = await res.json() as any;
    // A refused call would otherwise surface later as a missing member; say which call and why.
    if (!res.ok) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(answer.value ?? answer)}`);
    return answer;
  };
  const { key } = await post('/keys', {});
  for (let i = 0; i < endpoints; i++) {
    const reg = await post('/webhooks/register', { url: `http://127.0.0.1:${port}/hook/${i}` }, key);
    secrets.set(String(i), new Webhook(reg.value.registration.secretOnce));
    await post('/webhooks/subscribe', { endpointId: reg.value.registration.id, eventTypes: ['Signing.quoted'] }, key);
  }
  const started = Date.now();
  for (let i = 0; i < events; i++) await post('/signings/quote', {}, key);
  const expected = endpoints * events;
  while (latencies.length + bad < expected && Date.now() - started < 120_000) await new Promise((r) => setTimeout(r, 50));
  const seconds = (last - started) / 1000;
  console.log(JSON.stringify({
    endpoints, events, deliveries: latencies.length, expected, signatureFailures: bad,
    deliveredPerSecond: Math.round(latencies.length / seconds), p50Ms: pct(latencies, 50), p99Ms: pct(latencies, 99),
  }));
  server.close();
  await svc.stop();
}

await run(1, Number(process.env.BENCH_EVENTS_1 ?? 300));
await run(100, Number(process.env.BENCH_EVENTS_100 ?? 30));
process.exit(0);
