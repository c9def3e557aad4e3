/**
 * The distributed processes on a three-node NATS cluster (Debian's nats-server, started by test/support/nats-cluster.ts)
 * with a 3-replica event stream: under a light keyed write load (8 webhook.emit a second, each naming its own VIN,
 * delivered to a real receiver), the stream leader, then a consumer's leader, then the node the gateway is
 * connected to is killed -9 and later started again. Counted: every answered write's event delivered exactly once
 * (matched by VIN and event id, as the compose suite does), at most the writes in flight at a kill refused, no
 * process restarted, and how long events took to flow again. Needs Postgres and Redis (DATABASE_URL, REDIS_URL).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_STREAM, expectedCheckDigit } from '@vcs/contract';
import { call, distributedEnv, mintKey, startDistributedHarness, waitFor, type Harness } from './support/harness.ts';
import { natsServerInstalled, startNatsCluster, type NatsCluster } from './support/nats-cluster.ts';
import { startReceiver } from './support/receiver.ts';

process.env.WEBHOOK_ALLOW_PRIVATE_TARGETS = 'true';
process.env.WEBHOOK_RETRY_SCHEDULE_MS = ['0', ...Array(30).fill('1000')].join(',');

const runs = !!distributedEnv() && natsServerInstalled();
if (!runs) console.warn('nats-cluster suite skipped: needs DATABASE_URL, REDIS_URL (and NATS_URL) and /usr/sbin/nats-server');

const vinNo = (n: number) => { const v = `1HGCM8260${String(n).padStart(8, '0')}`; return v.slice(0, 8) + expectedCheckDigit(v) + v.slice(9); };
const paid = (base: string, path: string, key: string, body: unknown) => call(base, 'POST', path, { key, body, headers: { 'accept-price': '1000.00 USD' } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number) => { const s = [...xs].sort((a, b) => a - b); return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]! : 0; };

describe.skipIf(!runs)('on a three-node NATS cluster with a 3-replica event stream', () => {
  let cluster: NatsCluster;
  let h: Harness;
  beforeAll(async () => {
    cluster = await startNatsCluster(3);
    h = await startDistributedHarness({ env: { NATS_URL: cluster.urls, EVENT_STREAM_REPLICAS: '3' } });
  }, 120_000);
  afterAll(async () => {
    await h?.stop();
    await cluster?.destroy();
  }, 60_000);

  it('loses a node three times under load (stream leader, a consumer leader, the gateway\'s node): 0 lost, 0 doubled, flowing again in seconds', async () => {
    const stream = `${EVENT_STREAM}_${h.env!.NATS_NAMESPACE}`;
    const rx = await startReceiver();
    const { key } = await mintKey(h.baseUrl);
    const reg = await paid(h.baseUrl, '/webhooks/register', key, { url: rx.url });
    expect(reg.status).toBe(200);
    const endpointId = reg.json.value.registration.id;
    expect((await paid(h.baseUrl, '/webhooks/subscribe', key, { endpointId, eventTypes: ['TotalLoss.*'] })).status).toBe(200);

    // 8 writes a second, each on its own (a slow one does not hold back the next).
    const writes: { vin: string; sent: number; answered?: number; status?: number; code?: string }[] = [];
    let n = 0;
    const inflight = new Set<Promise<void>>();
    const ticker = setInterval(() => {
      const w: (typeof writes)[number] = { vin: vinNo(++n), sent: Date.now() };
      writes.push(w);
      const p = paid(h.baseUrl, '/webhooks/emit', key, { vin: w.vin, endpointId })
        .then((r) => { w.status = r.status; w.code = r.json?.value?.code; }, () => { w.status = 0; })
        .finally(() => { w.answered = Date.now(); inflight.delete(p); });
      inflight.add(p);
    }, 125);

    const firstDelivery = () => {
      const m = new Map<string, { ids: Set<string>; at: number }>();
      for (const r of rx.received) {
        const e = JSON.parse(r.body) as { id: string; type: string; vin: string };
        if (e.type !== 'Webhook.emitted@1') continue;
        const seen = m.get(e.vin) ?? { ids: new Set<string>(), at: r.at };
        seen.ids.add(e.id); seen.at = Math.min(seen.at, r.at);
        m.set(e.vin, seen);
      }
      return m;
    };

    // Each kill: when the stream and the services pillar's consumer have leaders on live nodes again (polled every
    // 250 ms), and when the first event written after the kill reached the receiver.
    const phases: { target: string; node: string; killedAt: number; streamAt?: number; consumerAt?: number; flowingAt?: number }[] = [];
    const leaders = () => cluster.leaders(stream, 'services-events').catch(() => ({} as { stream?: string; consumer?: string }));
    try {
      await sleep(4000);
      for (const target of ['stream leader', 'consumer leader', 'gateway\'s node'] as const) {
        let l = await leaders();
        const gatewayOn = (await cluster.connectedNodesOf('gateway'))[0];
        // The consumer's leader alone: moved off the stream leader's node and the gateway's (a step-down elects another).
        for (let i = 0; target === 'consumer leader' && i < 6 && (l.consumer === l.stream || l.consumer === gatewayOn); i++) {
          await cluster.stepDownConsumer(stream, 'services-events').catch(() => undefined);
          await sleep(1500);
          l = await leaders();
        }
        const node = target === 'stream leader' ? l.stream! : target === 'consumer leader' ? l.consumer! : gatewayOn!;
        expect(node, `${target}: ${JSON.stringify({ ...l, gatewayOn })}`).toMatch(/^n\d$/);
        const phase: (typeof phases)[number] = { target: `${target}: ${node} (stream leader ${l.stream}, services-events leader ${l.consumer}, gateway on ${gatewayOn})`, node, killedAt: Date.now() };
        phases.push(phase);
        await cluster.node(node).kill('SIGKILL');
        const until = Date.now() + 25_000;
        const watchLeaders = (async () => {
          while (Date.now() < until && (!phase.streamAt || !phase.consumerAt)) {
            const now = await leaders();
            if (!phase.streamAt && now.stream && now.stream !== node) phase.streamAt = Date.now();
            if (!phase.consumerAt && now.consumer && now.consumer !== node) phase.consumerAt = Date.now();
            await sleep(250);
          }
        })();
        while (Date.now() < until && !phase.flowingAt) {
          const got = firstDelivery();
          const after = writes.find((w) => w.sent > phase.killedAt && w.status === 200 && got.has(w.vin));
          if (after) phase.flowingAt = got.get(after.vin)!.at;
          await sleep(100);
        }
        await watchLeaders;
        await sleep(Math.max(0, phase.killedAt + 15_000 - Date.now()));
        await cluster.node(node).start();
        await sleep(8000);
      }
    } finally {
      clearInterval(ticker);
      await Promise.all(inflight);
    }

    const answered = writes.filter((w) => w.status === 200);
    const failed = writes.filter((w) => w.status !== 200);
    await waitFor(async () => { const got = firstDelivery(); return answered.every((w) => got.has(w.vin)); }, 90_000, 500).catch(() => undefined);
    await sleep(3000); // a doubled event would have arrived by now
    const got = firstDelivery();
    const delays = answered.filter((w) => got.has(w.vin)).map((w) => Math.max(0, got.get(w.vin)!.at - w.answered!));
    const figures = {
      writes: writes.length, answered: answered.length, refused: failed.map((w) => `${w.status} ${w.code ?? ''}`.trim()),
      lost: answered.filter((w) => !got.has(w.vin)).length,
      doubled: [...got.values()].filter((s) => s.ids.size > 1).length,
      delayMs: { p50: pct(delays, 50), p99: pct(delays, 99), max: Math.max(0, ...delays) },
      phases: phases.map((p) => {
        const electedAt = p.streamAt && p.consumerAt ? Math.max(p.streamAt, p.consumerAt) : undefined;
        const around = answered.filter((w) => w.sent >= p.killedAt - 2000 && w.sent <= p.killedAt + 15_000 && got.has(w.vin));
        return {
          target: p.target, streamLeaderAfterMs: p.streamAt ? p.streamAt - p.killedAt : null, consumerLeaderAfterMs: p.consumerAt ? p.consumerAt - p.killedAt : null,
          flowingAfterMs: p.flowingAt ? p.flowingAt - p.killedAt : null,
          flowingAfterElectionMs: p.flowingAt && electedAt ? p.flowingAt - electedAt : null,
          maxDelayMs: Math.max(0, ...around.map((w) => got.get(w.vin)!.at - w.answered!)),
        };
      }),
    };
    console.log(`nats-cluster figures: ${JSON.stringify(figures, null, 2)}`);
    await rx.close();

    expect(figures.lost).toBe(0);
    expect(figures.doubled).toBe(0);
    // No id for a VIN nobody wrote, and a refused write committed at most one event.
    const written = new Set(writes.map((w) => w.vin));
    expect([...got.keys()].filter((v) => !written.has(v))).toEqual([]);
    // At most the writes in flight at each kill are refused, each as a typed 503.
    expect(failed.length).toBeLessThanOrEqual(2 * phases.length);
    expect(failed.filter((w) => w.status !== 503)).toEqual([]);
    // No process restarted: every one the harness started is still running.
    expect([...h.procs!.values()].flat().filter((c) => c.exitCode !== null || c.signalCode !== null).length).toBe(0);
    expect(figures.delayMs.p99).toBeLessThanOrEqual(15_000);
    // The gateway says what happened to it: it moved to another node once its own was killed, and is ready again.
    const metrics = (await call(h.baseUrl, 'GET', '/metrics')).text;
    expect(Number(/^vcs_nats_reconnects_total (\d+)/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1);
    expect(metrics).toMatch(/^vcs_nats_connected 1$/m);
    expect(metrics).toMatch(/^vcs_outbox_lag_seconds 0$/m);
    expect((await call(h.baseUrl, 'GET', '/readyz')).status).toBe(200);
    for (const p of figures.phases) {
      expect(p.flowingAfterMs, p.target).not.toBeNull();
      if (p.flowingAfterElectionMs !== null) expect(p.flowingAfterElectionMs, p.target).toBeLessThanOrEqual(10_000);
    }
  }, 240_000);
});
