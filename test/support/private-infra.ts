import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
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
  /** The server's own log, where it writes one (Postgres, PgBouncer). */
  logFile?: string;
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

function processServer(
  port: number,
  url: string,
  cmd: string,
  args: string[],
  dir: string,
  as?: { uid: number; gid: number },
): PrivateServer {
  let child: ChildProcess | undefined;
  const server: PrivateServer = {
    url,
    port,
    get pid() {
      return child?.pid;
    },
    async start() {
      child = spawn(cmd, args, { stdio: 'ignore', ...as });
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

const asRoot = process.getuid?.() === 0;
/** A directory of the postgres user's (initdb and PgBouncer refuse to run as root; as root, they run as it). */
function postgresDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o700);
  ownedByPostgres(dir);
  return dir;
}
const postgresUser = () => {
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres']).stdout.toString().trim());
  return { uid: id('-u'), gid: id('-g') };
};
const ownedByPostgres = (path: string) => {
  if (!asRoot) return;
  const { uid, gid } = postgresUser();
  chownSync(path, uid, gid);
};
/** A command as the postgres user when this is root, else as this user. */
const asPostgres = (cmd: string, args: string[]): [string, string[]] =>
  asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];

/** Postgres's binaries: the newest installed major version's (Debian's /usr/lib/postgresql/<major>/bin). */
export const postgresBin = () => {
  const majors = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql') : [];
  const major = majors.filter((m) => existsSync(`/usr/lib/postgresql/${m}/bin/initdb`)).sort((a, b) => +b - +a)[0];
  return major ? `/usr/lib/postgresql/${major}/bin` : null;
};

/**
 * A private Postgres on its own port. `maxConnections`: the server's `max_connections` (300 unless given: more than
 * any suite asks for).
 */
export async function privatePostgres(opts: { maxConnections?: number } = {}): Promise<PrivateServer> {
  const port = await freePort();
  const dir = postgresDir('vcs-pg-');
  const bin = postgresBin() ?? '/usr/lib/postgresql/15/bin';
  const run = (tool: string, args: string[]) => {
    const [cmd, argv] = asPostgres(`${bin}/${tool}`, args);
    const r = spawnSync(cmd, argv, { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${tool} failed: ${r.stderr || r.stdout}`);
  };
  run('initdb', ['-D', join(dir, 'data'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
  const server: PrivateServer = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    logFile: join(dir, 'log'),
    async start() {
      run('pg_ctl', [
        '-D',
        join(dir, 'data'),
        '-o',
        `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=${opts.maxConnections ?? 300}`,
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

/** Debian's PgBouncer, where it is installed (`apt-get install -y pgbouncer`). */
export const pgbouncerBin = () => (existsSync('/usr/sbin/pgbouncer') ? '/usr/sbin/pgbouncer' : null);

/**
 * A private PgBouncer in front of `postgres` (its user `postgres`, trusted, as privatePostgres makes it), pooling by
 * transaction as deploy/ runs it: every database of that server, at most `poolSize` server connections, up to
 * `maxClients` clients. Its log (connections, errors) is `logFile`.
 */
export async function privatePgbouncer(
  postgres: PrivateServer,
  opts: { poolSize: number; maxClients: number },
): Promise<PrivateServer> {
  const bin = pgbouncerBin();
  if (!bin) throw new Error('PgBouncer is not installed: apt-get install -y pgbouncer');
  const port = await freePort();
  const dir = postgresDir('vcs-pgbouncer-');
  const file = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    ownedByPostgres(join(dir, name));
  };
  file('userlist.txt', '"postgres" ""\n');
  file(
    'pgbouncer.ini',
    [
      '[databases]',
      `* = host=127.0.0.1 port=${postgres.port}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${opts.poolSize}`,
      `max_db_connections = ${opts.poolSize}`,
      `max_client_conn = ${opts.maxClients}`,
      `logfile = ${join(dir, 'log')}`,
      '',
    ].join('\n'),
  );
  // Spawned as the postgres user itself (not through runuser), so a SIGKILL reaches PgBouncer.
  const s = processServer(
    port,
    `postgres://postgres@127.0.0.1:${port}/postgres`,
    bin,
    [join(dir, 'pgbouncer.ini')],
    dir,
    asRoot ? postgresUser() : undefined,
  );
  s.logFile = join(dir, 'log');
  await s.start();
  return s;
}
