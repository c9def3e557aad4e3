/**
 * start:distributed (deploy/launch.ts) as an operator runs it, as real processes on NATS, Postgres and Redis: every
 * replica of every service serves /healthz, /readyz and /metrics on a port of its own (the table it prints says which,
 * and so does each process's first log line); a port another program holds is one line and never stops the
 * deployment; a database DATABASE_URL names that does not exist stops it at once, said once.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runProcess } from './support/run-process.ts';
import { distributedEnv, dropStores, freshStores, serversFor, waitFor } from './support/harness.ts';

const root = join(import.meta.dirname, '..');
const baseEnv = () => ({
  PATH: process.env.PATH!,
  HOME: process.env.HOME!,
  CONNECTION_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
});
/** A block of ports unlikely to be in use (below Linux's ephemeral range), different in each run. */
const portBlock = () => 10_000 + 500 * Math.floor(Math.random() * 18);
const hold = (port: number) =>
  new Promise<Server>((resolve) => {
    const s = createServer();
    s.listen(port, '127.0.0.1', () => resolve(s));
  });
const status = (url: string) =>
  fetch(url).then(
    (r) => r.status,
    () => 0,
  );

describe.runIf(serversFor('start:distributed suite'))('start:distributed', () => {
  it('gives every replica its own health port, says which, and serves on when a port is taken', async () => {
    const stores = await freshStores();
    const base = portBlock();
    const gatewayPort = base + 480;
    // Another program holds data replica 2's health port and, until it is let go, gateway replica 2's API port.
    const heldHealth = await hold(base + 1);
    let heldApi: Server | undefined = await hold(gatewayPort + 1);
    const launcher = spawn(process.execPath, ['--import', 'tsx', 'deploy/launch.ts'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...baseEnv(),
        ...stores,
        LOG_LEVEL: 'info',
        PORT: String(gatewayPort),
        HEALTH_PORT: String(base),
        REPLICAS_DATA: '2',
        REPLICAS_GATEWAY: '2',
      },
    });
    let out = '',
      err = '';
    launcher.stdout.on('data', (d) => (out += d));
    launcher.stderr.on('data', (d) => (err += d));
    try {
      const expected = [
        ['data', 1, base],
        ['data', 2, base + 1],
        ['services-pillar', 1, base + 100],
        ['commerce', 1, base + 200],
        ['workflows', 1, base + 300],
        ['gateway', 1, gatewayPort],
        ['gateway', 2, gatewayPort + 1],
      ] as const;
      await waitFor(async () => /workflows +1 +\d+/.test(err), 20_000);
      const pids = new Map<string, number>();
      for (const [service, replica, port] of expected) {
        const row = new RegExp(`^${service} +${replica} +(\\d+) +.*http://127\\.0\\.0\\.1:${port}$`, 'm').exec(err);
        expect(row, `${service} ${replica} in the table:\n${err}`).not.toBeNull();
        pids.set(`${service} ${replica}`, Number(row![1]));
      }
      const free = expected.filter(([s, r]) => !(s === 'data' && r === 2) && !(s === 'gateway' && r === 2));
      await waitFor(async () => {
        for (const [, , port] of free) if ((await status(`http://127.0.0.1:${port}/readyz`)) !== 200) return false;
        return true;
      }, 90_000).catch((e) => {
        throw new Error(`${(e as Error).message}; the launcher said:\n${err}`);
      });
      for (const [service, replica, port] of free) {
        const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        expect(metrics, `${service} ${replica}`).toMatch(/^vcs_process_resident_memory_bytes /m);
        expect(await status(`http://127.0.0.1:${port}/healthz`)).toBe(200);
      }
      // The replica whose health port was taken said so in one line and serves on: its pid is still the table's.
      const lines = out.split('\n').filter(Boolean);
      const dataTwo = pids.get('data 2')!;
      expect(lines.filter((l) => l.includes('(HEALTH_PORT) is in use'))).toEqual([
        expect.stringMatching(
          new RegExp(`"pid":${dataTwo}.*127\\.0\\.0\\.1:${base + 1} \\(HEALTH_PORT\\) is in use by another process`),
        ),
      ]);
      expect(() => process.kill(dataTwo, 0)).not.toThrow();
      // Each pillar's first line names its health port.
      for (const [service, replica, port] of expected.filter(([s]) => s !== 'gateway')) {
        const pid = pids.get(`${service} ${replica}`)!;
        const first = lines.find((l) => l.includes(`"pid":${pid}`));
        expect(first, `${service} ${replica}`).toMatch(
          new RegExp(`"health":"http://127\\.0\\.0\\.1:${port}".*"msg":"starting"`),
        );
      }
      // Gateway replica 2's port: one line (once that replica tries to listen), tried again, and served once the
      // other program lets it go.
      const apiTaken = new RegExp(`127\\.0\\.0\\.1:${gatewayPort + 1} \\(PORT\\) is in use by another process`);
      await waitFor(async () => apiTaken.test(err), 60_000).catch(() => undefined);
      expect(err).toMatch(apiTaken);
      await new Promise((r) => heldApi!.close(r));
      heldApi = undefined;
      await waitFor(async () => (await status(`http://127.0.0.1:${gatewayPort + 1}/readyz`)) === 200, 60_000);
      expect(await status(`http://127.0.0.1:${gatewayPort + 1}/signings/status?vin=1HGCM82633A004352`)).toBe(200);
      expect(launcher.exitCode).toBeNull();
      expect(`${out}\n${err}`).not.toMatch(/Error: listen|^\s+at /m); // no stack trace anywhere
    } finally {
      launcher.kill('SIGTERM');
      await new Promise((r) => (launcher.exitCode !== null ? r(null) : launcher.once('exit', r)));
      heldHealth.close();
      heldApi?.close();
      await dropStores(stores);
    }
  }, 180_000);

  it('a database DATABASE_URL names that does not exist stops everything at once: one line, exit 78', async () => {
    const url = new URL(distributedEnv()!.DATABASE_URL);
    url.pathname = '/vcs_no_such_database';
    const r = await runProcess(process.execPath, ['--import', 'tsx', 'deploy/launch.ts'], {
      cwd: root,
      env: {
        ...baseEnv(),
        ...distributedEnv(),
        DATABASE_URL: url.toString(),
        NATS_NAMESPACE: `tdb${Date.now().toString(36)}`,
        PORT: '0',
        HEALTH_PORT: '0',
      },
      timeoutMs: 60_000,
    });
    expect(r.code).toBe(78);
    const said = r.err.split('\n').filter((l) => l && !/^start:distributed:|^service +replica|^\S+ +\d+ +\d+ /.test(l));
    expect(said).toEqual([
      expect.stringMatching(
        /^config error: DATABASE_URL: Postgres at \S+vcs_no_such_database refuses it: database "vcs_no_such_database" does not exist/,
      ),
      expect.stringMatching(/^\S+ replica 1 \(pid \d+\) exited with code 78; stopping the other services$/),
    ]);
  }, 90_000);
});
