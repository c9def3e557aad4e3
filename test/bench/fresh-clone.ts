/**
 * `pnpm bench:fresh-clone`: the README's start command as a newcomer runs it, in a fresh clone of this checkout's
 * committed HEAD. The command is read from README.md ("Start it": `<install> && <start>`) and run twice, each part as
 * the README's shell would run it (the first run builds; the second finds nothing changed). For each run: seconds
 * from the command to the first answer of /healthz (the install's and the start's), then, after 5 s idle, the
 * resident memory of every process the start left running (the shell it runs in included), each named.
 *   pnpm bench:fresh-clone [--cold-build-cache] [--memory-dir]
 * --cold-build-cache: an empty BUILD_CACHE_DIR, a machine's first build. --memory-dir: `PGLITE_DIR=memory://`, the
 * database in the process's memory instead of the default `.data/pglite` on disk.
 * pnpm's store and npx's cache are this machine's as they are (warm after any install here).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../support/harness.ts';
import { sleep } from './support.ts';

const root = join(import.meta.dirname, '..', '..');
const coldCache = process.argv.includes('--cold-build-cache');
const memoryDir = process.argv.includes('--memory-dir');

/** The README's start command: the first `sh` block under "## Start it", split at its `&&`. */
export function readmeStart(readme: string): { install: string; start: string } {
  const section = readme.slice(readme.indexOf('\n## Start it'));
  const command = /```sh\n([^\n]+)\n```/.exec(section)![1]!;
  const [install, start, ...rest] = command.split(' && ');
  if (!install || !start || rest.length) throw new Error(`README's start is not "<install> && <start>": ${command}`);
  return { install, start };
}

/** Every process whose parent chain leads to `pid` (`pid` included), with its resident memory and command. */
export function processTree(pid: number): { pid: number; rssMb: number; command: string }[] {
  const parentOf = new Map<number, number>();
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      parentOf.set(Number(e), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      /* gone meanwhile */
    }
  }
  const inTree = (p: number): boolean => p === pid || (parentOf.has(p) && p > 1 && inTree(parentOf.get(p)!));
  return [...parentOf.keys()].filter(inTree).flatMap((p) => {
    try {
      const rss = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1];
      const command = readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').join(' ').trim().slice(0, 90);
      return rss ? [{ pid: p, rssMb: Number(rss) / 1024, command }] : [];
    } catch {
      return [];
    }
  });
}

/** SIGTERM to a process group, then wait until none of it is left (SIGKILL after 15 s). */
async function stopGroup(pgid: number) {
  const left = () => {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  };
  process.kill(-pgid, 'SIGTERM');
  for (const until = Date.now() + 15_000; left() && Date.now() < until;) await sleep(100);
  if (left()) process.kill(-pgid, 'SIGKILL');
  while (left()) await sleep(100);
}

// The child's environment: this shell's, without what pnpm or vitest put there (a pnpm script's npm_config_* would
// make the clone's install a part of this workspace), without the distributed servers and with the default data
// directory unless --memory-dir says otherwise.
const env = Object.fromEntries(
  Object.entries(process.env).filter(
    ([k]) => !/^npm_|^PNPM_|^VITEST|^NATS_URL$|^DATABASE_URL$|^REDIS_URL$|^PGLITE_DIR$/i.test(k),
  ),
);

async function run() {
  const dir = mkdtempSync(join(tmpdir(), 'vcs-fresh-clone-'));
  const clone = join(dir, 'fresh');
  const cache = coldCache ? mkdtempSync(join(tmpdir(), 'vcs-cold-cache-')) : undefined;
  try {
    spawnSync('git', ['clone', '--quiet', root, clone], { stdio: 'inherit' });
    const { install, start } = readmeStart(readFileSync(join(clone, 'README.md'), 'utf8'));
    const port = await freePort();
    const childEnv = {
      ...env,
      PORT: String(port),
      ...(cache ? { BUILD_CACHE_DIR: cache } : {}),
      ...(memoryDir ? { PGLITE_DIR: 'memory://' } : {}),
    };
    const settings = [coldCache ? 'an empty build cache' : '', memoryDir ? 'PGLITE_DIR=memory://' : ''].filter(Boolean);
    console.log(
      `README start from a fresh clone${settings.length ? ` (${settings.join(', ')})` : ''}: ${install} && ${start}`,
    );
    for (const which of ['in a fresh clone', 'again, nothing changed']) {
      const t0 = performance.now();
      const installed = spawnSync('sh', ['-c', install], { cwd: clone, env: childEnv, stdio: 'ignore' });
      if (installed.status !== 0) throw new Error(`${install} exited ${installed.status}`);
      const installS = (performance.now() - t0) / 1000;
      const t = performance.now();
      // A process group of its own, so that whatever the command leaves running is stopped with it.
      const shell = spawn('sh', ['-c', start], { cwd: clone, env: childEnv, stdio: 'ignore', detached: true });
      for (;;) {
        const up = await fetch(`http://127.0.0.1:${port}/healthz`).then(
          (r) => r.ok,
          () => false,
        );
        if (up) break;
        if (shell.exitCode !== null) throw new Error(`${start} exited ${shell.exitCode}`);
        await sleep(50);
      }
      const answerS = (performance.now() - t) / 1000;
      await sleep(5000);
      const tree = processTree(shell.pid!);
      const total = tree.reduce((s, p) => s + p.rssMb, 0);
      console.log(
        `${which}: first answer ${(installS + answerS).toFixed(1)} s after the command (install ` +
          `${installS.toFixed(1)} s, start ${answerS.toFixed(1)} s); its process tree then ${total.toFixed(0)} MB:`,
      );
      for (const p of tree) console.log(`  ${p.rssMb.toFixed(0).padStart(4)} MB  ${p.pid}  ${p.command}`);
      await stopGroup(shell.pid!);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    if (cache) rmSync(cache, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await run();
