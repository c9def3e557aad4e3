/**
 * `pnpm bench`: the full path (gateway, key check, meter, bus, pillar handler, answer) against the ceiling
 * (a bare fastify route answering the same bytes), distributed and embedded, at concurrency 1 and 50.
 * Servers (built JavaScript, as deployed) are all started first and pinned to core 0 (NATS too: a private one
 * started there); the runs go round them in turn, each repeat. The load generator, wrk (Debian's package;
 * autocannon when wrk is missing), runs on core 1.
 *   BENCH_SECONDS=5 BENCH_REPEATS=3 pnpm bench      (BENCH_ONLY=distributed,peer: only those rows; BENCH_NATS=shared)
 * The write anchors (W0, W1, W2, E0: test/bench/write-anchors.ts) run the keyed POST beside ours; the table gives
 * each keyed POST row its ratio to W0, W1 and W2 of the same round.
 * Distributed mode needs NATS_URL, DATABASE_URL and REDIS_URL (else it is skipped, with a note).
 * BENCH_SMOKE=1: every server, target and row as above, but a run is a few requests (autocannon's `amount`) and each
 * settling or idle window 100 ms (test/bench.smoke.test.ts); BENCH_SKIP_BUILD=1 reuses dist/.
 * The peer, a Moleculer gateway (moleculer-web) and responder on the same NATS answering the same bytes
 * (test/bench/moleculer-peer.ts), and the transport reference (test/bench/transport-path.ts) run beside them
 * for the free GET.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { build } from 'esbuild';
import { BUNDLE, buildAll, ensureSeed } from '../../deploy/build.ts';
import { seedPgliteDir } from '../../libs/platform/src/store/db.ts';
import { PGLITE_SEED } from '../../services/embedded/src/seed.ts';
import { builtEntryOf, NODE_FLAGS, PILLAR_SERVICES, spawnService, type ServiceName } from '../../deploy/launch.ts';
import { dropStores, freePort, freshStores } from '../support/harness.ts';
import { CLK_TCK, cpuTicks, median, pause, SMOKE, stopAll, waitUp } from './support.ts';
import { printStartFigures, startFigures, type StartFigures } from './start.ts';
import { privateNats, privatePostgres, type PrivateServer } from '../support/private-infra.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
// The bench measures the full path, not the rate limiter's refusals: lift the limits far above any load here.
const NO_LIMITS = {
  RATE_LIMIT_ANON_PER_MIN: '100000000',
  RATE_LIMIT_SANDBOX_PER_MIN: '100000000',
  RATE_LIMIT_LIVE_PER_MIN: '100000000',
  RATE_LIMIT_MINT_PER_MIN: '100000000',
};
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
/** Smoke mode: requests a run sends per connection instead of running for SECONDS. */
const SMOKE_REQUESTS_PER_CONNECTION = 2;
const VIN = '1HGCM82633A004352';
const root = new URL('../..', import.meta.url).pathname;

const taskset = (cpu: number, pid: number) =>
  spawnSync('taskset', ['-a', '-cp', String(cpu), String(pid)], { stdio: 'ignore' }).status === 0;
const affinityOf = (pid: number) =>
  /: (.+)$/.exec(spawnSync('taskset', ['-cp', String(pid)], { encoding: 'utf8' }).stdout.trim())?.[1];
function rssMb(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
  } catch {
    return 0;
  }
}

interface Target {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}
const FREE_GET: Target = {
  name: 'free GET /signings/status',
  method: 'GET',
  path: `/signings/status?vin=${VIN}`,
  headers: {},
};
/** pids: the server's own processes, gateway first; sharedPids: servers it uses that run on core 0 too (NATS). */
interface Server {
  label: string;
  baseUrl: string;
  pids: number[];
  sharedPids: number[];
  gatewayPid: number;
  stop(): Promise<void>;
}
interface Row {
  server: string;
  target: string;
  c: number;
  round?: number;
  rps: number;
  p50: number;
  p99: number;
  cpuUs: number;
  gatewayUs: number;
  pgUs: number;
  readP99: number;
  rssMb: number;
  errors: number;
}

const WRK = spawnSync('wrk', ['--version'], { encoding: 'utf8' }).error ? null : 'wrk';

/** wrk's figures (one thread, pinned to core 1 with this process); POST bodies go through a tiny Lua script. */
async function runWrk(url: string, t: Target, connections: number) {
  // A 10 s client time-out (wrk's default is 2 s): a slow answer is a latency, not an error, in these figures.
  const args = ['-t1', `-c${connections}`, `-d${SECONDS}s`, '--timeout', '10s', '--latency'];
  for (const [k, v] of Object.entries(t.headers)) args.push('-H', `${k}: ${v}`);
  if (t.method === 'POST') {
    const lua = join(mkdtempSync(join(tmpdir(), 'vcs-wrk-')), 'post.lua');
    writeFileSync(lua, `wrk.method = "POST"\nwrk.body = ${JSON.stringify(t.body ?? '')}\n`);
    args.push('-s', lua);
  }
  // Spawned, not spawnSync: a side load (a free read beside the writes) runs in this process meanwhile.
  const child = spawn('taskset', ['-c', '1', 'wrk', ...args, url], { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  await new Promise((r) => child.once('close', r));
  const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? NaN);
  const ms = (re: RegExp) => {
    const m = re.exec(out);
    if (!m) return NaN;
    const v = Number(m[1]);
    return m[2] === 'us' ? v / 1000 : m[2] === 's' ? v * 1000 : v;
  };
  const total = num(/(\d+) requests in/);
  const errors = num(/Non-2xx or 3xx responses: (\d+)/) || 0;
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    total,
    rps: num(/Requests\/sec:\s+([\d.]+)/),
    p50: ms(/50%\s+([\d.]+)(us|ms|s)/),
    p99: ms(/99%\s+([\d.]+)(us|ms|s)/),
    errors: errors + (socketErrors ? socketErrors.slice(1).reduce((a, x) => a + Number(x), 0) : 0),
  };
}

const ticksOf = (pids: number[]) => pids.reduce((a, p) => a + cpuTicks(p), 0);
/**
 * Postgres's processes (the server's, shared by every row that uses it): writes must not move cost where the
 * figures do not look. Backends come and go, so each is read by pid before and after a run (a new one counts from 0).
 */
const postgresPids = () =>
  spawnSync('pgrep', ['-x', 'postgres'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).map(Number);
const postgresTicks = () => new Map(postgresPids().map((p) => [p, cpuTicks(p)]));
const ticksSince = (before: Map<number, number>) =>
  [...postgresTicks()].reduce((a, [p, t]) => a + t - (before.get(p) ?? 0), 0);

/** Share of one core the servers take while none is under load (their timers and pollers), over two seconds. */
async function idleLoad(pids: number[]) {
  const before = ticksOf(pids);
  const t0 = performance.now();
  await pause(2000);
  return ((ticksOf(pids) - before) / CLK_TCK / ((performance.now() - t0) / 1000)) * 100;
}

/**
 * Wait until every server is quiet (at most 4 % of a core for half a second, at most 30 s): a keyed POST leaves
 * events being relayed and consumed, and that work must not be counted against the next run.
 */
async function settle(pids: number[]) {
  const until = Date.now() + 30_000;
  while (Date.now() < until) {
    const before = ticksOf(pids);
    await pause(500);
    if (ticksOf(pids) - before <= 2) return;
  }
}

/** How long an autocannon run lasts: SECONDS, or a few requests a connection in smoke mode. */
const load = (connections: number) =>
  // autocannon ends a run on its next sample: every 100 ms in smoke mode, not every second.
  SMOKE ? { amount: connections * SMOKE_REQUESTS_PER_CONNECTION, sampleInt: 100 } : { duration: SECONDS };

/** One run against `s`; `quiet` are the processes that must be idle before it starts (every server's). */
async function measure(s: Server, t: Target, connections: number, quiet: number[]): Promise<Row> {
  const pids = [...s.pids, ...s.sharedPids];
  await settle(quiet);
  const before = pids.map(cpuTicks);
  const pgBefore = postgresTicks();
  let r: { total: number; rps: number; p50: number; p99: number; errors: number };
  // Reads must not stall behind writes: beside every keyed POST at c=50, two connections read the free GET.
  const side =
    t.method === 'POST' && connections === 50
      ? autocannon({ url: s.baseUrl + FREE_GET.path, connections: 2, ...load(2) })
      : undefined;
  if (WRK && !SMOKE) r = await runWrk(s.baseUrl + t.path, t, connections);
  else {
    const a = await autocannon({
      url: s.baseUrl + t.path,
      method: t.method,
      headers: t.headers,
      body: t.body,
      connections,
      ...load(connections),
    });
    r = {
      total: a.requests.total,
      rps: a.requests.average,
      p50: a.latency.p50,
      p99: a.latency.p99,
      errors: a.errors + a.non2xx,
    };
  }
  const readBeside = side ? (await side).latency.p99 : NaN;
  const ticks = pids.map((p, i) => cpuTicks(p) - before[i]!);
  const pgTicks = ticksSince(pgBefore);
  const total = r.total || 1;
  const us = (n: number) => ((n / CLK_TCK) * 1e6) / total;
  return {
    server: s.label,
    target: t.name,
    c: connections,
    rps: r.rps,
    p50: r.p50,
    p99: r.p99,
    cpuUs: us(ticks.reduce((a, x) => a + x, 0)),
    gatewayUs: us(ticks[0]!),
    pgUs: us(pgTicks),
    readP99: readBeside,
    rssMb: rssMb(s.gatewayPid),
    errors: r.errors,
  };
}

async function startEmbedded(): Promise<Server> {
  const pgliteDir = mkdtempSync(join(tmpdir(), 'vcs-bench-embedded-'));
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...NO_LIMITS,
    PORT: String(port),
    HOST: '127.0.0.1',
    // On disk in an empty directory, as `pnpm start` runs: the process copies the build's prepared database into it.
    PGLITE_DIR: pgliteDir,
    LOG_LEVEL: 'silent',
  };
  for (const k of ['NATS_URL', 'DATABASE_URL', 'REDIS_URL']) delete env[k]; // embedded: none of the servers
  const child = spawn(process.execPath, [...NODE_FLAGS, builtEntryOf('embedded')], { cwd: root, stdio: 'ignore', env });
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitUp(`${baseUrl}/signings/status?vin=${VIN}`, (s) => s === 200);
  return {
    label: 'embedded',
    baseUrl,
    pids: [child.pid!],
    sharedPids: [],
    gatewayPid: child.pid!,
    stop: async () => {
      await stopAll([child]);
      rmSync(pgliteDir, { recursive: true, force: true });
    },
  };
}

async function startDistributed(): Promise<Server | null> {
  if (!process.env.NATS_URL || !process.env.DATABASE_URL || !process.env.REDIS_URL) return null;
  let privatePg: PrivateServer | undefined;
  let stores: Record<string, string>;
  try {
    stores = await freshStores(); // a fresh database, Redis prefix and NATS namespace, as the test harness makes
  } catch (err) {
    // The shared Postgres may be full (other suites running): bench on a private one instead, and say so.
    console.log(`note: DATABASE_URL refused (${(err as Error).message}); using a private Postgres`);
    privatePg = await privatePostgres();
    stores = await freshStores(privatePg.url);
  }
  const cleanUp = async () => {
    await dropStores(stores);
    await privatePg?.destroy();
  };
  const port = await freePort();
  // A fresh connection key per run: a distributed process refuses to start without one.
  const env = {
    ...stores,
    ...NO_LIMITS,
    LOG_LEVEL: 'silent',
    PORT: String(port),
    HOST: '127.0.0.1',
    CONNECTION_ENCRYPTION_KEY: process.env.CONNECTION_ENCRYPTION_KEY ?? randomBytes(32).toString('base64'),
  };
  const children: ChildProcess[] = [];
  for (const s of PILLAR_SERVICES) children.push(spawnService(s, env, 'pipe'));
  const gateway = spawnService('gateway', env, 'pipe');
  children.push(gateway);
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    for (const p of [`/signings/status?vin=${VIN}`, `/mcos/status?vin=${VIN}`])
      await waitUp(baseUrl + p, (s) => s === 200);
    await waitUp(`${baseUrl}/keys`, (s) => s === 200, 90_000, { method: 'POST' });
    await waitUp(`${baseUrl}/total-loss/acv`, (s) => s !== 503, 90_000, { method: 'POST' });
  } catch (err) {
    await stopAll(children);
    await cleanUp();
    throw err;
  }
  return {
    label: 'distributed',
    baseUrl,
    pids: [gateway.pid!, ...children.filter((c) => c !== gateway).map((c) => c.pid!)],
    sharedPids: natsPid ? [natsPid] : [],
    gatewayPid: gateway.pid!,
    async stop() {
      await stopAll(children);
      await cleanUp();
    }, // the bench's database, stream and Redis keys go with it
  };
}

/**
 * A bench script (test/bench/<entry>) bundled like the services, so RSS and CPU compare like with like, beside
 * it (test/bench/.<name>.js, so packages left external still resolve), and `bytes` written to a file it serves.
 */
async function bundleWithBody(entry: string, bytes: Buffer, bundle: import('esbuild').BuildOptions = {}) {
  const file = join(mkdtempSync(join(tmpdir(), 'vcs-bench-')), 'body.json');
  writeFileSync(file, bytes);
  const built = join(root, 'test/bench', `.${entry.replace(/\.ts$/, '.js')}`);
  // Once per entry (the four anchors share one), and never two builds of one file at once: servers start together.
  await (bundled[entry] ??= build({
    ...BUNDLE,
    entryPoints: [join(root, 'test/bench', entry)],
    outfile: built,
    ...bundle,
  }));
  return { built, file };
}
const bundled: Record<string, Promise<unknown>> = {};

async function startCeiling(bytes: Buffer): Promise<Server> {
  const { built, file } = await bundleWithBody('ceiling.ts', bytes);
  const port = await freePort();
  const child = spawn(process.execPath, [built], {
    cwd: root,
    stdio: 'ignore',
    env: { ...process.env, PORT: String(port), BODY_FILE: file },
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitUp(`${baseUrl}/x`, (s) => s === 200);
  return {
    label: 'ceiling (bare fastify)',
    baseUrl,
    pids: [child.pid!],
    sharedPids: [],
    gatewayPid: child.pid!,
    stop: () => stopAll([child]),
  };
}

/**
 * A gateway and a responder, one script started twice on the same NATS (ROLE=gateway | responder), answering
 * `bytes` (in the file BODY_FILE) at /signings/status: the Moleculer peer and the transport reference.
 */
async function startPair(
  label: string,
  entry: string,
  bytes: Buffer,
  bundle: import('esbuild').BuildOptions = {},
): Promise<Server | null> {
  if (!process.env.NATS_URL) return null;
  const { built, file } = await bundleWithBody(entry, bytes, bundle);
  const port = await freePort();
  const env = {
    ...process.env,
    NATS_URL: process.env.NATS_URL,
    NAMESPACE: `bench${Date.now().toString(36)}`,
    PORT: String(port),
    BODY_FILE: file,
  };
  const responder = spawn(process.execPath, [built], {
    cwd: root,
    stdio: 'ignore',
    env: { ...env, ROLE: 'responder' },
  });
  const gateway = spawn(process.execPath, [built], { cwd: root, stdio: 'ignore', env: { ...env, ROLE: 'gateway' } });
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    await waitUp(`${baseUrl}/signings/status?vin=${VIN}`, (s) => s === 200, 30_000);
  } catch (err) {
    await stopAll([gateway, responder]);
    throw err;
  }
  return {
    label,
    baseUrl,
    pids: [gateway.pid!, responder.pid!],
    sharedPids: natsPid ? [natsPid] : [],
    gatewayPid: gateway.pid!,
    stop: () => stopAll([gateway, responder]),
  };
}

/** The peer: a moleculer-web gateway and one Moleculer responder (it loads its transporter with require() at run time, so its packages stay outside the bundle). */
const startMoleculer = (bytes: Buffer) =>
  startPair('peer (Moleculer)', 'moleculer-peer.ts', bytes, { packages: 'external' });
/** The transport alone: a bare fastify route → a NATS request → a responder of fixed bytes. */
const startTransportPath = (bytes: Buffer) =>
  startPair('reference: fastify → NATS → fixed bytes', 'transport-path.ts', bytes);

/**
 * The write path's anchors (test/bench/write-anchors.ts): W0 durable write, W1 + relay + consumer, W2 = W1 split
 * over a NATS hop, E0 = W0 on PGlite in-process. Each gets its own database and NATS namespace; the one target is
 * the keyed POST our rows measure, with the same path, key header and body.
 */
const ANCHOR_KEY = 'vcs_bench_anchor_key';
async function startAnchor(label: string, roles: string[]): Promise<Server | null> {
  const pgliteDir = roles.includes('e0') ? mkdtempSync(join(tmpdir(), 'vcs-e0-')) : undefined;
  // E0 opens a copy of the build's prepared database, as the embedded start does, instead of running initdb (4–6 s
  // of CPU and ~700 MB) beside every other server's start; its own table is made in it as in W0's Postgres.
  if (pgliteDir) seedPgliteDir(pgliteDir, PGLITE_SEED);
  if (!pgliteDir && !process.env.NATS_URL) return null;
  const stores = pgliteDir ? {} : await freshStores();
  const { built } = await bundleWithBody('write-anchors.ts', Buffer.alloc(0), { external: ['@electric-sql/pglite'] });
  const port = await freePort();
  const env = {
    ...process.env,
    ...stores,
    NAMESPACE: stores.NATS_NAMESPACE ?? '',
    PORT: String(port),
    KEY: ANCHOR_KEY,
    ...(pgliteDir ? { PGLITE_DIR: pgliteDir } : {}),
  };
  // Every role makes the tables under one lock (migrate), so the order they start in does not matter.
  const children = roles.map((ROLE) =>
    spawn(process.execPath, [built], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'], env: { ...env, ROLE } }),
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await stopAll(children);
    if (pgliteDir) rmSync(pgliteDir, { recursive: true, force: true });
    else await dropStores(stores);
  };
  // 90 s: a start on a loaded machine, several servers starting at once, takes a while.
  try {
    await waitUp(`${baseUrl}/total-loss/acv`, (s) => s === 200, 90_000, {
      method: 'POST',
      headers: { authorization: `Bearer ${ANCHOR_KEY}`, 'content-type': 'application/json' },
      body: '{}',
    });
  } catch (err) {
    await stop();
    throw new Error(`${label}: ${(err as Error).message}`);
  }
  const pids = [...children].reverse().map((c) => c.pid!); // the listening process first, as gateways are
  return {
    label,
    baseUrl,
    pids,
    sharedPids: roles.some((r) => r !== 'w0' && r !== 'e0') && natsPid ? [natsPid] : [],
    gatewayPid: pids[0]!,
    stop,
  };
}
const ANCHORS: [string, string[]][] = [
  ['W0 durable write', ['w0']],
  ['W1 = W0 + relay + consumer', ['w1']],
  ['W2 = W1 over a NATS hop', ['w2-writer', 'w2-gateway']],
  ['E0 = W0 on PGlite in-process', ['e0']],
];
const ANCHOR_TARGET: Target = {
  name: 'keyed POST /total-loss/acv',
  method: 'POST',
  path: '/total-loss/acv',
  headers: { authorization: `Bearer ${ANCHOR_KEY}`, 'content-type': 'application/json' },
  body: '{}',
};

/** The free GET's answer bytes, for the peer and the ceiling when neither of our rows ran (BENCH_ONLY). */
async function sampleAnswer(): Promise<Buffer> {
  const s = await startEmbedded();
  try {
    return Buffer.from(await (await fetch(`${s.baseUrl}/signings/status?vin=${VIN}`)).arrayBuffer());
  } finally {
    await s.stop();
  }
}

async function targetsFor(s: Server): Promise<Target[]> {
  const minted = (await (await fetch(`${s.baseUrl}/keys`, { method: 'POST' })).json()) as { key: string };
  const keyed = { authorization: `Bearer ${minted.key}`, 'content-type': 'application/json' };
  return [
    FREE_GET,
    // The same read with a key: the key check (cached row), the key's rate limit and the meter, as the goals ask.
    {
      name: 'keyed GET /signings/status',
      method: 'GET',
      path: `/signings/status?vin=${VIN}`,
      headers: { authorization: keyed.authorization },
    },
    { name: 'keyed POST /total-loss/acv', method: 'POST', path: '/total-loss/acv', headers: keyed, body: '{}' },
    // The keyless decode: the gateway asks the data pillar, which decodes from vPIC (a VIN seen before: its LRU).
    { name: 'free GET /decode/{vin}', method: 'GET', path: `/decode/${VIN}`, headers: {} },
  ];
}

/**
 * NATS for the distributed, peer and reference rows. By default a private nats-server (the same local binary)
 * started on core 0: Go sizes its scheduler from the CPUs it may use when it starts, so the shared server, started
 * on both cores and pinned afterwards, keeps a spare scheduler thread that wakes and spins for a core it does not
 * have (measurable at c=1: docs/performance.md). BENCH_NATS=shared re-pins the shared server instead (restored
 * afterwards).
 */
const SHARED_NATS = process.env.BENCH_NATS === 'shared';
let natsPid = 0;
/** BENCH_ONLY=distributed,embedded,peer,transport,anchors: run only those rows (the ceiling is always run for the ratios). */
const ONLY = process.env.BENCH_ONLY?.split(',').map((x) => x.trim());
const wanted = (row: string) => !ONLY || ONLY.includes(row);

/** A server started and the targets each round runs against it. */
type Running = { server: Server; targets: Target[] };

/**
 * Starts servers at once (their start-ups overlap: most of it is waiting), keeping their order; those that started
 * join `running` even when another failed, so the caller's clean-up stops them.
 */
async function startTogether(running: Running[], starts: (() => Promise<Running | null>)[]) {
  const settled = await Promise.allSettled(starts.map((start) => start()));
  for (const r of settled) if (r.status === 'fulfilled' && r.value) running.push(r.value);
  const failed = settled.find((r) => r.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
}

async function main() {
  if (!process.env.BENCH_SKIP_BUILD) await buildAll();
  await ensureSeed(); // the prepared database the embedded server and E0 start from (made once, as `pnpm build` does)
  let ownNats: PrivateServer | undefined;
  if (!SHARED_NATS && process.env.NATS_URL) {
    ownNats = await privateNats({ cpu: 0 });
    process.env.NATS_URL = ownNats.url;
    natsPid = ownNats.pid ?? 0;
  } else if (SHARED_NATS) {
    natsPid = Number(spawnSync('pgrep', ['-o', '-x', 'nats-server'], { encoding: 'utf8' }).stdout.trim()) || 0;
  } // else no NATS_URL: no row uses NATS, and the machine's own server is left as it is (it was once left pinned)
  const natsAffinity = natsPid && SHARED_NATS ? affinityOf(natsPid) : undefined;
  const pinnedSelf = taskset(1, process.pid);
  const pinnedNats = natsPid ? taskset(0, natsPid) : false;
  const rows: Row[] = [];
  // The README's start first, alone on the machine's cores (before any server of the load rows is up).
  // Smoke (figures that mean nothing): beside the other servers' start instead of before it.
  const starting = wanted('embedded') ? startFigures(Math.min(5, SECONDS)) : Promise.resolve([] as StartFigures[]);
  starting.catch(() => undefined); // awaited below, after the servers' start, in smoke mode
  const started: StartFigures[] = SMOKE ? [] : await starting;
  const starts = (
    [
      ['distributed', startDistributed],
      ['embedded', startEmbedded],
    ] as const
  ).filter(([row]) => wanted(row));
  // Every server is started first and the runs go round them in turn, repeat after repeat: drift in this noisy
  // VM's speed over the minutes of a run then falls on every row alike instead of on whichever ran last.
  const running: Running[] = [];
  let idlePct = 0;
  try {
    // Our servers, then the others (listed in that order); the ceiling, the peer and the reference answer our free
    // GET's bytes, so they wait for those, while the anchors start beside ours.
    const ours = starts.map(async ([row, start]) => {
      const s = await start();
      if (!s) console.log(`${row}: skipped (set NATS_URL, DATABASE_URL, REDIS_URL)`);
      return s ? { server: s, targets: await targetsFor(s) } : null;
    });
    const answerBytes = (async () => {
      // The first of ours to serve (the others need not have started).
      const s = await Promise.any(ours.map(async (o) => (await o) ?? Promise.reject())).catch(() => null);
      return s
        ? Buffer.from(await (await fetch(s.server.baseUrl + s.targets[0]!.path)).arrayBuffer())
        : await sampleAnswer();
    })();
    const serving = (targets: Target[], start: () => Promise<Server | null>) => async () => {
      const server = await start();
      return server ? { server, targets } : null;
    };
    await startTogether(running, [
      ...ours.map((o) => () => o),
      ...(wanted('peer') ? [serving([FREE_GET], async () => startMoleculer(await answerBytes))] : []),
      ...(wanted('transport') ? [serving([FREE_GET], async () => startTransportPath(await answerBytes))] : []),
      ...(wanted('anchors')
        ? ANCHORS.map(([label, roles]) => serving([ANCHOR_TARGET], () => startAnchor(label, roles)))
        : []),
      serving([{ name: 'same bytes', method: 'GET', path: '/x', headers: {} }], async () =>
        startCeiling(await answerBytes),
      ),
    ]);
    if (SMOKE) started.push(...(await starting));
    for (const { server } of running) for (const pid of server.pids) taskset(0, pid);
    const everyPid = [...new Set(running.flatMap(({ server }) => [...server.pids, ...server.sharedPids]))];
    for (const { server, targets } of running) for (const t of targets) await measure(server, t, 10, everyPid); // warm-up (JIT, pools, caches)
    idlePct = await idleLoad(everyPid);
    for (let i = 0; i < REPEATS; i++) {
      for (const { server, targets } of running) {
        for (const t of targets)
          for (const c of [1, 50]) {
            const r = { ...(await measure(server, t, c, everyPid)), round: i };
            rows.push(r);
            console.log(JSON.stringify(r));
          }
      }
    }
  } finally {
    await Promise.all(running.map(({ server }) => server.stop()));
    if (natsPid && natsAffinity)
      spawnSync('taskset', ['-a', '-cp', natsAffinity, String(natsPid)], { stdio: 'ignore' });
    await ownNats?.destroy();
  }

  // Medians per (server, target, concurrency), and the ratio to the ceiling at the same concurrency.
  const groups = new Map<string, Row[]>();
  for (const r of rows) {
    const k = `${r.server}|${r.target}|${r.c}`;
    groups.set(k, [...(groups.get(k) ?? []), r]);
  }
  const med = [...groups.values()].map((g) => ({
    ...g[0]!,
    rps: median(g.map((r) => r.rps)),
    p50: median(g.map((r) => r.p50)),
    p99: median(g.map((r) => r.p99)),
    cpuUs: median(g.map((r) => r.cpuUs)),
    gatewayUs: median(g.map((r) => r.gatewayUs)),
    pgUs: median(g.map((r) => r.pgUs)),
    readP99: median(g.map((r) => r.readP99)),
    rssMb: Math.max(...g.map((r) => r.rssMb)),
    errors: g.reduce((a, r) => a + r.errors, 0),
  }));
  // Ratios are taken round by round (the rows of one round ran minutes apart at most), then their median.
  const ratioTo = (r: Row, other: (x: Row) => boolean) =>
    median(
      groups.get(`${r.server}|${r.target}|${r.c}`)!.flatMap((x) => {
        const o = rows.find((y) => other(y) && y.c === x.c && y.round === x.round);
        return o ? [x.rps / o.rps] : [];
      }),
    );
  const isCeiling = (x: Row) => x.server.startsWith('ceiling');
  const isPeer = (x: Row) => x.server.startsWith('peer');
  const anchor = (name: string) => (x: Row) => x.server.startsWith(name) && x.target === ANCHOR_TARGET.name;
  const isWrite = (r: Row) => r.target === ANCHOR_TARGET.name;
  console.log(
    `\nmachine: ${cpus().length}× ${cpus()[0]?.model}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}, load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
  );
  console.log(
    `pinning: servers → core 0 (${natsPid ? `${SHARED_NATS ? 'shared NATS, re-pinned' : 'private NATS started on core 0'}, pid ${natsPid} ${pinnedNats ? 'pinned' : 'NOT pinned'}` : SHARED_NATS ? 'shared NATS not found' : 'no NATS: NATS_URL unset'}), load generator (${WRK ?? 'autocannon'}) → core 1 (${pinnedSelf ? 'pinned' : 'NOT pinned'}); ${SECONDS}s per run, median of ${REPEATS}`,
  );
  console.log(`idle: the servers not under load took ${idlePct.toFixed(1)} % of core 0 between runs (timers, pollers)`);
  console.log(
    'CPU µs/req: every server process (gateway + pillars, and NATS where the row uses it) per request; gw µs: the gateway alone',
  );
  console.log(
    'read p99 ms: a free GET on 2 connections beside the keyed POST at c=50 (reads must not stall behind writes)',
  );
  console.log(
    'PG µs/req: every postgres process on the machine (only rows that use the server; E0 and embedded use PGlite, counted in CPU µs)',
  );
  console.log(
    '× ceiling, × peer, × W0/W1/W2 (keyed POST rows): req/s against theirs in the same round, median over the rounds\n',
  );
  console.log(
    [
      'server',
      'target',
      'c',
      'req/s',
      'p50 ms',
      'p99 ms',
      'CPU µs/req',
      'gw µs/req',
      'PG µs/req',
      'read p99 ms',
      'RSS MB',
      'errors',
      '× ceiling',
      '× peer',
      '× W0',
      '× W1',
      '× W2',
    ].join('\t'),
  );
  for (const r of med) {
    const ratio = ratioTo(r, isCeiling);
    // Against the peer only where it answers the same read, on NATS: the free and the keyed GET.
    const peer =
      r.server === 'distributed' && r.target.endsWith(' GET /signings/status') && rows.some(isPeer)
        ? ratioTo(r, isPeer).toFixed(2)
        : '';
    const writes = ['W0', 'W1', 'W2'].map((w) =>
      isWrite(r) && rows.some(anchor(w)) ? ratioTo(r, anchor(w)).toFixed(2) : '',
    );
    console.log(
      [
        r.server,
        r.target,
        r.c,
        r.rps.toFixed(0),
        r.p50.toFixed(2),
        r.p99.toFixed(2),
        r.cpuUs.toFixed(0),
        r.gatewayUs.toFixed(0),
        r.pgUs.toFixed(0),
        Number.isNaN(r.readP99) ? '' : r.readP99.toFixed(1),
        r.rssMb.toFixed(0),
        r.errors,
        ratio.toFixed(2),
        peer,
        ...writes,
      ].join('\t'),
    );
  }
  if (started.length) printStartFigures(started);
}

await main();
process.exit(0);
