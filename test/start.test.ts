/**
 * The README's start (its "Start it" command after the install), run as the README's shell runs it: it builds what is
 * stale and then becomes the service, so what it leaves running is the service's one Node process (no npx, pnpm or
 * shell beside it holding memory), and a signal sent to it reaches the service, which shuts down cleanly.
 * Its memory and time to first answer are figures: `pnpm bench:fresh-clone` prints them.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { processTree, readmeStart } from './bench/fresh-clone.ts';
import { freePort, waitFor } from './support/harness.ts';

const root = join(import.meta.dirname, '..');

describe("the README's start", () => {
  it('leaves the service as the one process of its tree, and a signal to it stops it cleanly', async () => {
    const { start } = readmeStart(readFileSync(join(root, 'README.md'), 'utf8'));
    const dir = mkdtempSync(join(tmpdir(), 'vcs-start-'));
    const port = await freePort();
    const shell = spawn('sh', ['-c', start], {
      cwd: root,
      env: { PATH: process.env.PATH!, HOME: process.env.HOME!, PORT: String(port), PGLITE_DIR: join(dir, 'pglite') },
      stdio: 'ignore',
      detached: true,
    });
    const exited = new Promise<number | null>((r) => shell.once('exit', (code) => r(code)));
    try {
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 120_000, 200);
      // The tree of the shell that ran the command: that shell (standing for the user's; a shell may also have
      // become the command itself), then only the service.
      const tree = processTree(shell.pid!).filter((p) => !(p.pid === shell.pid && /^sh /.test(p.command)));
      expect(tree.map((p) => p.command)).toEqual([expect.stringMatching(/^node .*dist\/embedded\.js$/)]);
      process.kill(tree[0]!.pid, 'SIGINT'); // as Ctrl-C would
      expect(await exited).toBe(0);
    } finally {
      try {
        process.kill(-shell.pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
