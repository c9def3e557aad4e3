import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { createPayment, startRail, type Rail } from '@vcs/x402-rail';
import { embeddedConfig, startEmbedded } from '@vcs/embedded';
import { EVENT_STREAM } from '@vcs/contract';
import { createLogger, parseSettings, type MemoryBus } from '@vcs/platform';
import { countStatements } from './support/count-statements.ts';
import {
  distributedEnv,
  serversFor,
  startDistributedHarness,
  TEST_RATE_LIMITS,
  type Harness,
} from './support/harness.ts';
import { railSettings } from './support/money.ts';
import { PAID_CALL_BUDGET } from './support/paid-call-budget.ts';
import { startPgCountProxy, type PgCountProxy } from './support/pg-count-proxy.ts';
import { privateNats, type PrivateServer } from './support/private-infra.ts';

// What one paid call costs in round trips to the store and in bus messages, counted on a real store (PGlite; Postgres
// through a counting proxy) and a real bus (in-process; a NATS of the test's own, read through its monitoring port),
// against the ceilings docs/performance.md states (support/paid-call-budget.ts).
const VIN = '1HGCM82633A004352';
const CALLS = 10;
/** Then paid calls `AT_ONCE` at a time: the relays' work per call when commits share their windows. */
const BURST = 20;
const AT_ONCE = 10;
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');
const unb64 = (s: string) => JSON.parse(Buffer.from(s, 'base64').toString('utf8'));
/**
 * Polls on a timer, which run whatever the traffic, are not counted: the relays' look for pending rows (4 a second per
 * relay), the webhook sender's look for due deliveries (WEBHOOK_POLL_MS) and commerce's reconciler's scans.
 */
const TIMED = [
  /^select 1 from outbox_events\s+where published_at is null/,
  /^select 1 from webhook_deliveries\s+where status = 'pending'/,
  /^select id from payments\s+where status = 'unknown'/,
  /^select id\b[^;]*? from executions\s+where status in \('running', 'ready'\)/,
];
const timedLook = (sql: string) => TIMED.some((t) => t.test(sql));
/** The relays' statements: a claim, a mark, the sole relay's read that marks the batch before. */
const relayStatement = (sql: string) => /^(with marked as \(update|update) outbox_events/.test(sql);
const relayCount = (texts: Iterable<[string, number]>) =>
  [...texts].reduce((n, [sql, k]) => n + (relayStatement(sql) ? k : 0), 0);
const per = (n: number) => Math.round((n / CALLS) * 10) / 10;

/** `BURST` paid calls, `AT_ONCE` at a time, with the payers after the first `CALLS + 1`. */
async function burst(base: string, rail: Rail) {
  let next = 0;
  const worker = async () => {
    while (next < BURST) await paidCall(base, rail, CALLS + 1 + next++);
  };
  await Promise.all(Array.from({ length: AT_ONCE }, worker));
}

/** One paid call, its 402 leg first, answered 200. */
async function paidCall(base: string, rail: Rail, payer: number) {
  const quote = (headers: Record<string, string> = {}) =>
    fetch(`${base}/signings/quote`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ vin: VIN }),
    });
  const offer = await quote();
  expect(offer.status).toBe(402);
  const required = unb64(offer.headers.get('payment-required')!);
  const payment = await createPayment(rail.payerKeys[payer]!, required.accepts[0], required.resource);
  const paid = await quote({ 'payment-signature': b64(payment) });
  expect(paid.status, await paid.clone().text()).toBe(200);
  await paid.arrayBuffer();
}

describe('round trips and messages per paid call (embedded: PGlite and the in-process bus)', () => {
  let rail: Rail;
  let svc: Awaited<ReturnType<typeof startEmbedded>>;
  let base: string;
  beforeAll(async () => {
    rail = await startRail({ payers: CALLS + 1 + BURST });
    svc = await startEmbedded({
      pgliteDir: 'memory://',
      log: createLogger('test', 'silent'),
      rateLimits: TEST_RATE_LIMITS,
      settings: parseSettings(embeddedConfig, { ...process.env, ...railSettings(rail) }),
    });
    base = await svc.app.listen({ port: 0, host: '127.0.0.1' });
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
    await rail?.stop();
  });

  const budget = PAID_CALL_BUDGET.embedded;
  it('stays within its statements and bus messages; no event reaches workflows', async () => {
    const bus = svc.infra.bus as MemoryBus;
    // One call first, uncounted: caches, the first block.
    await paidCall(base, rail, CALLS);
    await svc.settled();
    const statements = countStatements(svc.infra.db, timedLook);
    let messages = 0;
    const request = bus.request.bind(bus);
    const publish = bus.publishEvent.bind(bus);
    bus.request = (...a) => ((messages += 2), request(...a)); // the request and its reply
    bus.publishEvent = (...a) => (messages++, publish(...a));
    const delivered = () => [...bus.deliveredTo.values()].reduce((a, b) => a + b, 0);
    const [d0, w0] = [delivered(), bus.deliveredTo.get('workflows-deals') ?? 0];
    for (let i = 0; i < CALLS; i++) {
      await paidCall(base, rail, i);
      await svc.settled();
    }
    const relay = relayCount(statements.texts);
    const counts = {
      stepStatements: per(statements.n - relay),
      relayStatements: per(relay),
      busMessages: per(messages + delivered() - d0),
      toWorkflows: (bus.deliveredTo.get('workflows-deals') ?? 0) - w0,
    };
    console.log('embedded, per paid call:', JSON.stringify(counts));
    expect(counts.toWorkflows).toBe(0);
    expect(counts.stepStatements).toBeLessThanOrEqual(budget.stepStatements);
    expect(counts.relayStatements).toBeLessThanOrEqual(budget.relayStatements);
    expect(counts.busMessages).toBeLessThanOrEqual(budget.busMessages);
    const relayBefore = relayCount(statements.texts);
    await burst(base, rail);
    await svc.settled();
    const relayPerCall = Math.round(((relayCount(statements.texts) - relayBefore) / BURST) * 10) / 10;
    console.log(`embedded, ${AT_ONCE} at a time: relay statements per paid call ${relayPerCall}`);
    expect(relayPerCall).toBeLessThanOrEqual(budget.relayStatements);
  }, 120_000);
});

const SERVICES = ['gateway', 'commerce', 'services-pillar', 'workflows', 'data'] as const;

/** Messages each process's connection has sent and received so far (the server's `/connz`), by connection name. */
async function natsMessages(monitorUrl: string): Promise<Record<string, number>> {
  const { connections } = (await (await fetch(`${monitorUrl}/connz?limit=1024`)).json()) as {
    connections: { name?: string; in_msgs: number; out_msgs: number }[];
  };
  const out: Record<string, number> = {};
  for (const c of connections) out[c.name ?? ''] = (out[c.name ?? ''] ?? 0) + c.in_msgs + c.out_msgs;
  return out;
}

const diff = (a: Record<string, number>, b: Record<string, number>) =>
  Object.fromEntries(SERVICES.map((s) => [s, (b[s] ?? 0) - (a[s] ?? 0)]));

describe.skipIf(!serversFor('paid-call count suite (distributed)'))(
  'round trips and messages per paid call (distributed: Postgres and NATS)',
  () => {
    let rail: Rail;
    let nats: PrivateServer;
    let proxy: PgCountProxy;
    let h: Harness;
    let nc: NatsConnection;
    let database: string;
    beforeAll(async () => {
      rail = await startRail({ payers: CALLS + 1 + BURST });
      nats = await privateNats({ monitor: true });
      const shared = new URL(distributedEnv()!.DATABASE_URL);
      proxy = await startPgCountProxy({ host: shared.hostname, port: Number(shared.port || 5432) }, timedLook);
      database = `vcs_counts_${Date.now().toString(36)}`;
      const admin = new pg.Client({ connectionString: shared.toString() });
      await admin.connect();
      await admin.query(`create database ${database}`);
      await admin.end();
      const viaProxy = new URL(shared);
      viaProxy.host = `127.0.0.1:${proxy.port}`;
      viaProxy.pathname = `/${database}`;
      h = await startDistributedHarness({
        env: { ...railSettings(rail), NATS_URL: nats.url, DATABASE_URL: viaProxy.toString() },
      });
      nc = await connect({ servers: nats.url, name: 'counter' });
    }, 180_000);
    afterAll(async () => {
      await nc?.close();
      await h?.stop();
      await proxy?.close();
      await nats?.destroy();
      await rail?.stop();
      const admin = new pg.Client({ connectionString: distributedEnv()!.DATABASE_URL });
      await admin.connect();
      await admin.query(`drop database if exists ${database} with (force)`).catch(() => undefined);
      await admin.end();
    });

    it('stays within its round trips and NATS messages; workflows and data take no part', async () => {
      const stream = `${EVENT_STREAM}_${h.env!.NATS_NAMESPACE}`;
      const jsm = await jetstreamManager(nc);
      const deliveredTo = async (durable: string) => (await jsm.consumers.info(stream, durable)).delivered.consumer_seq;
      await paidCall(h.baseUrl, rail, CALLS);
      await h.settled();
      // The messages of an idle fleet (pull heartbeats, pull renewals) over as long as the calls take: taken off.
      const t0 = Date.now();
      const [pg0, n0, w0] = [
        proxy.counts(),
        await natsMessages(nats.monitorUrl!),
        await deliveredTo('workflows-deals'),
      ];
      for (let i = 0; i < CALLS; i++) {
        await paidCall(h.baseUrl, rail, i);
        await h.settled();
      }
      const [pg1, n1, w1] = [
        proxy.counts(),
        await natsMessages(nats.monitorUrl!),
        await deliveredTo('workflows-deals'),
      ];
      const took = Date.now() - t0;
      const idle0 = await natsMessages(nats.monitorUrl!);
      await new Promise((r) => setTimeout(r, took));
      const idle = diff(idle0, await natsMessages(nats.monitorUrl!));
      const calls = diff(n0, n1);
      const budget = PAID_CALL_BUDGET.distributed;
      const texts = (c: typeof pg0, s: string) => Object.entries(c[`vcs-${s}`]?.texts ?? {});
      const relayOf = (s: string) => relayCount(texts(pg1, s)) - relayCount(texts(pg0, s));
      const tripsOf = (s: string) => (pg1[`vcs-${s}`]?.roundTrips ?? 0) - (pg0[`vcs-${s}`]?.roundTrips ?? 0);
      const stepRoundTrips = Object.fromEntries(SERVICES.map((s) => [s, per(tripsOf(s) - relayOf(s))]));
      const relayRoundTrips = Object.fromEntries(SERVICES.map((s) => [s, per(relayOf(s))]));
      const messages = Object.fromEntries(SERVICES.map((s) => [s, per(Math.max(0, calls[s]! - idle[s]!))]));
      const sum = (r: Record<string, number>) => Math.round(Object.values(r).reduce((a, b) => a + b, 0) * 10) / 10;
      console.log(
        'distributed, per paid call:',
        JSON.stringify({ stepRoundTrips, relayRoundTrips, messages, idle, tookMs: took }),
      );
      expect(w1 - w0, 'events delivered to workflows').toBe(0);
      for (const s of SERVICES)
        expect(stepRoundTrips[s], `${s}'s round trips`).toBeLessThanOrEqual(budget.stepRoundTrips[s]);
      expect(sum(relayRoundTrips)).toBeLessThanOrEqual(budget.relayRoundTrips);
      // Heartbeats were taken off by an idle measurement, so the sum carries a few tenths of noise.
      expect(Math.round(sum(messages))).toBeLessThanOrEqual(budget.natsMessages);
      for (const s of budget.untouched) {
        expect(tripsOf(s), `${s}'s round trips`).toBe(0);
        // Its idle traffic (pull renewals and their answers, heartbeats of each of its consumers) only, some of which
        // fall either side of a window's edge. Taking part would be at least a message for each call (an
        // event delivered, its ack): CALLS or more.
        expect(Math.max(0, calls[s]! - idle[s]!), `${s}'s NATS messages beyond its idle ones`).toBeLessThan(CALLS / 2);
      }
      const relayBefore = SERVICES.reduce((n, s) => n + relayCount(texts(proxy.counts(), s)), 0);
      await burst(h.baseUrl, rail);
      await h.settled();
      const relayAfter = SERVICES.reduce((n, s) => n + relayCount(texts(proxy.counts(), s)), 0);
      const relayPerCall = Math.round(((relayAfter - relayBefore) / BURST) * 10) / 10;
      console.log(`distributed, ${AT_ONCE} at a time: relay round trips per paid call ${relayPerCall}`);
      expect(relayPerCall).toBeLessThanOrEqual(budget.relayRoundTrips);
    }, 180_000);
  },
);
