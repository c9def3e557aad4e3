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
export function spawnService(service: ServiceName, extraEnv: Record<string, string> = {}, stdio: 'inherit' | 'pipe' = 'inherit'): ChildProcess {
  const built = builtEntryOf(service);
  const args = existsSync(built) ? [...NODE_FLAGS, built] : ['--import', 'tsx', entryOf(service)];
  return spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...extraEnv }, stdio: stdio === 'inherit' ? 'inherit' : ['ignore', 'pipe', 'pipe'] });
}

/** Replicas per service from REPLICAS_<SERVICE> (1 when unset); a value that is not 1–64 is a config error. */
function replicasOf(s: ServiceName): number {
  const name = replicasSetting(s);
  const raw = process.env[name];
  if (raw === undefined) return 1;
  const n = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || n < 1 || n > 64) { console.error(`config error: ${name}: expected a whole number from 1 to 64 (value: ${JSON.stringify(raw)})`); process.exit(78); }
  return n;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const k of ['NATS_URL', 'DATABASE_URL', 'REDIS_URL']) {
    if (!process.env[k]) { console.error(`config error: ${k}: required for the distributed mode (see README)`); process.exit(78); }
  }
  const counts = Object.fromEntries(SERVICES.map((s) => [s, replicasOf(s)])) as Record<ServiceName, number>;
  const children: { service: ServiceName; child: ChildProcess }[] = [];
  let stopping = false;
  let exitCode = 0;
  const stopAll = () => { stopping = true; for (const { child } of children) if (child.exitCode === null) child.kill('SIGTERM'); };
  // Pillars first, so the gateway's first requests find responders.
  for (const s of [...SERVICES.filter((x) => x !== 'gateway'), 'gateway' as const]) {
    for (let i = 0; i < counts[s]; i++) {
      const child = spawnService(s);
      children.push({ service: s, child });
      // A process that dies takes the others down with it, named: half a catalog must not go on serving silently
      // (a supervisor — systemd, compose's restart policy — restarts the whole set).
      child.on('exit', (code, signal) => {
        if (!stopping) {
          console.error(`${s} (pid ${child.pid}) exited ${signal ?? `with code ${code}`}; stopping the other services`);
          exitCode = code && code !== 0 ? code : 1;
          stopAll();
        }
        if (children.every(({ child: c }) => c.exitCode !== null || c.signalCode !== null)) process.exit(exitCode);
      });
    }
  }
  process.once('SIGINT', stopAll);
  process.once('SIGTERM', stopAll);
}
