/**
 * Distributed mode on one machine: the gateway and every pillar as separate OS processes on real
 * NATS, Postgres and Redis (NATS_URL, DATABASE_URL, REDIS_URL). Replicas per pillar: REPLICAS_<PILLAR>.
 *   REPLICAS_SERVICES=3 pnpm start:distributed
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { replicasSetting, SERVICES, type ServiceName } from './services.ts';

export { PILLAR_SERVICES, SERVICES, type ServiceName } from './services.ts';
const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export function entryOf(service: ServiceName) {
  return join(root, 'services', service, 'src', 'main.ts');
}

/** The built file of a service (`pnpm build`, deploy/build.ts). */
export function builtEntryOf(service: ServiceName | 'embedded') {
  return join(root, 'dist', `${service}.js`);
}

/**
 * How every built service runs (also `pnpm start` in package.json and NODE_OPTIONS in the Dockerfile):
 * source-mapped stack traces and an explicit heap size. Without a stated old-space limit V8 sizes the heap from
 * the machine's memory (about 4 GB here) and lets a gateway's RSS wander between 100 and 185 MB under load for a
 * live heap of 25 MB; with one (512 MB: twenty times the live heap) it stays flat near 95 MB. The young
 * generation is capped at 4 MB per semi-space (V8 grows it to 16 MB). Figures: docs/performance.md.
 */
export const NODE_FLAGS = ['--enable-source-maps', '--max-semi-space-size=4', '--max-old-space-size=512'];

/**
 * Start one process of a service, inheriting env plus `extraEnv`: the built JavaScript (`pnpm build`) when it
 * exists, else the TypeScript source through tsx. One OS process per service, so a signal reaches it directly.
 */
export function spawnService(
  service: ServiceName,
  extraEnv: Record<string, string> = {},
  stdio: 'inherit' | 'pipe' = 'inherit',
): ChildProcess {
  const built = builtEntryOf(service);
  const args = existsSync(built) ? [...NODE_FLAGS, built] : ['--import', 'tsx', entryOf(service)];
  return spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, ...extraEnv },
    stdio: stdio === 'inherit' ? 'inherit' : ['ignore', 'pipe', 'pipe'],
  });
}

/** Replicas per service from REPLICAS_<SERVICE> (1 when unset); a value that is not 1–64 is a config error. */
/**
 * How start:distributed supervises: a replica that exits is restarted after 0.5 s, doubling to 10 s while it keeps
 * failing; one that ran 30 s counts as healthy again. Only a service left with no replica after 5 failures in a row
 * stops everything (and a wrong setting, exit 78, at once: restarting cannot mend it).
 */
export const SUPERVISE = { firstBackoffMs: 500, maxBackoffMs: 10_000, healthyAfterMs: 30_000, maxFails: 5 } as const;

function replicasOf(s: ServiceName): number {
  const name = replicasSetting(s);
  const raw = process.env[name];
  if (raw === undefined) return 1;
  const n = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || n < 1 || n > 64) {
    console.error(`config error: ${name}: expected a whole number from 1 to 64 (value: ${JSON.stringify(raw)})`);
    process.exit(78);
  }
  return n;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const k of ['NATS_URL', 'DATABASE_URL', 'REDIS_URL']) {
    if (!process.env[k]) {
      console.error(`config error: ${k}: required for the distributed mode (see README)`);
      process.exit(78);
    }
  }
  const counts = Object.fromEntries(SERVICES.map((s) => [s, replicasOf(s)])) as Record<ServiceName, number>;
  const slots = SERVICES.flatMap((service) =>
    Array.from({ length: counts[service] }, (_, i) => ({
      service,
      replica: i + 1,
      child: undefined as ChildProcess | undefined,
      fails: 0,
      startedAt: 0,
    })),
  );
  // Pillars first, so the gateway's first requests find responders.
  slots.sort((x, y) => Number(x.service === 'gateway') - Number(y.service === 'gateway'));
  let stopping = false;
  let exitCode = 0;
  const timers = new Set<NodeJS.Timeout>();
  const live = () => slots.filter((x) => x.child && x.child.exitCode === null && x.child.signalCode === null);
  const stopAll = () => {
    stopping = true;
    for (const t of timers) clearTimeout(t);
    for (const { child } of live()) child!.kill('SIGTERM');
    if (live().length === 0) process.exit(exitCode);
  };
  const start = (slot: (typeof slots)[number]) => {
    const child = (slot.child = spawnService(slot.service));
    slot.startedAt = Date.now();
    child.on('exit', (code, signal) => {
      if (stopping) {
        if (live().length === 0) process.exit(exitCode);
        return;
      }
      const how = signal ?? `with code ${code}`;
      const name = `${slot.service} replica ${slot.replica} (pid ${child.pid})`;
      // A wrong setting stays wrong however often it is restarted: say so and stop, as at start.
      if (code === 78) {
        console.error(`${name} exited ${how}; stopping the other services`);
        exitCode = 78;
        stopAll();
        return;
      }
      // A replica that ran a while died of something else: its count starts again.
      slot.fails = Date.now() - slot.startedAt > SUPERVISE.healthyAfterMs ? 1 : slot.fails + 1;
      const siblings = live().filter((x) => x.service === slot.service).length;
      if (siblings === 0 && slot.fails >= SUPERVISE.maxFails) {
        console.error(
          `${name} exited ${how}, its ${slot.fails}th failure in a row, and no ${slot.service} replica is left; ` +
            'stopping the other services',
        );
        exitCode = code && code !== 0 ? code : 1;
        stopAll();
        return;
      }
      const wait = Math.min(SUPERVISE.maxBackoffMs, SUPERVISE.firstBackoffMs * 2 ** (slot.fails - 1));
      console.error(
        `${name} exited ${how}; restarting it in ${wait} ms ` +
          `(${siblings} other ${slot.service} replica${siblings === 1 ? '' : 's'} serving)`,
      );
      const t = setTimeout(() => {
        timers.delete(t);
        if (!stopping) start(slot);
      }, wait);
      timers.add(t);
    });
  };
  for (const slot of slots) start(slot);
  process.once('SIGINT', stopAll);
  process.once('SIGTERM', stopAll);
}
