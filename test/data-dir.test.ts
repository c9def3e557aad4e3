/**
 * One embedded data directory, one process, with the built service as real processes: a second process on a directory
 * in use refuses to start with one line naming the directory and the process holding it (exit 78) and changes nothing;
 * a process killed -9 leaves no lock that stops the next start; a lock whose pid now belongs to another process (a pid
 * reused after a reboot) is taken over too.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runProcess } from './support/run-process.ts';
import { EMBEDDED_ARGS, EMBEDDED_CWD, embeddedEnv, startEmbeddedProcess } from './support/embedded-process.ts';
import { exited, freePort } from './support/harness.ts';

const parent = mkdtempSync(join(tmpdir(), 'vcs-data-dir-'));
const dir = join(parent, 'pglite');
const running: ChildProcess[] = [];

/** Start the embedded service on `dir` and wait until it answers. */
async function start() {
  const started = await startEmbeddedProcess({ PGLITE_DIR: dir });
  running.push(started.child);
  return started;
}
const usage = async (base: string, key: string) =>
  (await fetch(`${base}/keys/me`, { headers: { authorization: `Bearer ${key}` } })).status;

afterAll(async () => {
  for (const c of running) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await Promise.all(running.map(exited));
  rmSync(parent, { recursive: true, force: true });
});

describe('PGLITE_DIR: one process per data directory', () => {
  it('refuses a second process, loses nothing, and a crash leaves no lock behind', async () => {
    const first = await start();
    const minted = await fetch(`${first.base}/keys`, { method: 'POST' });
    const { key } = (await minted.json()) as { key: string };
    expect(await usage(first.base, key)).toBe(200);

    // A second process on the same directory: one line naming it and the first process, exit 78, nothing written.
    const lock = `${realpathSync(dir)}.lock`;
    const before = readFileSync(lock, 'utf8');
    const second = await runProcess(process.execPath, EMBEDDED_ARGS, {
      cwd: EMBEDDED_CWD,
      env: embeddedEnv(await freePort(), { PGLITE_DIR: dir }),
      timeoutMs: 60_000,
    });
    expect(second.code).toBe(78);
    expect(second.err.trim().split('\n')).toEqual([
      expect.stringMatching(
        new RegExp(
          `^config error: PGLITE_DIR: ${realpathSync(dir)} is in use by process ${first.child.pid} \\(node .*dist/embedded\\.js\\); ` +
            'stop it, or give this process another directory \\(PGLITE_DIR\\)',
        ),
      ),
    ]);
    expect(readFileSync(lock, 'utf8')).toBe(before);
    expect(await usage(first.base, key)).toBe(200);

    // Stopped gracefully, it releases the directory; the next process sees the key.
    first.child.kill('SIGTERM');
    await exited(first.child);
    expect(existsSync(lock)).toBe(false);
    const third = await start();
    expect(await usage(third.base, key)).toBe(200);

    // Killed -9, its lock stays, names a dead process, and does not stop the next start.
    third.child.kill('SIGKILL');
    await exited(third.child);
    expect(JSON.parse(readFileSync(lock, 'utf8')).pid).toBe(third.child.pid);
    const fourth = await start();
    expect(await usage(fourth.base, key)).toBe(200);
    expect(JSON.parse(readFileSync(lock, 'utf8')).pid).toBe(fourth.child.pid);
    fourth.child.kill('SIGTERM');
    await exited(fourth.child);

    // A lock whose pid is alive but is another process than the one that wrote it (Linux: its start time differs).
    if (existsSync('/proc/self/stat')) {
      writeFileSync(lock, JSON.stringify({ pid: process.pid, started: 1, command: 'node dist/embedded.js' }));
      const fifth = await start();
      expect(await usage(fifth.base, key)).toBe(200);
      fifth.child.kill('SIGTERM');
      await exited(fifth.child);
    }
  }, 300_000);
});
