import { createServer } from 'node:net';
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { EVENT_STREAM } from '@vcs/contract';
import { createLogger, createRedisKv, ManualClock, NatsBus, type Clock, type Logger } from '@vcs/platform';
import { startEmbedded } from '@vcs/embedded';
import { trustProxySetting } from '../../services/gateway/src/config.ts';
import { PILLAR_SERVICES, spawnService, type ServiceName } from '../../deploy/launch.ts';

/** A running service under test, reached only over real HTTP. */
export interface Harness {
  mode: 'embedded' | 'distributed';
  baseUrl: string;
  stop(): Promise<void>;
  /** Distributed only: the OS processes by service, and ways to stop and start them. */
  procs?: Map<ServiceName, ChildProcess[]>;
  kill?(service: ServiceName, signal?: NodeJS.Signals): Promise<void>;
  /** Start one more process of `service`; `env` overrides the run's settings for it alone (NATS_URL, say). */
  start?(service: ServiceName, env?: Record<string, string>): Promise<void>;
  /** Distributed only: start one more gateway process on its own port; resolves to its base URL once ready. */
  startGateway?(): Promise<string>;
  env?: Record<string, string>;
  /** Run SQL against the service's own database (PGlite or Postgres), for tests that inspect stored rows. */
  sql(text: string, params?: unknown[]): Promise<any[]>;
  /**
   * Resolves once what has been written so far has gone through: every outbox row published, every event handled
   * by every consumer, no webhook delivery due or in flight (a retry scheduled for later is not due). Embedded: the
   * relay's, bus's and sender's own `onIdle` signals; distributed: the stores asked until they say so twice.
   */
  settled(): Promise<void>;
}

/**
 * Tests call one harness from one address many times a minute; unless a test asks for limits,
 * the harness sets them high so only the rate-limit tests meet them.
 */
export const TEST_RATE_LIMITS = { sandbox: 100_000, live: 100_000, anonymous: 100_000, mint: 100_000 };
const rateLimitEnv = (l: typeof TEST_RATE_LIMITS) => ({
  RATE_LIMIT_SANDBOX_PER_MIN: String(l.sandbox),
  RATE_LIMIT_LIVE_PER_MIN: String(l.live),
  RATE_LIMIT_ANON_PER_MIN: String(l.anonymous),
  RATE_LIMIT_MINT_PER_MIN: String(l.mint),
});

export function distributedEnv() {
  const { NATS_URL, DATABASE_URL, REDIS_URL } = process.env;
  if (NATS_URL && DATABASE_URL && REDIS_URL) return { NATS_URL, DATABASE_URL, REDIS_URL };
  if (process.env.CI) throw new Error('CI must run the distributed tests: set NATS_URL, DATABASE_URL and REDIS_URL');
  return null;
}

const SERVER_OF = { NATS_URL: 'NATS with JetStream', DATABASE_URL: 'Postgres', REDIS_URL: 'Redis' } as const;

/**
 * Whether a suite that needs real servers runs here. When it does not, one line names the suite and what it needs (as
 * the compose and Chromium suites say theirs), so no run skips tests silently; in CI missing servers fail the run
 * instead. `describe.runIf(serversFor('store suite'))(…)`.
 */
export function serversFor(
  suite: string,
  needs: (keyof typeof SERVER_OF)[] = ['NATS_URL', 'DATABASE_URL', 'REDIS_URL'],
): boolean {
  const missing = needs.filter((k) => !process.env[k]);
  if (missing.length && process.env.CI) throw new Error(`CI must run the ${suite}: set ${missing.join(', ')}`);
  if (missing.length)
    console.warn(
      `${suite} skipped: it needs ${missing.map((k) => `${k} (${SERVER_OF[k]})`).join(', ')}; see DEVELOPERS.md`,
    );
  return missing.length === 0;
}

/** The modes a suite runs in: always embedded, and distributed wherever the servers are given. */
export function modes(): ('embedded' | 'distributed')[] {
  return distributedEnv() ? ['embedded', 'distributed'] : ['embedded'];
}

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as any).port;
      s.close(() => resolve(p));
    });
  });
}

export interface HarnessOptions {
  clock?: Clock;
  busTimeoutMs?: number;
  replicas?: Partial<Record<ServiceName, number>>;
  env?: Record<string, string>;
  rateLimits?: Partial<typeof TEST_RATE_LIMITS>;
  /** Embedded only: the logger every service in the process writes to (tests capture lines with it). */
  log?: Logger;
}

export async function startHarness(mode: 'embedded' | 'distributed', opts: HarnessOptions = {}): Promise<Harness> {
  return mode === 'embedded' ? startEmbeddedHarness(opts) : startDistributedHarness(opts);
}

export async function startEmbeddedHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const svc = await startEmbedded({
    pgliteDir: 'memory://',
    log: opts.log ?? createLogger('test', 'silent'),
    clock: opts.clock,
    busTimeoutMs: opts.busTimeoutMs,
    rateLimits: { ...TEST_RATE_LIMITS, ...(opts.rateLimits ?? {}) },
    // The one gateway setting a test passes by env in both modes.
    trustProxy: trustProxySetting.parse(opts.env?.TRUST_PROXY ?? ''),
  });
  const address = await svc.app.listen({ port: 0, host: '127.0.0.1' });
  return {
    mode: 'embedded',
    baseUrl: address,
    stop: () => svc.stop(),
    sql: async (text, params = []) => (await svc.infra.db.query(text, params)).rows,
    settled: () => svc.settled(),
  };
}

/**
 * A fresh database, Redis prefix and NATS namespace per run, so runs never see each other. A run that brings its
 * own database (a fault suite's private Postgres) gets none made on the shared server: nothing would drop it.
 */
export async function freshStores(ownDatabaseUrl?: string): Promise<Record<string, string>> {
  const env = distributedEnv();
  if (!env) throw new Error('distributed mode needs NATS_URL, DATABASE_URL and REDIS_URL');
  const tag = `t${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const stores = {
    ...env,
    REDIS_PREFIX: `vcs:${tag}:`,
    NATS_NAMESPACE: tag,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
  };
  if (ownDatabaseUrl) return { ...stores, DATABASE_URL: ownDatabaseUrl };
  const admin = new pg.Client({ connectionString: env.DATABASE_URL });
  await admin.connect();
  await admin.query(`create database vcs_${tag}`);
  await admin.end();
  const url = new URL(env.DATABASE_URL);
  url.pathname = `/vcs_${tag}`;
  return { ...stores, DATABASE_URL: url.toString() };
}

// Generous on purpose: on a loaded CI machine seven tsx processes take a while to start.
const READY_MS = Number(process.env.HARNESS_READY_MS ?? 60_000);

async function waitReady(url: string, timeoutMs = READY_MS) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      const r = await fetch(url);
      if (r.status < 500) return;
    } catch {
      /* not yet listening */
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`not ready: ${url}`);
}

/**
 * Every pillar answers (not a 503) before a harness is handed over: services, data, commerce and workflows each
 * through a route it serves. A fleet of processes starts in any order, and a test must not meet a pillar still booting.
 */
async function waitPillarsReady(baseUrl: string) {
  const VIN = '1HGCM82633A004352';
  await waitFor(async () => (await fetch(`${baseUrl}/signings/status?vin=${VIN}`)).status === 200, READY_MS);
  await waitFor(async () => (await fetch(`${baseUrl}/mcos/status?vin=${VIN}`)).status === 200, READY_MS);
  let key = '';
  await waitFor(async () => {
    const r = await fetch(`${baseUrl}/keys`, { method: 'POST' });
    if (r.status === 200) key = ((await r.json()) as { key: string }).key;
    return r.status === 200;
  }, READY_MS);
  // An unknown deal is a 404 from workflows itself; a 503 means no workflows replica has subscribed yet.
  await waitFor(
    async () =>
      (await fetch(`${baseUrl}/buy/deals/deal_ready`, { headers: { authorization: `Bearer ${key}` } })).status === 404,
    READY_MS,
  );
}

export async function startDistributedHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const port = await freePort();
  const env: Record<string, string> = {
    ...(await freshStores(opts.env?.DATABASE_URL)),
    PORT: String(port),
    HOST: '127.0.0.1',
    BUS_TIMEOUT_MS: String(opts.busTimeoutMs ?? 3000),
    ...rateLimitEnv({ ...TEST_RATE_LIMITS, ...(opts.rateLimits ?? {}) }),
    ...(opts.env ?? {}),
  };
  const procs = new Map<ServiceName, ChildProcess[]>();
  const startOne = (s: ServiceName, extra: Record<string, string> = {}) => {
    const child = spawnService(s, { ...env, ...extra }, 'pipe');
    let out = '';
    child.stderr?.on('data', (d) => {
      out += d;
      if (out.length > 20_000) out = out.slice(-10_000);
    });
    child.on('exit', (code) => {
      if (code && code !== 0 && code !== 143 && code !== 130) process.stderr.write(`[${s}] exited ${code}\n${out}\n`);
    });
    const list = procs.get(s) ?? [];
    list.push(child);
    procs.set(s, list);
    return child;
  };
  // Migrations run once before the fleet starts (each process also checks, under an advisory lock).
  for (const s of PILLAR_SERVICES) for (let i = 0; i < (opts.replicas?.[s] ?? 1); i++) startOne(s);
  startOne('gateway');
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    await waitReady(`${baseUrl}/signings/status`);
    await waitPillarsReady(baseUrl);
  } catch (err) {
    // A fleet that never became ready must not outlive the test run.
    for (const c of [...procs.values()].flat()) c.kill('SIGKILL');
    await dropDatabase(env.DATABASE_URL).catch(() => undefined);
    throw err;
  }
  return {
    mode: 'distributed',
    baseUrl,
    procs,
    env,
    async kill(service, signal = 'SIGKILL') {
      const list = procs.get(service) ?? [];
      const c = list.shift();
      if (!c) return;
      c.kill(signal);
      await exited(c);
    },
    async start(service, extra = {}) {
      startOne(service, extra);
    },
    async startGateway() {
      const p = await freePort();
      startOne('gateway', { PORT: String(p) });
      const url = `http://127.0.0.1:${p}`;
      await waitReady(`${url}/signings/status`);
      return url;
    },
    sql: async (text, params = []) => {
      const c = new pg.Client({ connectionString: env.DATABASE_URL });
      await c.connect();
      try {
        return (await c.query(text, params as any[])).rows;
      } finally {
        await c.end();
      }
    },
    settled: () => storesSettled(env),
    async stop() {
      const all = [...procs.values()].flat();
      for (const c of all) c.kill('SIGTERM');
      await Promise.race([Promise.all(all.map(exited)), new Promise((r) => setTimeout(r, 8000))]);
      for (const c of all) if (c.exitCode === null) c.kill('SIGKILL');
      await dropStores(env);
    },
  };
}

/**
 * Remove what freshStores made for a run: its database, event stream and Redis keys. Side by side, so one slow
 * clean-up does not keep the others from running within a hook's time. Only on the shared NATS and Redis: private
 * ones (fault suites) go away with their data. Never throws.
 */
export async function dropStores(env: Record<string, string>) {
  await Promise.allSettled([
    dropDatabase(env.DATABASE_URL!),
    env.NATS_URL === process.env.NATS_URL ? dropStream(env.NATS_URL!, env.NATS_NAMESPACE!) : undefined,
    env.REDIS_URL === process.env.REDIS_URL ? dropRedisKeys(env.REDIS_URL!, env.REDIS_PREFIX!) : undefined,
  ]);
}

/** A run's event stream goes with the run too (the shared NATS would otherwise keep one per run for 7 days). */
async function dropStream(url: string, namespace: string) {
  const bus = await NatsBus.connect(url, 'harness-cleanup', namespace);
  try {
    await bus.deleteStream();
  } finally {
    await bus.drain();
  }
}

/** And its Redis keys (meters keep no expiry): one run left ~170 behind on the shared Redis. */
async function dropRedisKeys(url: string, prefix: string) {
  if (!/^vcs:t[a-z0-9]+:$/.test(prefix)) return; // only the prefixes freshStores made
  const kv = createRedisKv(url);
  const redis = kv.redis!;
  try {
    // The client queues nothing while it connects (enableOfflineQueue: false): wait until it is ready.
    if (redis.status !== 'ready')
      await new Promise((resolve, reject) => {
        redis.once('ready', resolve);
        redis.once('end', reject);
      });
    for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 500 }) as AsyncIterable<string[]>)
      if (keys.length) await redis.del(...keys);
  } finally {
    await kv.close();
  }
}

/** A run's database goes with the run, so a long-lived CI machine does not collect them. */
async function dropDatabase(url: string) {
  const name = new URL(url).pathname.slice(1);
  if (!/^vcs_t[a-z0-9]+$/.test(name)) return; // only the databases freshStores made
  const admin = new pg.Client({ connectionString: distributedEnv()!.DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${name} with (force)`);
  } finally {
    await admin.end();
  }
}

/**
 * The distributed `settled`: the relays and senders live in other processes, so the stores are asked what they would
 * say. No outbox row unpublished, every durable consumer of the run's stream with nothing pending or unacked, no
 * webhook delivery due or leased; and that twice running with nothing written, acked or attempted in between (the
 * parts feed each other: a failed delivery writes an event). Polled, here only (docs/decisions.md, "Tests").
 */
async function storesSettled(env: Record<string, string>, timeoutMs = 30_000) {
  const db = new pg.Client({ connectionString: env.DATABASE_URL });
  const nc = await connect({ servers: env.NATS_URL });
  await db.connect();
  try {
    const jsm = await jetstreamManager(nc);
    const stream = `${EVENT_STREAM}_${env.NATS_NAMESPACE}`;
    const until = Date.now() + timeoutMs;
    let previous = '';
    for (;;) {
      const [row] = (
        await db.query(`select
          (select count(*) from outbox_events where published_at is null)::int as unpublished,
          (select count(*) from webhook_deliveries where status = 'pending'
              and (next_attempt_at <= now() or locked_until >= now()))::int as due,
          (select coalesce(max(seq), 0) from outbox_events)::text as written,
          (select count(*) from webhook_attempts)::text as attempts`)
      ).rows;
      const consumers = [];
      for await (const c of jsm.consumers.list(stream))
        consumers.push({ busy: c.num_pending + c.num_ack_pending, acked: c.ack_floor.stream_seq });
      const clean = row.unpublished === 0 && row.due === 0 && consumers.every((c) => c.busy === 0);
      const seen = JSON.stringify([row.written, row.attempts, consumers.map((c) => c.acked)]);
      if (clean && seen === previous) return;
      previous = clean ? seen : '';
      if (Date.now() > until) throw new Error(`not settled in ${timeoutMs} ms: ${JSON.stringify({ row, consumers })}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await db.end();
    await nc.close();
  }
}

export async function waitFor(check: () => Promise<boolean>, timeoutMs = 20_000, stepMs = 100) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      /* retry */
    }
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

/** Small HTTP helpers for tests. */
export async function call(
  baseUrl: string,
  method: string,
  path: string,
  opts: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const r = await fetch(baseUrl + path, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await r.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: r.status, headers: r.headers, json, text };
}

/** An offer-gated call settled in the same round trip: the sandbox's Accept-Price, set above any price. */
export const paid = (baseUrl: string, path: string, key: string, body: unknown) =>
  call(baseUrl, 'POST', path, { key, body, headers: { 'accept-price': '1000.00 USD' } });

/** Resolves once `child` has exited (at once if it already has). */
export const exited = (child: ChildProcess) =>
  new Promise<void>((r) =>
    child.exitCode !== null || child.signalCode !== null ? r() : child.once('exit', () => r()),
  );

export async function mintKey(baseUrl: string): Promise<{ key: string; account: string }> {
  const r = await call(baseUrl, 'POST', '/keys');
  if (r.status !== 200) throw new Error(`mint failed: ${r.status} ${r.text}`);
  return { key: r.json.key, account: r.json.account };
}

export { ManualClock };
