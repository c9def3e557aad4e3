import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { NatsBus, parseSettings, baseConfig } from '@vcs/platform';
import { builtEntryOf } from '../deploy/launch.ts';
import { distributedEnv } from './support/harness.ts';

/**
 * "A wrong or missing setting stops the process with one line naming it": each setting an operator once got a stack
 * trace, a silent hang or a wrong start from (issue 17) is given to the built process, which must exit non-zero
 * within a bounded time with exactly one line on stderr that names the setting or the server.
 */
const root = join(import.meta.dirname, '..');
interface Run { code: number | null; lines: string[] }
function run(args: string[], env: Record<string, string>, timeoutMs = 20_000): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: root, env: { PATH: process.env.PATH!, HOME: process.env.HOME!, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => { clearTimeout(timer); resolve({ code, lines: err.split('\n').filter((l) => l.trim() && !/^\(node:\d+\) |--trace-warnings/.test(l)) }); });
  });
}
const embedded = (env: Record<string, string>) => run([builtEntryOf('embedded')], { PGLITE_DIR: 'memory://', PORT: '0', ...env });

// The built processes (dist/): vitest's global setup builds them once per run (test/support/build.ts).
describe('a wrong setting is one line and a non-zero exit (embedded)', () => {
  it.each([
    ['CONNECTION_ENCRYPTION_KEY', { CONNECTION_ENCRYPTION_KEY: 'short' }],
    ['WEBHOOK_TIMEOUT_MS', { WEBHOOK_TIMEOUT_MS: '-5' }],
    ['WEBHOOK_RETRY_SCHEDULE_MS', { WEBHOOK_RETRY_SCHEDULE_MS: 'a,b' }],
    ['HOST', { HOST: 'not a host' }],
    ['KEY_ROTATION_GRACE_SECONDS', { KEY_ROTATION_GRACE_SECONDS: '-1' }],
    ['PORT', { PORT: '' }],
    ['PG_POOL_MAX', { PG_POOL_MAX: 'abc' }],
    ['BUS_TIMEOUT_MS', { BUS_TIMEOUT_MS: '12x' }],
  ])('%s', async (name, env) => {
    const r = await embedded(env);
    expect(r.code).toBe(78);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatch(new RegExp(`^config error: ${name}: `));
  });
});

describe('NATS_URL takes a seed list (issue 27)', () => {
  it('one server or several, comma-separated; an entry that is not a nats:// URL is named', async () => {
    expect(parseSettings(baseConfig, { NATS_URL: 'nats://a:4222, nats://b:4222,nats://c:4222' }).NATS_URL).toBe('nats://a:4222,nats://b:4222,nats://c:4222');
    expect(parseSettings(baseConfig, { NATS_URL: 'nats://nats:4222' }).NATS_URL).toBe('nats://nats:4222');
    const r = await embedded({ NATS_URL: 'nats://a:4222,b:4222' });
    expect([r.code, r.lines]).toEqual([78, [expect.stringMatching(/^config error: NATS_URL: expected nats:\/\/host:port, or several separated by commas/)]]);
  });
});

describe('secrets from files (NAME_FILE, as Docker secrets are mounted)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vcs-secrets-'));
  it('reads the setting from the file, so a bad value in it is named as the setting', async () => {
    writeFileSync(join(dir, 'short'), 'short\n');
    const r = await embedded({ CONNECTION_ENCRYPTION_KEY_FILE: join(dir, 'short') });
    expect([r.code, r.lines]).toEqual([78, [expect.stringMatching(/^config error: CONNECTION_ENCRYPTION_KEY: expected 32 bytes/)]]);
  });
  it('names a file it cannot read, and refuses the setting given twice', async () => {
    const missing = await embedded({ CONNECTION_ENCRYPTION_KEY_FILE: join(dir, 'nope') });
    expect([missing.code, missing.lines]).toEqual([78, [expect.stringMatching(/^config error: CONNECTION_ENCRYPTION_KEY_FILE: cannot read .*nope \(ENOENT\)$/)]]);
    writeFileSync(join(dir, 'key'), randomBytes(32).toString('base64'));
    const twice = await embedded({ CONNECTION_ENCRYPTION_KEY_FILE: join(dir, 'key'), CONNECTION_ENCRYPTION_KEY: randomBytes(32).toString('base64') });
    expect([twice.code, twice.lines]).toEqual([78, ['config error: CONNECTION_ENCRYPTION_KEY: set either CONNECTION_ENCRYPTION_KEY or CONNECTION_ENCRYPTION_KEY_FILE, not both']]);
  });
});

describe.runIf(distributedEnv())('servers that are not there, and the launcher (distributed)', () => {
  const env = () => distributedEnv()!;
  it('a services pillar without CONNECTION_ENCRYPTION_KEY refuses to start: the dev key is for the embedded mode only', async () => {
    const r = await run([builtEntryOf('services-pillar')], { ...env(), STARTUP_TIMEOUT_MS: '5000' });
    expect(r.code).toBe(78);
    expect(r.lines).toEqual([expect.stringMatching(/^config error: CONNECTION_ENCRYPTION_KEY: required outside the embedded mode/)]);
  });

  it('an unreachable NATS is one line after STARTUP_TIMEOUT_MS, not a silent wait', async () => {
    const r = await run([builtEntryOf('data')], { ...env(), NATS_URL: 'nats://127.0.0.1:1', STARTUP_TIMEOUT_MS: '1500' });
    expect(r.code).toBe(1);
    expect(r.lines).toEqual([expect.stringMatching(/^data: cannot start: NATS at nats:\/\/127\.0\.0\.1:1 did not answer within 1\.5 s \(STARTUP_TIMEOUT_MS\)/)]);
  });

  it('a process whose first seed is down starts on another', async () => {
    const bus = await NatsBus.connect(`nats://127.0.0.1:1,${env().NATS_URL}`, 'seed-test', `tseed${Date.now().toString(36)}`, 10_000);
    try { expect(bus.isConnected()).toBe(true); } finally { await bus.deleteStream(); await bus.drain(); }
  });

  it('EVENT_STREAM_REPLICAS that differs from the existing stream is one line naming both counts (exit 78)', async () => {
    const ns = `trep${Date.now().toString(36)}`;
    const bus = await NatsBus.connect(env().NATS_URL, 'replicas-test', ns); // makes the stream with 1 replica
    try {
      const r = await run([builtEntryOf('data')], { ...env(), NATS_NAMESPACE: ns, EVENT_STREAM_REPLICAS: '3' });
      expect(r.code).toBe(78);
      expect(r.lines).toEqual([expect.stringMatching(/^config error: EVENT_STREAM_REPLICAS: 3, but the event stream \S+ on this NATS has 1 replica; set EVENT_STREAM_REPLICAS=1, or change the stream first/)]);
    } finally { await bus.deleteStream(); await bus.drain(); }
  });

  it('a missing database is one line naming it', async () => {
    const url = new URL(env().DATABASE_URL);
    url.pathname = '/vcs_no_such_database';
    const r = await run([builtEntryOf('gateway')], { ...env(), DATABASE_URL: url.toString() });
    expect(r.code).toBe(1);
    expect(r.lines).toEqual([expect.stringMatching(/^gateway: cannot start: Postgres at .*vcs_no_such_database: database "vcs_no_such_database" does not exist$/)]);
  });

  it('an event stream that cannot be made is one line saying why and what to change, in every process that needs it', async () => {
    const ns = `tcfg${Date.now().toString(36)}`;
    const nc = await connect({ servers: env().NATS_URL });
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: `OTHER_${ns}`, subjects: [`${ns}.evt.>`] }); // takes our subjects first
    try {
      for (const service of ['gateway', 'services-pillar'] as const) {
        const r = await run([builtEntryOf(service)], { ...env(), NATS_NAMESPACE: ns, PORT: '0' });
        expect(r.code, service).toBe(1);
        expect(r.lines, service).toEqual([expect.stringMatching(/cannot start: the event stream .* cannot be made on this NATS: .*NATS_NAMESPACE/)]);
      }
    } finally {
      await jsm.streams.delete(`OTHER_${ns}`);
      await nc.drain();
    }
  });

  it('start:distributed refuses a wrong replica count, and stops everything, naming it, when a service exits', async () => {
    const launch = (extra: Record<string, string>) => run([join(root, 'node_modules/tsx/dist/cli.mjs'), 'deploy/launch.ts'], { ...env(), PORT: '0', ...extra }, 40_000);
    const bad = await launch({ REPLICAS_DATA: 'abc' });
    expect(bad.code).toBe(78);
    expect(bad.lines).toEqual(['config error: REPLICAS_DATA: expected a whole number from 1 to 64 (value: "abc")']);
    const dies = await launch({ CONNECTION_ENCRYPTION_KEY: 'short', NATS_NAMESPACE: `tl${Date.now().toString(36)}` });
    expect(dies.code).toBe(78);
    expect(dies.lines.join('\n')).toMatch(/services-pillar \(pid \d+\) exited with code 78; stopping the other services/);
  }, 60_000);
});
