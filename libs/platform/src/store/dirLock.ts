import { linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { ConfigError } from '../config.ts';

/**
 * One process per data directory. PGlite takes no lock of its own (its postmaster.pid holds a fixed -42), and two
 * processes writing one directory each keep their own copy of it in memory: a key minted on one is unknown to the
 * other, and the last to close overwrites the other's writes. So a process opening a directory first writes a lock
 * file beside it, `<dir>.lock`, made only if absent (a hard link: atomic), holding its pid, the process's start time and its
 * command, as Postgres's postmaster.pid does. A lock whose process is gone (a crash, `kill -9`) is stale and is taken
 * over; a live one refuses the start with one line naming the directory and the process. Beside the directory, not
 * in it: an empty directory is replaced whole by the build's prepared copy (seedPgliteDir).
 */
export interface DirLock {
  /** Remove the lock file if it is still this process's; idempotent. */
  release(): void;
}

interface Holder {
  pid: number;
  /** The process's start, in clock ticks since boot (Linux `/proc/<pid>/stat`), so a reused pid is not taken for it. */
  started?: number;
  command: string;
}

/** Locks this process holds, so that a second open of one directory in one process is refused too. */
const held = new Set<string>();

/** A process's start time in clock ticks since boot, or undefined where /proc does not say (not Linux). */
function startTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22; the command (field 2) is in parentheses and may hold spaces, so count from after its closing one.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
  } catch {
    return undefined;
  }
}

/** Whether the process a lock names still runs (the same process: same pid and, where known, same start). */
function alive(h: Holder, lockFile: string): boolean {
  if (h.pid === process.pid) return held.has(lockFile); // ours only if this process took it (a container's pid 1 again)
  try {
    process.kill(h.pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false; // ESRCH: gone
  }
  const now = startTicks(h.pid);
  return h.started === undefined || now === undefined || now === h.started;
}

function read(lockFile: string): Holder | undefined {
  try {
    const h = JSON.parse(readFileSync(lockFile, 'utf8')) as Holder;
    return Number.isInteger(h.pid) && h.pid > 0 ? h : undefined;
  } catch {
    return undefined; // not a lock this code wrote whole
  }
}

/** This process, as a lock names it: `node dist/embedded.js`. */
const command = () => [basename(process.argv0 || process.execPath), ...process.argv.slice(1)].join(' ').slice(0, 200);

/**
 * Lock `dir` (an absolute path, resolved through symbolic links) for this process, or throw a ConfigError naming
 * `setting`, the directory and the process that holds it (exit 78).
 */
export function lockDataDir(dir: string, setting: string): DirLock {
  const lockFile = `${dir}.lock`;
  const mine: Holder = { pid: process.pid, started: startTicks(process.pid), command: command() };
  // A few turns: between finding a stale lock and removing it, another process starting now may do the same.
  for (let turn = 0; turn < 5; turn++) {
    // Written whole beside it, then linked into place: the link fails if a lock exists (EEXIST), and a lock is never
    // seen half-written.
    const part = `${lockFile}.${process.pid}`;
    try {
      writeFileSync(part, `${JSON.stringify(mine)}\n`);
      linkSync(part, lockFile);
      held.add(lockFile);
      const release = () => {
        if (!held.delete(lockFile)) return;
        process.off('exit', release);
        if (read(lockFile)?.pid === process.pid) rmSync(lockFile, { force: true });
      };
      process.on('exit', release); // an exit without a close (a failed start) leaves no lock behind
      return { release };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST')
        throw new ConfigError(
          `config error: ${setting}: cannot lock ${dir} (${lockFile}: ${(e as NodeJS.ErrnoException).code}); ` +
            'its parent directory must be writable',
        );
    } finally {
      rmSync(part, { force: true });
    }
    const holder = read(lockFile);
    if (holder && alive(holder, lockFile)) {
      const who = holder.pid === process.pid ? 'this process' : `process ${holder.pid} (${holder.command})`;
      throw new ConfigError(
        `config error: ${setting}: ${dir} is in use by ${who}; stop it, or give this process another directory ` +
          `(${setting}). If no such process uses it, remove ${lockFile}`,
      );
    }
    rmSync(lockFile, { force: true }); // stale: its process is gone
  }
  throw new ConfigError(`config error: ${setting}: cannot lock ${dir}: ${lockFile} keeps changing; try again`);
}
