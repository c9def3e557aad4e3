/**
 * Distributed mode on one machine: the gateway and every pillar as separate OS processes on real
 * NATS, Postgres and Redis (NATS_URL, DATABASE_URL, REDIS_URL). Replicas per pillar: REPLICAS_<PILLAR>.
 *   REPLICAS_SERVICES=3 pnpm start:distributed
 */
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { planReplicas, tableOf, type Replica } from './replicas.ts';
import { type ServiceName } from './services.ts';

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
 * `nodeArgs` go to Node before the entry (a benchmark's `--cpu-prof`, which NODE_OPTIONS does not take).
 */
export function spawnService(
  service: ServiceName,
  extraEnv: Record<string, string> = {},
  stdio: 'inherit' | 'pipe' | StdioOptions = 'inherit',
  nodeArgs: string[] = [],
): ChildProcess {
  const built = builtEntryOf(service);
  const args = existsSync(built)
    ? [...NODE_FLAGS, ...nodeArgs, built]
    : [...nodeArgs, '--import', 'tsx', entryOf(service)];
  return spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, ...extraEnv },
    stdio: stdio === 'pipe' ? ['ignore', 'pipe', 'pipe'] : stdio,
  });
}

/**
 * How start:distributed supervises: a replica that exits is restarted after 0.5 s, doubling to 10 s while it keeps
 * failing; one that ran 30 s counts as healthy again. Only a service left with no replica after 5 failures in a row
 * stops everything (and a wrong setting, exit 78, at once: restarting cannot mend it). A port another process holds
 * (exit 75) is tried again at the same pace for as long as it takes, and never stops the deployment.
 */
export const SUPERVISE = { firstBackoffMs: 500, maxBackoffMs: 10_000, healthyAfterMs: 30_000, maxFails: 5 } as const;
/** Exit codes: a wrong setting (EX_CONFIG), a port in use (EX_TEMPFAIL; libs/platform config.ts PortInUseError). */
const WRONG_SETTING = 78;
const PORT_IN_USE = 75;

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const k of ['NATS_URL', 'DATABASE_URL', 'REDIS_URL']) {
    if (!process.env[k]) {
      console.error(`config error: ${k}: required for the distributed mode (see README)`);
      process.exit(WRONG_SETTING);
    }
  }
  let plan: Replica[];
  try {
    plan = planReplicas();
  } catch (e) {
    console.error((e as Error).message);
    process.exit(WRONG_SETTING);
  }
  const slots = plan.map((r) => ({
    ...r,
    child: undefined as ChildProcess | undefined,
    fails: 0,
    startedAt: 0,
    lastLine: '',
  }));
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
  // Each replica's stderr (its start-up failures: one line each) passes through here, so that the same line from
  // every replica failing for one reason (a database DATABASE_URL names that does not exist) is said once, and a
  // replica's line repeated on each try (a port in use) once while it repeats.
  const said = new Set<string>();
  let lastSaid = '';
  const forward = (slot: (typeof slots)[number], child: ChildProcess) =>
    createInterface({ input: child.stderr! }).on('line', (line) => {
      const again = line === slot.lastLine || line === lastSaid || (stopping && said.has(line));
      slot.lastLine = line;
      said.add(line);
      if (again) return;
      lastSaid = line;
      process.stderr.write(`${line}\n`);
    });
  const start = (slot: (typeof slots)[number]) => {
    const child = (slot.child = spawnService(slot.service, slot.env, ['inherit', 'inherit', 'pipe']));
    slot.startedAt = Date.now();
    forward(slot, child);
    // 'close', not 'exit': its last stderr lines are read (and said) before what the launcher says of its end.
    child.on('close', (code, signal) => {
      if (stopping) {
        if (live().length === 0) process.exit(exitCode);
        return;
      }
      const how = signal ?? `with code ${code}`;
      const name = `${slot.service} replica ${slot.replica} (pid ${child.pid})`;
      // A wrong setting stays wrong however often it is restarted: say so and stop, as at start.
      if (code === WRONG_SETTING) {
        console.error(`${name} exited ${how}; stopping the other services`);
        exitCode = WRONG_SETTING;
        stopAll();
        return;
      }
      // A port in use may be freed: try again, never counting it as a failure (its line was said once).
      const portInUse = code === PORT_IN_USE;
      // A replica that ran a while died of something else: its count starts again.
      slot.fails = Date.now() - slot.startedAt > SUPERVISE.healthyAfterMs ? 1 : slot.fails + 1;
      const siblings = live().filter((x) => x.service === slot.service).length;
      if (!portInUse && siblings === 0 && slot.fails >= SUPERVISE.maxFails) {
        console.error(
          `${name} exited ${how}, its ${slot.fails}th failure in a row, and no ${slot.service} replica is left; ` +
            'stopping the other services',
        );
        exitCode = code && code !== 0 ? code : 1;
        stopAll();
        return;
      }
      const wait = Math.min(SUPERVISE.maxBackoffMs, SUPERVISE.firstBackoffMs * 2 ** (slot.fails - 1));
      const line =
        `${name} exited ${how}; ${portInUse ? 'trying it again every few seconds until its port is free' : `restarting it in ${wait} ms`} ` +
        `(${siblings} other ${slot.service} replica${siblings === 1 ? '' : 's'} serving)`;
      if (!portInUse || slot.fails === 1) console.error(line);
      const t = setTimeout(() => {
        timers.delete(t);
        if (!stopping) start(slot);
      }, wait);
      timers.add(t);
    });
  };
  for (const slot of slots) start(slot);
  console.error(
    `start:distributed: ${slots.length} processes\n${tableOf(slots.map((x) => ({ ...x, pid: x.child?.pid })))}`,
  );
  process.once('SIGINT', stopAll);
  process.once('SIGTERM', stopAll);
}
