/**
 * What the bench scripts share (run.ts, x402.ts): timing, the CPU a process has used, and the servers they start and
 * stop. Not a test.
 */
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks a second, the unit of /proc/<pid>/stat's CPU times. */
export const CLK_TCK = 100;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * BENCH_SMOKE=1 (test/bench.smoke.test.ts): every code path and every printed row, on a few requests and waits of
 * 100 ms at most, so the scripts cannot rot without the suite spending minutes on figures nobody reads. The figures
 * a smoke run prints mean nothing.
 */
export const SMOKE = !!process.env.BENCH_SMOKE;
/** A wait that is there for the figures (settling, idle windows, catch-up): 100 ms at most in smoke mode. */
export const pause = (ms: number) => sleep(SMOKE ? Math.min(ms, 100) : ms);

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)]! : NaN;
};

/** User + system CPU ticks in a /proc `stat` file (a process's, or one of its threads'): 0 once it is gone. */
function statTicks(path: string): number {
  try {
    const f = readFileSync(path, 'utf8').split(') ')[1]!.split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return 0;
  }
}

/** User + system CPU ticks a process has used (0 once it is gone). */
export const cpuTicks = (pid: number) => statTicks(`/proc/${pid}/stat`);

/**
 * Write system calls a process has made (`syscw` in /proc/<pid>/io; 0 once it is gone): each write to a socket, a
 * pipe or a thread's wake-up eventfd, most of them waking a process or thread on the other side.
 */
export function writeCalls(pid: number): number {
  try {
    return Number(/^syscw: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/**
 * CPU ticks of one process's main thread and of its other threads (workers such as the embedded store's, GC, libuv):
 * Node names every thread "node", so the tid tells the main thread (tid = pid) from the rest.
 */
export function threadTicks(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    const name = Number(tid) === pid ? 'main thread' : 'other threads';
    out.set(name, (out.get(name) ?? 0) + statTicks(`/proc/${pid}/task/${tid}/stat`));
  }
  return out;
}

/** Polls `url` until its status passes `ok` (a server starting refuses the connection meanwhile). */
export async function waitUp(url: string, ok = (s: number) => s < 500, timeoutMs = 90_000, init?: RequestInit) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      if (ok((await fetch(url, init)).status)) return;
    } catch {
      /* starting */
    }
    await sleep(200);
  }
  throw new Error(`not up: ${url}`);
}

export function waitExit(c: ChildProcess) {
  return new Promise<void>((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.once('exit', () => r())));
}

/** SIGTERM each, 8 s to exit, then SIGKILL what is left. */
export async function stopAll(children: ChildProcess[]) {
  for (const c of children) c.kill('SIGTERM');
  await Promise.race([Promise.all(children.map(waitExit)), sleep(8000)]);
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
}
