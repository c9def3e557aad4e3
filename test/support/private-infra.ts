import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { exited, freePort } from './harness.ts';

/**
 * Private NATS, Postgres and Redis servers for fault tests, so stopping one never disturbs the shared
 * servers other test files use in parallel. Each keeps its port and data across stop/start.
 */
export interface PrivateServer {
  url: string;
  port: number;
  readonly pid?: number;
  /** The HTTP monitoring address, for a NATS started with `monitor`. */
  monitorUrl?: string;
  stop(signal?: NodeJS.Signals): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

export function portOpen(port: number): Promise<boolean> {
  return new Promise((r) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      r(true);
    });
    s.once('error', () => r(false));
  });
}
export async function waitPort(port: number, open: boolean, timeoutMs = 15_000) {
  const until = Date.now() + timeoutMs;
  while ((await portOpen(port)) !== open) {
    if (Date.now() > until) throw new Error(`port ${port} did not ${open ? 'open' : 'close'}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function processServer(port: number, url: string, cmd: string, args: string[], dir: string): PrivateServer {
  let child: ChildProcess | undefined;
  const server: PrivateServer = {
    url,
    port,
    get pid() {
      return child?.pid;
    },
    async start() {
      child = spawn(cmd, args, { stdio: 'ignore' });
      await waitPort(port, true);
    },
    async stop(signal = 'SIGTERM') {
      if (!child) return;
      const c = child;
      child = undefined;
      c.kill(signal);
      await exited(c);
      await waitPort(port, false);
    },
    async destroy() {
      await server.stop('SIGKILL').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return server;
}

/**
 * `cpu`: start the server pinned to that core (taskset execs it, so the pid is the server's). Go sizes its
 * scheduler (GOMAXPROCS) from the CPUs it may use at start, so a server pinned after it started keeps one
 * scheduler thread per machine core, all contending for the one core it was given.
 */
export async function privateNats(opts: { cpu?: number; monitor?: boolean } = {}): Promise<PrivateServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'vcs-nats-'));
  const nats = ['/usr/sbin/nats-server', '-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir];
  // `monitor`: its HTTP monitoring port too (`/connz` counts each connection's messages), at `monitorUrl`.
  const monitorPort = opts.monitor ? await freePort() : undefined;
  if (monitorPort) nats.push('-m', String(monitorPort));
  const [cmd, ...args] = opts.cpu === undefined ? nats : ['taskset', '-c', String(opts.cpu), ...nats];
  const s = processServer(port, `nats://127.0.0.1:${port}`, cmd!, args, dir);
  await s.start();
  return monitorPort ? Object.assign(s, { monitorUrl: `http://127.0.0.1:${monitorPort}` }) : s;
}

export async function privateRedis(): Promise<PrivateServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'vcs-redis-'));
  const s = processServer(
    port,
    `redis://127.0.0.1:${port}`,
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    dir,
  );
  await s.start();
  return s;
}

/** initdb refuses to run as root: run the Postgres tools as the postgres user on a directory it owns. */
export async function privatePostgres(): Promise<PrivateServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'vcs-pg-'));
  chmodSync(dir, 0o700);
  const asRoot = process.getuid?.() === 0;
  const pgUser = asRoot ? Number(spawnSync('id', ['-u', 'postgres']).stdout.toString().trim()) : undefined;
  if (asRoot) chownSync(dir, pgUser!, Number(spawnSync('id', ['-g', 'postgres']).stdout.toString().trim()));
  const bin = '/usr/lib/postgresql/15/bin';
  const run = (tool: string, args: string[]) => {
    const r = spawnSync(
      asRoot ? 'runuser' : `${bin}/${tool}`,
      asRoot ? ['-u', 'postgres', '--', `${bin}/${tool}`, ...args] : args,
      { encoding: 'utf8' },
    );
    if (r.status !== 0) throw new Error(`${tool} failed: ${r.stderr || r.stdout}`);
  };
  run('initdb', ['-D', join(dir, 'data'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
  const server: PrivateServer = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async start() {
      run('pg_ctl', [
        '-D',
        join(dir, 'data'),
        '-o',
        `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300`,
        '-l',
        join(dir, 'log'),
        '-w',
        'start',
      ]);
      await waitPort(port, true);
    },
    async stop() {
      run('pg_ctl', ['-D', join(dir, 'data'), '-m', 'fast', '-w', 'stop']);
      await waitPort(port, false);
    },
    async destroy() {
      try {
        await server.stop();
      } catch {
        /* already stopped */
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}
