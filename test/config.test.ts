import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { NatsBus, parseSettings, baseConfig, x402Settings } from '@vcs/platform';
import { builtEntryOf } from '../deploy/launch.ts';
import { runProcess } from './support/run-process.ts';
import {
  distributedEnv,
  dropStores,
  freePort,
  freshStores,
  TEST_RATE_LIMITS as L,
  waitFor,
} from './support/harness.ts';

const RELAXED = {
  RATE_LIMIT_ANON_PER_MIN: String(L.anonymous),
  RATE_LIMIT_SANDBOX_PER_MIN: String(L.sandbox),
  RATE_LIMIT_LIVE_PER_MIN: String(L.live),
  RATE_LIMIT_MINT_PER_MIN: String(L.mint),
};

/**
 * "A wrong or missing setting stops the process with one line naming it": each setting that could give an operator a
 * stack trace, a silent hang or a wrong start is given to the built process, which must exit non-zero within a
 * bounded time with exactly one line on stderr that names the setting or the server.
 */
const root = join(import.meta.dirname, '..');
interface Run {
  code: number | null;
  lines: string[];
}
async function run(args: string[], env: Record<string, string>, timeoutMs = 20_000): Promise<Run> {
  const r = await runProcess(process.execPath, args, {
    cwd: root,
    env: { PATH: process.env.PATH!, HOME: process.env.HOME!, ...env },
    timeoutMs,
  });
  // A killed process (the time-out) has no exit code, as before: -1 from runProcess.
  return {
    code: r.code === -1 ? null : r.code,
    lines: r.err.split('\n').filter((l) => l.trim() && !/^\(node:\d+\) |--trace-warnings/.test(l)),
  };
}
const embedded = (env: Record<string, string>) =>
  run([builtEntryOf('embedded')], { PGLITE_DIR: 'memory://', PORT: '0', ...env });

// The built processes (dist/): vitest's global setup builds them once per run (test/support/build.ts).
// Each a process of its own that exits at once: run side by side (most of each is Node loading the bundle).
describe('a wrong setting is one line and a non-zero exit (embedded)', () => {
  it.concurrent.for([
    ['CONNECTION_ENCRYPTION_KEY', { CONNECTION_ENCRYPTION_KEY: 'short' }],
    ['X402_RECEIPT_SIGNING_KEY', { X402_RECEIPT_SIGNING_KEY: 'c2hvcnQ=' }],
    ['X402_RECEIPT_SIGNING_KEY', { X402_RECEIPT_SIGNING_KEY: 'not base64 at all!' }],
    ['WEBHOOK_TIMEOUT_MS', { WEBHOOK_TIMEOUT_MS: '-5' }],
    ['WEBHOOK_RETRY_SCHEDULE_MS', { WEBHOOK_RETRY_SCHEDULE_MS: 'a,b' }],
    ['HOST', { HOST: 'not a host' }],
    ['KEY_ROTATION_GRACE_SECONDS', { KEY_ROTATION_GRACE_SECONDS: '-1' }],
    ['PORT', { PORT: '' }],
    ['PG_POOL_MAX', { PG_POOL_MAX: 'abc' }],
    ['BUS_TIMEOUT_MS', { BUS_TIMEOUT_MS: '12x' }],
    // Node's recursive mkdir under /proc can spin at full CPU for ever with no output.
    ['PGLITE_DIR', { PGLITE_DIR: '/proc/forbidden' }],
    ['PGLITE_DIR', { PGLITE_DIR: '/etc/hostname' }],
  ] as [string, Record<string, string>][])('%s', async ([name, env], { expect }) => {
    const r = await embedded(env);
    expect(r.code).toBe(78);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatch(new RegExp(`^config error: ${name}: `));
  });
});

describe('NATS_URL takes a seed list', () => {
  it('one server or several, comma-separated; an entry that is not a nats:// URL is named', async () => {
    expect(parseSettings(baseConfig, { NATS_URL: 'nats://a:4222, nats://b:4222,nats://c:4222' }).NATS_URL).toBe(
      'nats://a:4222,nats://b:4222,nats://c:4222',
    );
    expect(parseSettings(baseConfig, { NATS_URL: 'nats://nats:4222' }).NATS_URL).toBe('nats://nats:4222');
    const r = await embedded({ NATS_URL: 'nats://a:4222,b:4222' });
    expect([r.code, r.lines]).toEqual([
      78,
      [expect.stringMatching(/^config error: NATS_URL: expected nats:\/\/host:port, or several separated by commas/)],
    ]);
  });
});

describe('a setting with no default given empty is unset (a deployment lists every setting)', () => {
  it('empty is unset for an optional setting, from the environment or an empty file; a bad value is still named', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vcs-empty-'));
    writeFileSync(join(dir, 'empty'), '\n');
    const s = parseSettings(x402Settings.extend(baseConfig.shape), {
      X402_FACILITATOR_URL_FILE: join(dir, 'empty'),
      X402_RPC_URL: '',
      X402_PAY_TO: ' ',
      X402_FACILITATOR_TIMEOUT_MS: '',
      X402_RECEIPT_SIGNING_KEY_FILE: join(dir, 'empty'),
      OTEL_EXPORTER_OTLP_ENDPOINT: '',
    });
    expect([s.X402_FACILITATOR_URL, s.X402_RPC_URL, s.X402_PAY_TO, s.X402_FACILITATOR_TIMEOUT_MS]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect([s.X402_RECEIPT_SIGNING_KEY, s.OTEL_EXPORTER_OTLP_ENDPOINT]).toEqual([undefined, undefined]);
    expect(() => parseSettings(x402Settings, { X402_PAY_TO: '0x12' })).toThrow(/^config error: X402_PAY_TO: /);
    // A setting with a default keeps empty a mistake.
    expect(() => parseSettings(baseConfig, { BUS_TIMEOUT_MS: '' })).toThrow(/^config error: BUS_TIMEOUT_MS: /);
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('secrets from files (NAME_FILE, as Docker secrets are mounted)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vcs-secrets-'));
  it('reads the setting from the file, so a bad value in it is named as the setting', async () => {
    writeFileSync(join(dir, 'short'), 'short\n');
    const r = await embedded({ CONNECTION_ENCRYPTION_KEY_FILE: join(dir, 'short') });
    expect([r.code, r.lines]).toEqual([
      78,
      [expect.stringMatching(/^config error: CONNECTION_ENCRYPTION_KEY: expected 32 bytes/)],
    ]);
  });
  it('names a file it cannot read, and refuses the setting given twice', async () => {
    const missing = await embedded({ CONNECTION_ENCRYPTION_KEY_FILE: join(dir, 'nope') });
    expect([missing.code, missing.lines]).toEqual([
      78,
      [expect.stringMatching(/^config error: CONNECTION_ENCRYPTION_KEY_FILE: cannot read .*nope \(ENOENT\)$/)],
    ]);
    writeFileSync(join(dir, 'key'), randomBytes(32).toString('base64'));
    const twice = await embedded({
      CONNECTION_ENCRYPTION_KEY_FILE: join(dir, 'key'),
      CONNECTION_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    });
    expect([twice.code, twice.lines]).toEqual([
      78,
      [
        'config error: CONNECTION_ENCRYPTION_KEY: set either CONNECTION_ENCRYPTION_KEY or CONNECTION_ENCRYPTION_KEY_FILE, not both',
      ],
    ]);
  });
});

describe.runIf(distributedEnv())('servers that are not there, and the launcher (distributed)', () => {
  const env = () => distributedEnv()!;
  it('a services pillar without CONNECTION_ENCRYPTION_KEY refuses to start: the dev key is for the embedded mode only', async () => {
    const r = await run([builtEntryOf('services-pillar')], { ...env(), STARTUP_TIMEOUT_MS: '5000' });
    expect(r.code).toBe(78);
    expect(r.lines).toEqual([
      expect.stringMatching(/^config error: CONNECTION_ENCRYPTION_KEY: required outside the embedded mode/),
    ]);
  });

  it('an unreachable NATS is one line after STARTUP_TIMEOUT_MS, not a silent wait', async () => {
    const r = await run([builtEntryOf('data')], {
      ...env(),
      NATS_URL: 'nats://127.0.0.1:1',
      STARTUP_TIMEOUT_MS: '1500',
    });
    expect(r.code).toBe(1);
    expect(r.lines).toEqual([
      expect.stringMatching(
        /^data: cannot start: NATS at nats:\/\/127\.0\.0\.1:1 did not answer within 1\.5 s \(STARTUP_TIMEOUT_MS\)/,
      ),
    ]);
  });

  it('an unreachable Redis is one line after STARTUP_TIMEOUT_MS: no process serves before Redis answers', async () => {
    const r = await run([builtEntryOf('gateway')], {
      ...env(),
      REDIS_URL: 'redis://127.0.0.1:1',
      STARTUP_TIMEOUT_MS: '1500',
    });
    expect(r.code).toBe(1);
    expect(r.lines).toEqual([
      expect.stringMatching(
        /^gateway: cannot start: Redis at redis:\/\/127\.0\.0\.1:1 did not answer within 1\.5 s \(STARTUP_TIMEOUT_MS\)/,
      ),
    ]);
  });

  it('a process whose first seed is down starts on another', async () => {
    const bus = await NatsBus.connect(
      `nats://127.0.0.1:1,${env().NATS_URL}`,
      'seed-test',
      `tseed${Date.now().toString(36)}`,
      10_000,
    );
    try {
      expect(bus.isConnected()).toBe(true);
    } finally {
      await bus.deleteStream();
      await bus.drain();
    }
  });

  it('EVENT_STREAM_REPLICAS that differs from the existing stream is one line naming both counts (exit 78)', async () => {
    const ns = `trep${Date.now().toString(36)}`;
    const bus = await NatsBus.connect(env().NATS_URL, 'replicas-test', ns); // makes the stream with 1 replica
    try {
      const r = await run([builtEntryOf('data')], { ...env(), NATS_NAMESPACE: ns, EVENT_STREAM_REPLICAS: '3' });
      expect(r.code).toBe(78);
      expect(r.lines).toEqual([
        expect.stringMatching(
          /^config error: EVENT_STREAM_REPLICAS: 3, but the event stream \S+ on this NATS has 1 replica; set EVENT_STREAM_REPLICAS=1, or change the stream first/,
        ),
      ]);
    } finally {
      await bus.deleteStream();
      await bus.drain();
    }
  });

  it('a missing database is one line naming it and DATABASE_URL, exit 78 (a setting: no restart mends it)', async () => {
    const url = new URL(env().DATABASE_URL);
    url.pathname = '/vcs_no_such_database';
    const r = await run([builtEntryOf('gateway')], { ...env(), DATABASE_URL: url.toString() });
    expect(r.code).toBe(78);
    expect(r.lines).toEqual([
      expect.stringMatching(
        /^config error: DATABASE_URL: Postgres at .*vcs_no_such_database refuses it: database "vcs_no_such_database" does not exist \(create that database, or correct DATABASE_URL\)$/,
      ),
    ]);
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
        expect(r.lines, service).toEqual([
          expect.stringMatching(/cannot start: the event stream .* cannot be made on this NATS: .*NATS_NAMESPACE/),
        ]);
      }
    } finally {
      await jsm.streams.delete(`OTHER_${ns}`);
      await nc.drain();
    }
  });

  it('start:distributed refuses a wrong replica count, and stops everything, naming it, when a service exits', async () => {
    const launch = (extra: Record<string, string>) =>
      run([join(root, 'node_modules/tsx/dist/cli.mjs'), 'deploy/launch.ts'], { ...env(), PORT: '0', ...extra }, 40_000);
    const bad = await launch({ REPLICAS_DATA: 'abc' });
    expect(bad.code).toBe(78);
    expect(bad.lines).toEqual(['config error: REPLICAS_DATA: expected a whole number from 1 to 64 (value: "abc")']);
    const dies = await launch({ CONNECTION_ENCRYPTION_KEY: 'short', NATS_NAMESPACE: `tl${Date.now().toString(36)}` });
    expect(dies.code).toBe(78);
    expect(dies.lines.join('\n')).toMatch(
      /services-pillar replica 1 \(pid \d+\) exited with code 78; stopping the other services/,
    );
  }, 60_000);

  it('start:distributed stops everything, naming the service, only when one is left with no replica after repeated failures', async () => {
    const r = await run(
      [join(root, 'node_modules/tsx/dist/cli.mjs'), 'deploy/launch.ts'],
      {
        ...env(),
        PORT: '0',
        NATS_URL: 'nats://127.0.0.1:1',
        STARTUP_TIMEOUT_MS: '100',
        CONNECTION_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      },
      60_000,
    );
    expect(r.code).toBe(1);
    const said = r.lines.join('\n');
    expect(said).toMatch(/restarting it in 500 ms \(0 other \S+ replicas serving\)/);
    expect(said).toMatch(
      /(\S+) replica 1 \(pid \d+\) exited with code 1, its 5th failure in a row, and no \1 replica is left; stopping the other services/,
    );
  }, 60_000);

  it('start:distributed supervises: a replica killed -9 is named and restarted while its sibling serves', async () => {
    const stores = await freshStores();
    const port = await freePort();
    // Node with tsx's loader, not tsx's CLI (which runs the script in a child): the services are this process's children.
    const launcher = spawn(process.execPath, ['--import', 'tsx', 'deploy/launch.ts'], {
      cwd: root,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: {
        PATH: process.env.PATH!,
        HOME: process.env.HOME!,
        ...stores,
        PORT: String(port),
        REPLICAS_SERVICES: '2',
        CONNECTION_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
        ...RELAXED,
      },
    });
    let err = '';
    launcher.stderr.on('data', (d) => (err += d));
    const pillars = () =>
      spawnSync('pgrep', ['-P', String(launcher.pid), '-f', 'services-pillar'], { encoding: 'utf8' })
        .stdout.split('\n')
        .filter(Boolean)
        .map(Number);
    const base = `http://127.0.0.1:${port}`;
    try {
      await waitFor(
        async () =>
          (await fetch(`${base}/signings/status?vin=1HGCM82633A004352`)).status === 200 && pillars().length === 2,
        60_000,
        250,
      ).catch((e) => {
        throw new Error(
          `${(e as Error).message}: ${pillars().length} services-pillar processes; launcher said: ${err}`,
        );
      });
      const [victim] = pillars();
      process.kill(victim!, 'SIGKILL');
      const reads: number[] = [];
      for (const until = Date.now() + 3000; Date.now() < until;)
        reads.push((await fetch(`${base}/signings/status?vin=1HGCM82633A004352`)).status);
      expect(reads.filter((s) => s !== 200)).toEqual([]); // the sibling serves (a read meeting the dead one is retried)
      expect(err).toMatch(
        new RegExp(
          `services-pillar replica \\d \\(pid ${victim}\\) exited SIGKILL; restarting it in 500 ms \\(1 other services-pillar replica serving\\)`,
        ),
      );
      await waitFor(async () => pillars().length === 2 && !pillars().includes(victim!), 30_000, 250);
      expect(launcher.exitCode).toBeNull();
    } finally {
      launcher.kill('SIGTERM');
      await new Promise((r) => (launcher.exitCode !== null ? r(null) : launcher.once('exit', r)));
      await dropStores(stores);
    }
  }, 120_000);
});
