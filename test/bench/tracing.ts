/**
 * `pnpm bench:tracing` (not a test): what tracing costs the hot path, off and on. In one process
 * per variant, N bus calls through the one client (bus/call.ts) and the one server adapter (bus/serve.ts) on the
 * in-process bus, and N outbox rows made (eventWrites): ns per call and the young-generation collections they
 * cause (each one is a full new space of garbage, so their count per call is what the call allocates).
 *   off     tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT): the shipped code
 *   on      tracing on (spans batched to a collector that is not there: exporting fails quietly, as with one down)
 *   before  BENCH_TRACING_BEFORE=<dir>: the same against another checkout's libs/platform (the code before tracing)
 *   BENCH_TRACING_N=100000 BENCH_TRACING_ROUNDS=5 BENCH_TRACING_BEFORE=/tmp/vcs-before pnpm bench:tracing
 */
import { spawnSync } from 'node:child_process';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import { join } from 'node:path';

const N = Number(process.env.BENCH_TRACING_N ?? 100_000);
const ROUNDS = Number(process.env.BENCH_TRACING_ROUNDS ?? 5);
const root = new URL('../..', import.meta.url).pathname;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)]!;
};

async function measure(variant: string, platformDir: string) {
  const p = await import(join(platformDir, 'src/index.ts'));
  if (variant === 'on') await p.startTracing('bench', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
  const bus = new p.MemoryBus();
  const log = { error() {}, warn() {}, info() {}, debug() {} };
  p.serveFramed(
    { bus, log, source: 'bench@0', settings: { NODE_ENV: 'production' } },
    'cap.data.vehicle.decode',
    'data',
    'bench',
    async () => ({ status: 200, kind: 'OK', json: '{"type":"OK"}' }),
  );
  const ctx = { requestId: 'req_1', account: null, keyId: null, environment: 'sandbox', trigger: null, settled: false };
  const req = { input: { vin: '1HGCM82633A004352' }, ctx };
  const event = {
    type: 'Signing.quoted@1',
    occurredAt: new Date().toISOString(),
    account: 'acc_1',
    capability: 'signing.quote',
    vin: '1HGCM82633A004352',
    simulated: true,
    data: {},
  };
  let scavenges = 0;
  const obs = new PerformanceObserver((l) => {
    for (const e of l.getEntries()) if ((e as any).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) scavenges++;
  });
  obs.observe({ entryTypes: ['gc'] });
  const newSpace = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!.space_size;
  const run = async (what: 'call' | 'outbox') => {
    const t = performance.now();
    if (what === 'call')
      for (let i = 0; i < N; i++)
        await p.call(bus, 'cap.data.vehicle.decode', 'data', req, { timeoutMs: 1000, idempotent: true });
    else for (let i = 0; i < N; i++) p.eventWrites([event]);
    return ((performance.now() - t) * 1e6) / N;
  };
  const out: Record<string, number> = {};
  for (const what of ['call', 'outbox'] as const) {
    await run(what); // warm-up
    const ns: number[] = [];
    const gcs: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      await new Promise((res) => setTimeout(res, 20)); // let the observer catch up
      const before = scavenges;
      ns.push(await run(what));
      await new Promise((res) => setTimeout(res, 20));
      gcs.push(scavenges - before);
    }
    out[`${what}Ns`] = Math.round(median(ns));
    // Bytes a call leaves for the young generation, estimated from how often it fills up.
    out[`${what}Bytes`] = Math.round((median(gcs) * newSpace()) / N);
  }
  obs.disconnect();
  if (variant === 'on') await p.stopTracing();
  return out;
}

if (process.env.BENCH_TRACING_VARIANT) {
  const [variant, dir] = [process.env.BENCH_TRACING_VARIANT, process.env.BENCH_TRACING_DIR!];
  console.log(JSON.stringify(await measure(variant, dir)));
  process.exit(0);
}

const variants: [string, string][] = [
  ...(process.env.BENCH_TRACING_BEFORE
    ? [['before', join(process.env.BENCH_TRACING_BEFORE, 'libs/platform')] as [string, string]]
    : []),
  ['off', join(root, 'libs/platform')],
  ['on', join(root, 'libs/platform')],
];
console.log(
  `tracing cost: ${N} calls / outbox rows a round, median of ${ROUNDS} rounds, one process per variant (node ${process.version})`,
);
console.log('variant  call ns  call B  outbox-row ns  outbox-row B');
for (const [variant, dir] of variants) {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--max-semi-space-size=1', new URL(import.meta.url).pathname],
    {
      env: { ...process.env, BENCH_TRACING_VARIANT: variant, BENCH_TRACING_DIR: dir, OTEL_EXPORTER_OTLP_ENDPOINT: '' },
      encoding: 'utf8',
      cwd: root,
    },
  );
  if (r.status !== 0) {
    console.log(`${variant}: failed\n${r.stderr}`);
    continue;
  }
  const f = JSON.parse(r.stdout.trim().split('\n').pop()!);
  console.log(
    `${variant.padEnd(8)} ${String(f.callNs).padStart(7)}  ${String(f.callBytes).padStart(6)}  ${String(f.outboxNs).padStart(13)}  ${String(f.outboxBytes).padStart(12)}`,
  );
}
