/**
 * `pnpm bench:x402` (also run by `pnpm bench`): a PAID call end to end, ours against a reference seller, in one
 * sitting, on one local chain and one facilitator (@vcs/x402-rail, in a process of its own: anvil + facilitator).
 *
 *   BENCH_X402_SECONDS=15 BENCH_X402_REPEATS=2 pnpm bench:x402
 *   (BENCH_X402_ONLY=reference,embedded,distributed; BENCH_X402_CONCURRENCY=10,50; BENCH_X402_PAYERS=100;
 *    BENCH_X402_OFFER_SECONDS=5, the 402 leg's least length; BENCH_X402_CPU_PROF=<dir> profiles our sellers' processes; BENCH_SKIP_BUILD=1 reuses dist/, as `pnpm bench` does after its own build;
 *    BENCH_X402_CLIENT=fetch|undici, the callers' HTTP client (below);
 *    BENCH_SMOKE=1: every seller, leg and row, but a cell is `c` payments and the pauses 100 ms: test/bench.smoke.test.ts)
 *
 * Sellers, each its own OS process (built JavaScript, as deployed):
 *  - reference: fastify with @x402/core's x402ResourceServer + x402HTTPResourceServer, HTTPFacilitatorClient on the
 *    rail's facilitator, @x402/evm's exact scheme; POST /signings/quote priced 1.00 USD exact on eip155:84532 in the
 *    rail's token to the rail's payTo; answers fixed bytes (our paid answer's) (test/bench/x402-reference.ts);
 *  - embedded: dist/embedded.js with X402_FACILITATOR_URL, X402_RPC_URL, X402_PAY_TO, X402_ASSET, X402_NETWORK;
 *  - distributed: the gateway and the four pillars, when NATS_URL, DATABASE_URL and REDIS_URL are set, with
 *    NODE_ENV=production as the images set it.
 *
 * A paid call is what a stock x402 client does, in two legs, each timed on its own:
 *  1. the 402 leg: POST /signings/quote {vin} without payment → 402 with PAYMENT-REQUIRED (ours stores an intent
 *     and names it in accepts[0].extra.intentId; the reference's is computed). Reported as its own row, with the
 *     seller's CPU per 402; it runs for BENCH_X402_OFFER_SECONDS at least, its first offers kept for step 2.
 *  2. then, untimed: every payment signed (createPayment(payerKey, accepts[0], resource), payers round-robin;
 *     each EIP-3009 authorization has a fresh random 32-byte nonce; each payment is sent once);
 *  3. the paid leg: the same request with PAYMENT-SIGNATURE → 200 with PAYMENT-RESPONSE (verified by the facilitator,
 *     the answer made, then settled on chain: x402's sellers' order, both sellers). This is the "paid calls/s" figure.
 * Each leg is a closed loop of `c` callers (keep-alive) in this process, for BENCH_X402_SECONDS or until its
 * pre-signed payments are used, whichever comes first. Sellers take turns within each round (drift falls on all).
 * Under the tables, per paid call: each seller's CPU by part, and its write system calls by process (a hop's
 * message, a statement, a thread's wake-up: what a seller of many hops pays for in the kernel).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { build } from 'esbuild';
import { request } from 'undici';
import { createPayment } from '@vcs/x402-rail';
import { BUNDLE, buildAll } from '../../deploy/build.ts';
import { builtEntryOf, NODE_FLAGS, PILLAR_SERVICES, spawnService } from '../../deploy/launch.ts';
import { dropStores, freePort, freshStores } from '../support/harness.ts';
import { CLK_TCK, cpuTicks, median, pause, SMOKE, stopAll, threadTicks, waitUp, writeCalls } from './support.ts';

const SECONDS = Number(process.env.BENCH_X402_SECONDS ?? 15);
const REPEATS = Number(process.env.BENCH_X402_REPEATS ?? 1);
const CONCURRENCY = (process.env.BENCH_X402_CONCURRENCY ?? '10,50').split(',').map(Number);
const PAYERS = Number(process.env.BENCH_X402_PAYERS ?? 100);
/**
 * The 402 leg runs at least this long (its first offers are the cell's payments; the rest are measured and dropped):
 * a leg of a few hundred offers lasted under a second, too short to read a seller's CPU per 402 from.
 */
const OFFER_SECONDS = SMOKE ? 0 : Number(process.env.BENCH_X402_OFFER_SECONDS ?? 5);
/** Most payments signed for one cell (a bound on memory and signing time, whatever the rate). */
const MAX_CALLS = Number(process.env.BENCH_X402_MAX_CALLS ?? 20_000);
/**
 * The callers' HTTP client: `fetch`, a stock x402 client's (the default), or undici's `request`, which costs the
 * caller a fraction of fetch's CPU a request. On two cores the callers share the machine with the seller: the lighter
 * client leaves more of it to the sellers and shows their own difference more plainly (docs/performance.md).
 */
const CLIENT = process.env.BENCH_X402_CLIENT ?? 'fetch';
if (CLIENT !== 'fetch' && CLIENT !== 'undici')
  throw new Error(`BENCH_X402_CLIENT is "${CLIENT}": set it to fetch (the default) or undici`);
const ONLY = process.env.BENCH_X402_ONLY?.split(',').map((x) => x.trim());
const wanted = (s: string) => !ONLY || ONLY.includes(s);
const VIN = '1HGCM82633A004352';
const BODY = JSON.stringify({ vin: VIN });
const root = new URL('../..', import.meta.url).pathname;
const NO_LIMITS = {
  RATE_LIMIT_ANON_PER_MIN: '100000000',
  RATE_LIMIT_SANDBOX_PER_MIN: '100000000',
  RATE_LIMIT_LIVE_PER_MIN: '100000000',
  RATE_LIMIT_MINT_PER_MIN: '100000000',
};

const pct = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : NaN;
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');
const unb64 = (s: string) => JSON.parse(Buffer.from(s, 'base64').toString('utf8'));
const loadAvg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
/** BENCH_X402_CPU_PROF=<dir>: each of our sellers' processes writes V8 CPU profiles to <dir>/<its name>/ (one per thread) when it stops. */
const prof = (name: string) =>
  process.env.BENCH_X402_CPU_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${join(process.env.BENCH_X402_CPU_PROF, name)}`]
    : [];
const ticksOf = (pids: number[]) => pids.reduce((a, p) => a + cpuTicks(p), 0);
const childrenOf = (pid: number) =>
  spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter(Boolean)
    .map(Number);

interface RailInfo {
  rpcUrl: string;
  network: string;
  asset: string;
  payTo: string;
  facilitatorUrl: string;
  payerKeys: `0x${string}`[];
}
/** The rail in a process of its own (deploy/x402-rail/src/up.ts): the load generator does not share its event loop. */
async function startRail(): Promise<{ info: RailInfo; pids: () => number[]; stop(): Promise<void> }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'deploy/x402-rail/src/up.ts', '--payers', String(PAYERS), '--mint', String(10n ** 15n)],
    { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: child.stdout! });
  let info: RailInfo | undefined;
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the rail exited (${code}) before it was ready`)));
    lines.on('line', (l) => {
      if (l.startsWith('{')) info = JSON.parse(l);
      else if (l === 'ready') resolve();
    });
  });
  return { info: info!, pids: () => [child.pid!, ...childrenOf(child.pid!)], stop: () => stopAll([child]) };
}

interface Seller {
  label: string;
  baseUrl: string;
  pids: number[];
  /** CPU ticks by part (a service's process, or a thread of one process), for the breakdown under the tables. */
  parts(): Map<string, number>;
  /** Write system calls by process (/proc/<pid>/io counts a process's, not a thread's). */
  writes(): Map<string, number>;
  stop(): Promise<void>;
}

/** A seller that is one process: its CPU by part is its main thread and its other threads. */
const oneProcess = (label: string, baseUrl: string, child: ChildProcess): Seller => ({
  label,
  baseUrl,
  pids: [child.pid!],
  parts: () => threadTicks(child.pid!),
  writes: () => new Map([['process', writeCalls(child.pid!)]]),
  stop: () => stopAll([child]),
});

const x402Env = (r: RailInfo) => ({
  X402_FACILITATOR_URL: r.facilitatorUrl,
  X402_RPC_URL: r.rpcUrl,
  X402_PAY_TO: r.payTo,
  X402_ASSET: r.asset,
  X402_NETWORK: r.network,
});

async function startEmbedded(rail: RailInfo): Promise<Seller> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...NO_LIMITS,
    ...x402Env(rail),
    PORT: String(port),
    HOST: '127.0.0.1',
    PGLITE_DIR: 'memory://',
    LOG_LEVEL: 'error',
  };
  for (const k of ['NATS_URL', 'DATABASE_URL', 'REDIS_URL']) delete env[k];
  const child = spawn(process.execPath, [...NODE_FLAGS, ...prof('embedded'), builtEntryOf('embedded')], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    env,
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    await waitUp(`${baseUrl}/signings/status?vin=${VIN}`, (s) => s === 200);
  } catch (e) {
    await stopAll([child]);
    throw e;
  }
  return oneProcess('ours: embedded', baseUrl, child);
}

async function startDistributed(rail: RailInfo): Promise<Seller | null> {
  if (!process.env.NATS_URL || !process.env.DATABASE_URL || !process.env.REDIS_URL) return null;
  const stores = await freshStores();
  const port = await freePort();
  const env = {
    ...stores,
    ...NO_LIMITS,
    ...x402Env(rail),
    LOG_LEVEL: 'error',
    NODE_ENV: 'production', // as the images run them: no reply checked against its schema (a test's guard)
    PORT: String(port),
    HOST: '127.0.0.1',
    CONNECTION_ENCRYPTION_KEY: process.env.CONNECTION_ENCRYPTION_KEY ?? randomBytes(32).toString('base64'),
  };
  const names = [...PILLAR_SERVICES, 'gateway'] as const;
  const children = names.map((s) => spawnService(s, env, ['ignore', 'ignore', 'inherit'], prof(s)));
  const gateway = children.at(-1)!;
  const baseUrl = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await stopAll(children);
    await dropStores(stores);
  };
  try {
    await waitUp(`${baseUrl}/signings/status?vin=${VIN}`, (s) => s === 200);
    await waitUp(`${baseUrl}/signings/quote`, (s) => s === 402, 90_000, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: BODY,
    });
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    label: 'ours: distributed',
    baseUrl,
    pids: [gateway.pid!, ...children.filter((c) => c !== gateway).map((c) => c.pid!)],
    parts: () => new Map(names.map((n, i) => [n, cpuTicks(children[i]!.pid!)])),
    writes: () => new Map(names.map((n, i) => [n, writeCalls(children[i]!.pid!)])),
    stop,
  };
}

async function startReference(rail: RailInfo, bytes: Buffer): Promise<Seller> {
  const file = join(mkdtempSync(join(tmpdir(), 'vcs-x402-')), 'body.json');
  writeFileSync(file, bytes);
  const built = join(root, 'test/bench/.x402-reference.js');
  await build({ ...BUNDLE, entryPoints: [join(root, 'test/bench/x402-reference.ts')], outfile: built });
  const port = await freePort();
  const child = spawn(process.execPath, [built], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, ...x402Env(rail), PORT: String(port), BODY_FILE: file },
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    await waitUp(`${baseUrl}/signings/quote`, (s) => s === 402, 60_000, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: BODY,
    });
  } catch (e) {
    await stopAll([child]);
    throw e;
  }
  return oneProcess('reference: @x402/core resource server', baseUrl, child);
}

/**
 * `c` callers in a closed loop over `n` requests (request i made by make(i)), for at most `seconds`; with `minSeconds`,
 * on past the n-th until that long (request i ≥ n made by make(i) too).
 */
async function drive(
  n: number,
  c: number,
  send: (i: number) => Promise<string | null>,
  seconds = SECONDS,
  minSeconds = 0,
) {
  const latencies: number[] = [];
  const failures = new Map<string, number>();
  let next = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const until = started + minSeconds * 1000;
  await Promise.all(
    Array.from({ length: minSeconds > 0 ? c : Math.min(c, n) }, async () => {
      while ((next < n || performance.now() < until) && performance.now() < deadline) {
        const i = next++;
        const t0 = performance.now();
        let bad: string | null;
        try {
          bad = await send(i);
        } catch (e) {
          bad = `error ${(e as Error).message}`;
        }
        if (bad) failures.set(bad, (failures.get(bad) ?? 0) + 1);
        else latencies.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    calls: latencies.length,
    sent: next,
    elapsed,
    rps: latencies.length / elapsed,
    p50: pct(latencies, 50),
    p99: pct(latencies, 99),
    errors: [...failures.values()].reduce((a, x) => a + x, 0),
    failures: Object.fromEntries(failures),
  };
}

/** An answer as the callers read it, its body read whole. */
interface Answer {
  status: number;
  header(name: string): string | null;
  bytes: Buffer;
}

/** POST /signings/quote {vin}, with `headers`, through the callers' client (BENCH_X402_CLIENT). */
async function post(s: Seller, headers: Record<string, string> = {}): Promise<Answer> {
  const init = { method: 'POST' as const, headers: { 'content-type': 'application/json', ...headers }, body: BODY };
  if (CLIENT === 'undici') {
    const res = await request(`${s.baseUrl}/signings/quote`, init);
    const bytes = Buffer.from(await res.body.arrayBuffer());
    const header = (name: string) => (res.headers[name] === undefined ? null : String(res.headers[name]));
    return { status: res.statusCode, header, bytes };
  }
  const res = await fetch(`${s.baseUrl}/signings/quote`, init);
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, header: (name) => res.headers.get(name), bytes };
}

/** The 402 leg: n unpaid calls at c; each offer's requirement and resource, for signing. */
async function offers(s: Seller, n: number, c: number) {
  const got: { accepted: any; resource: any }[] = new Array(n);
  const r = await drive(
    n,
    c,
    async (i) => {
      const res = await post(s);
      const header = res.header('payment-required');
      if (res.status !== 402 || !header) return `status ${res.status}`;
      const required = unb64(header);
      if (i < n) got[i] = { accepted: required.accepts[0], resource: required.resource };
      return null;
    },
    Math.max(SECONDS, OFFER_SECONDS, 60),
    OFFER_SECONDS,
  );
  return { leg: r, offers: got.filter(Boolean) };
}

interface Row {
  seller: string;
  leg: '402' | 'paid';
  c: number;
  round: number;
  calls: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  sellerUs: number;
  railUs: number;
  ranOut: boolean;
  failures: Record<string, number>;
  signMs?: number;
  /** Seller µs per paid call, by part. */
  byPart?: Record<string, number>;
  /** Seller write system calls per paid call, by process. */
  writesByPart?: Record<string, number>;
}

/** CPU ticks as µs per call of a leg. */
const perCall = (ticks: number, calls: number) => ((ticks / CLK_TCK) * 1e6) / Math.max(1, calls);
/** The seller's CPU counters now, in all and by part. */
const cpuNow = (s: Seller) => ({ ticks: ticksOf(s.pids), parts: s.parts() });
/** The seller's CPU since `before`, per call of a leg of `calls`: in all, and by part. */
const cpuSince = (s: Seller, before: ReturnType<typeof cpuNow>, calls: number) => ({
  sellerUs: perCall(ticksOf(s.pids) - before.ticks, calls),
  byPart: Object.fromEntries(
    [...s.parts()]
      .map(([k, t]) => [k, Math.round(perCall(t - (before.parts.get(k) ?? 0), calls))])
      .filter(([, v]) => v),
  ),
});

/** One cell: the 402 leg, then signing (untimed), then the paid leg. */
async function cell(
  s: Seller,
  rail: { info: RailInfo; pids: () => number[] },
  c: number,
  n: number,
  round: number,
): Promise<Row[]> {
  const offerBefore = cpuNow(s);
  const offered = await offers(s, n, c);
  const offerCpu = cpuSince(s, offerBefore, offered.leg.calls);
  const t0 = performance.now();
  const payments: string[] = [];
  for (let i = 0; i < offered.offers.length; i++) {
    const o = offered.offers[i]!;
    payments.push(
      b64(await createPayment(rail.info.payerKeys[i % rail.info.payerKeys.length]!, o.accepted, o.resource)),
    );
  }
  const signMs = performance.now() - t0;
  await pause(500);
  const railPids = rail.pids();
  const before = cpuNow(s);
  const railBefore = ticksOf(railPids);
  const writesBefore = s.writes();
  const paid = await drive(payments.length, c, async (i) => {
    const res = await post(s, { 'payment-signature': payments[i]! });
    if (res.status !== 200) return `status ${res.status}`;
    if (!res.header('payment-response')) return 'no PAYMENT-RESPONSE';
    return null;
  });
  const row = (leg: Row['leg'], r: typeof paid, extra: Partial<Row> = {}): Row => ({
    seller: s.label,
    leg,
    c,
    round,
    calls: r.calls,
    rps: r.rps,
    p50: r.p50,
    p99: r.p99,
    errors: r.errors,
    sellerUs: NaN,
    railUs: NaN,
    ranOut: r.sent >= payments.length && r.elapsed < SECONDS * 0.95,
    failures: r.failures,
    ...extra,
  });
  return [
    row('402', offered.leg, { ranOut: false, ...offerCpu }),
    row('paid', paid, {
      ...cpuSince(s, before, paid.calls),
      railUs: perCall(ticksOf(railPids) - railBefore, paid.calls),
      signMs,
      writesByPart: Object.fromEntries(
        [...s.writes()].map(([k, n]) => [k, (n - (writesBefore.get(k) ?? 0)) / Math.max(1, paid.calls)]),
      ),
    }),
  ];
}

async function main() {
  if (!process.env.BENCH_SKIP_BUILD) await buildAll();
  const rail = await startRail();
  const sellers: Seller[] = [];
  const loadBefore = loadAvg();
  const rows: Row[] = [];
  try {
    let bytes: Buffer = Buffer.from(JSON.stringify({ type: 'OK', answers: 'SigningQuote@1', value: {} }));
    if (wanted('embedded')) sellers.push(await startEmbedded(rail.info));
    if (wanted('distributed')) {
      const d = await startDistributed(rail.info);
      if (d) sellers.push(d);
      else console.log('ours: distributed: skipped (set NATS_URL, DATABASE_URL, REDIS_URL)');
    }
    if (sellers[0]) {
      // The reference answers the bytes of one of our paid answers: the same size on the wire.
      const {
        offers: [o],
      } = await offers(sellers[0], 1, 1);
      const res = await post(sellers[0], {
        'payment-signature': b64(await createPayment(rail.info.payerKeys[0]!, o!.accepted, o!.resource)),
      });
      if (res.status !== 200)
        throw new Error(`a paid call to ${sellers[0].label} answered ${res.status}: ${res.bytes.toString('utf8')}`);
      bytes = res.bytes;
    }
    if (wanted('reference')) sellers.unshift(await startReference(rail.info, bytes));
    // Warm-up (JIT, pools, the facilitator's clients) and a first rate, which sizes each cell's payments.
    const rate = new Map<string, number>();
    for (const s of sellers)
      for (const c of CONCURRENCY) {
        const [, paid] = await cell(s, rail, c, SMOKE ? c : Math.max(40, 3 * c), -1);
        if (paid!.errors) console.log(`warm-up ${s.label} c=${c}: ${JSON.stringify(paid!.failures)}`);
        rate.set(`${s.label}|${c}`, paid!.rps);
      }
    for (let round = 0; round < REPEATS; round++) {
      for (const c of CONCURRENCY) {
        for (const s of sellers) {
          const k = `${s.label}|${c}`;
          const n = SMOKE ? c : Math.min(MAX_CALLS, Math.max(4 * c, Math.ceil(rate.get(k)! * SECONDS * 1.5)));
          for (const r of await cell(s, rail, c, n, round)) {
            rows.push(r);
            console.log(JSON.stringify(r));
            if (r.leg === 'paid') rate.set(k, Math.max(rate.get(k)!, r.rps));
          }
        }
      }
    }
  } finally {
    for (const s of sellers) await s.stop();
    await rail.stop();
  }

  const groups = new Map<string, Row[]>();
  for (const r of rows) {
    const k = `${r.seller}|${r.leg}|${r.c}`;
    groups.set(k, [...(groups.get(k) ?? []), r]);
  }
  console.log(
    `\nmachine: ${cpus().length}× ${cpus()[0]?.model}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}; load average ${loadBefore} before, ${loadAvg()} after`,
  );
  console.log(
    `${SECONDS}s a leg at most, median of ${REPEATS} round(s); ${PAYERS} funded payers, every payment fresh and sent once; signing untimed; the 402 leg timed on its own (its own rows), ${OFFER_SECONDS}s at least; callers through ${CLIENT === 'fetch' ? 'fetch' : "undici's request"}`,
  );
  console.log(
    "seller µs/call: CPU (utime+stime) of the seller's processes over the leg, per call; rail µs/call: the rail's (facilitator + anvil) over the paid leg, per paid call\n",
  );
  console.log(
    ['seller', 'leg', 'c', 'calls/s', 'p50 ms', 'p99 ms', 'calls', 'errors', 'seller µs/call', 'rail µs/call'].join(
      '\t',
    ),
  );
  for (const g of groups.values()) {
    const m = (f: (r: Row) => number) => median(g.map(f));
    console.log(
      [
        g[0]!.seller,
        g[0]!.leg,
        g[0]!.c,
        m((r) => r.rps).toFixed(1),
        m((r) => r.p50).toFixed(1),
        m((r) => r.p99).toFixed(1),
        m((r) => r.calls),
        g.reduce((a, r) => a + r.errors, 0),
        m((r) => r.sellerUs).toFixed(0),
        g[0]!.leg === 'paid' ? m((r) => r.railUs).toFixed(0) : '',
      ].join('\t') + (g.some((r) => r.ranOut) ? '\t(ran out of payments before the time)' : ''),
    );
  }
  /** Each cell's figures by part (of the legs `legs`), the median of its rounds (with their sum, for `total`). */
  const printByPart = (
    title: string,
    of: (r: Row) => Record<string, number> | undefined,
    digits: number,
    { total = false, legs = ['paid'] }: { total?: boolean; legs?: Row['leg'][] } = {},
  ) => {
    console.log(`\n${title}, median of the rounds:`);
    for (const g of groups.values()) {
      if (!legs.includes(g[0]!.leg)) continue;
      const keys = [...new Set(g.flatMap((r) => Object.keys(of(r) ?? {})))];
      const by = keys.map((k) => `${k} ${median(g.map((r) => of(r)?.[k] ?? 0)).toFixed(digits)}`).join(', ');
      const all = median(g.map((r) => Object.values(of(r) ?? {}).reduce((a, n) => a + n, 0)));
      console.log(
        `${g[0]!.seller}\t${g[0]!.leg === '402' ? '402 leg ' : ''}c=${g[0]!.c}\t${total ? `${all.toFixed(digits)} in all: ` : ''}${by}`,
      );
    }
  };
  printByPart('seller µs/call by part (a process, or a thread by its name)', (r) => r.byPart, 0, {
    legs: ['402', 'paid'],
  });
  printByPart(
    'seller write system calls per paid call by process (each most often wakes another)',
    (r) => r.writesByPart,
    1,
    { total: true },
  );
  const ref = sellers.find((s) => s.label.startsWith('reference'));
  if (!ref) return;
  console.log('\npaid leg, ours / reference (per round, median); goals: calls/s ≥ 0.8×, p99 ≤ 1.5×');
  for (const s of sellers.filter((x) => x !== ref))
    for (const c of CONCURRENCY) {
      const ours = rows.filter((r) => r.seller === s.label && r.leg === 'paid' && r.c === c);
      const pairs = ours
        .map(
          (o) =>
            [
              o,
              rows.find((r) => r.seller === ref.label && r.leg === 'paid' && r.c === c && r.round === o.round)!,
            ] as const,
        )
        .filter(([, r]) => r);
      const rps = median(pairs.map(([o, r]) => o.rps / r.rps));
      const p99 = median(pairs.map(([o, r]) => o.p99 / r.p99));
      console.log(
        `${s.label}\tc=${c}\tcalls/s ${rps.toFixed(2)}× (${rps >= 0.8 ? 'met' : 'NOT met'})\tp99 ${p99.toFixed(2)}× (${p99 <= 1.5 ? 'met' : 'NOT met'})`,
      );
    }
}

await main();
process.exit(0);
