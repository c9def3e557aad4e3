/**
 * The deployment as an operator runs it: deploy/docker-compose.yml and deploy/Dockerfile, unchanged, brought up by
 * testcontainers' DockerComposeEnvironment on a container engine, with only the base images swapped for local ones
 * made from Debian's packages and the npm registry's Node (deploy/test-images/make.sh; .ci/run runs it).
 * It runs with the distributed suites (NATS_URL, DATABASE_URL and REDIS_URL set, as CI sets them), so the test command
 * as the README writes it stays an embedded run of a few minutes. Without an engine it is skipped, saying why; in CI
 * it must run.
 */
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capabilities, EVENT_STREAM } from '@vcs/contract';
import { callThrough, sampleInput } from './support/capabilityCalls.ts';
import { call, distributedEnv, mintKey, paid, waitFor } from './support/harness.ts';
import { clusterProbe } from './support/nats-cluster.ts';
import {
  expectGatewayMoved,
  expectNodeLossHeld,
  loseNodesUnderLoad,
  vinNo,
  waitForDrained,
} from './support/node-loss.ts';
import { startReceiver } from './support/receiver.ts';

process.env.TESTCONTAINERS_RYUK_DISABLED = 'true'; // its reaper image cannot be pulled here; afterAll takes the stack down
process.env.TESTCONTAINERS_HOST_OVERRIDE ??= '127.0.0.1';
const { DockerComposeEnvironment, Wait } = await import('testcontainers');

const run = promisify(execFile);
const deployDir = join(import.meta.dirname, '..', 'deploy');
const distributedRun = distributedEnv() !== null;
const engine =
  distributedRun &&
  spawnSync('docker', ['info'], { stdio: 'ignore' }).status === 0 &&
  spawnSync('docker', ['image', 'inspect', 'local/node:ci'], { stdio: 'ignore' }).status === 0;
if (!engine && process.env.CI)
  throw new Error(
    'CI must run the compose suite: no container engine or no local base images (bash deploy/test-images/make.sh)',
  );
if (!distributedRun)
  console.warn(
    'compose suite skipped: it runs with the distributed suites, when NATS_URL, DATABASE_URL and REDIS_URL are set',
  );
else if (!engine)
  console.warn(
    'compose suite skipped: no container engine, or no local base images (run bash deploy/test-images/make.sh as root)',
  );

const project = `vcsci${randomBytes(3).toString('hex')}`;
const env = {
  NATS_IMAGE: 'local/nats:ci',
  POSTGRES_IMAGE: 'local/postgres:ci',
  REDIS_IMAGE: 'local/redis:ci',
  NODE_IMAGE: 'local/node:ci',
  // PgBouncer's base: the same Debian root with the package in it (deploy/pgbouncer/Dockerfile then installs nothing).
  DEBIAN_IMAGE: 'local/debian:ci',
  // The test command type-checks these sources (test/typecheck.test.ts): the image's own tsc would repeat it.
  IMAGE_TYPECHECK: '0',
  POSTGRES_PASSWORD: randomBytes(12).toString('hex'),
  CONNECTION_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  GATEWAY_PORT: '0',
  DOCKER_BUILDKIT: '0',
  COMPOSE_DOCKER_CLI_BUILD: '0',
  // The load below is thousands of calls a minute from one address and one key: above the default limits.
  RATE_LIMIT_ANON_PER_MIN: '1000000',
  RATE_LIMIT_SANDBOX_PER_MIN: '1000000',
  RATE_LIMIT_MINT_PER_MIN: '100000',
  // This suite's receivers run on the host, which the containers reach at their network's (private) gateway address;
  // retries every 3 s for a minute, so an undelivered event is still being retried across a restart of the stack.
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_RETRY_SCHEDULE_MS: ['0', ...Array(20).fill('3000')].join(','),
};
/**
 * `docker compose` on this project, as an operator would type it: the secrets from the environment, or with
 * `secretsDir` from files (docker-compose.secrets.yml; the environment's values are then not passed at all).
 */
const composeWith = (opts: { secretsDir?: string }, ...args: string[]) => {
  const files = ['docker-compose.yml', ...(opts.secretsDir ? ['docker-compose.secrets.yml'] : [])].flatMap((f) => [
    '-f',
    join(deployDir, f),
  ]);
  const e: NodeJS.ProcessEnv = { ...process.env, ...env };
  if (opts.secretsDir) {
    delete e.POSTGRES_PASSWORD;
    delete e.CONNECTION_ENCRYPTION_KEY;
    e.VCS_SECRETS_DIR = opts.secretsDir;
  }
  return run('docker', ['compose', '-p', project, ...files, ...args], { env: e, maxBuffer: 16 << 20 });
};
const compose = (...args: string[]) => composeWith({}, ...args);
const eventOf = (r: { body: string }) => JSON.parse(r.body) as { id: string; type: string; vin: string | null };
const servedBy = (r: { headers: Headers }) => r.headers.get('x-served-by') ?? '';

describe.runIf(engine)('the compose deployment (deploy/docker-compose.yml through testcontainers)', () => {
  let stack: Awaited<ReturnType<InstanceType<typeof DockerComposeEnvironment>['up']>>;
  let base = '';
  let secretsDir: string | undefined; // the last test's secret files, removed with the stack
  const gatewayUrl = async () => {
    const { stdout } = await compose('port', 'gateway', '8080');
    return `http://127.0.0.1:${stdout.trim().split(':').pop()}`;
  };

  beforeAll(async () => {
    stack = await new DockerComposeEnvironment(deployDir, 'docker-compose.yml')
      .withProjectName(project)
      .withBuild()
      .withEnvironment(env)
      .withWaitStrategy('gateway-1', Wait.forHealthCheck())
      .withStartupTimeout(300_000)
      .up();
    base = await gatewayUrl();
  }, 900_000); // a cold build of the image (its dependency layer after a lockfile change) has taken over 10 minutes here

  const inspect = async (ids: string[], format: string) =>
    (await run('docker', ['inspect', '-f', format, ...ids])).stdout.trim().split('\n');
  const nodes = ['nats-1', 'nats-2', 'nats-3']; // the compose services, each started with --name <service> (its server_name)
  /**
   * The stack's NATS cluster as the host reaches it: each node's client and monitoring ports at its address on the
   * project's network (none of them published), asked afresh each time (a node killed or started meanwhile counts).
   */
  const natsProbe = () =>
    clusterProbe(async () =>
      (
        await inspect(
          nodes.map((n) => `${project}-${n}-1`),
          '{{.State.Running}} {{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}',
        )
      ).flatMap((line, i) => {
        const [up, ip] = line.split(' ');
        return up === 'true' && ip
          ? [{ name: nodes[i]!, url: `nats://${ip}:4222`, monitorUrl: `http://${ip}:8222` }]
          : [];
      }),
    );

  /** A receiver on the host, registered and subscribed for a new key: what the containers deliver to it. */
  const subscribedReceiver = async (eventTypes: string[], respond?: Parameters<typeof startReceiver>[0]) => {
    const { stdout } = await run('docker', [
      'network',
      'inspect',
      `${project}_default`,
      '-f',
      '{{(index .IPAM.Config 0).Gateway}}',
    ]);
    const rx = await startReceiver(respond, { listen: '0.0.0.0', urlHost: stdout.trim() });
    const { key } = await mintKey(base);
    const reg = await paid(base, '/webhooks/register', key, { url: rx.url });
    expect(reg.status).toBe(200);
    const endpointId = reg.json.value.registration.id;
    expect((await paid(base, '/webhooks/subscribe', key, { endpointId, eventTypes })).status).toBe(200);
    return { rx, key, endpointId };
  };
  afterAll(async () => {
    // A stack whose start timed out is still coming up, with no handle to it: taken down by its project name.
    if (stack) await stack.down({ timeout: 10_000, removeVolumes: true });
    else await compose('down', '--volumes', '--timeout', '10').catch(() => undefined);
    if (secretsDir) rmSync(secretsDir, { recursive: true, force: true });
  }, 120_000);

  it('every process reaches Postgres through PgBouncer, which alone holds connections to it', async () => {
    // Each process has connected (the walk below and the readiness checks need the store); Postgres sees one client
    // address for the service's database: PgBouncer's.
    const { key } = await mintKey(base);
    expect((await call(base, 'GET', '/keys/me', { key })).status).toBe(200);
    /** A query in the postgres container, as its local superuser `vcs`, answered unaligned. */
    const psql = async (sql: string) =>
      (await compose('exec', '-T', 'postgres', 'psql', '-U', 'vcs', '-d', 'vcs', '-Atc', sql)).stdout.trim();
    const stdout = await psql(
      "select count(*), count(distinct client_addr) from pg_stat_activity where datname = 'vcs' and pid <> pg_backend_pid()",
    );
    const [connections, addresses] = stdout.split('|').map(Number);
    expect(connections).toBeGreaterThan(0);
    expect(addresses).toBe(1);
    const [{ stdout: bouncer }, { stdout: gateway }] = await Promise.all([
      compose('ps', '-q', 'pgbouncer'),
      compose('ps', '-q', 'gateway'),
    ]);
    const ipOf = async (id: string) =>
      (await inspect([id.trim()], '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}'))[0];
    const from = await psql(
      "select distinct host(client_addr) from pg_stat_activity where datname = 'vcs' and pid <> pg_backend_pid()",
    );
    expect(from).toBe(await ipOf(bouncer));
    expect(from).not.toBe(await ipOf(gateway));
  });

  it('walks every capability and the money, webhook and deal flows through the published port', async () => {
    expect((await call(base, 'GET', '/catalog')).status).toBe(200);
    const { key } = await mintKey(base);
    for (const c of capabilities
      .filter((x) => x.gate === 'none' || x.gate === 'key')
      .filter((x) => x.noun !== 'apiKey' && x.name !== 'poa.notarize')) {
      const r = await callThrough(base, c, sampleInput(c), key);
      expect([c.name, r.status, r.answer?.type]).toEqual([c.name, 200, 'OK']);
    }
    const quote = await call(base, 'POST', '/signings/quote', { key, body: { vin: '1HGCM82633A004352' } });
    expect([quote.status, quote.json.type]).toEqual([402, 'OFFER']);
    const settled = await call(base, 'POST', quote.json.value.settle.path, { key });
    expect([settled.status, settled.json.type, settled.json.answers]).toEqual([200, 'OK', 'SigningQuote@1']);
    const hook = await call(base, 'POST', '/webhooks/register', {
      key,
      body: { url: 'http://93.184.216.34/hook' },
      headers: { 'accept-price': '1000.00 USD' },
    });
    expect([hook.status, hook.json.value.registration.secretOnce]).toEqual([200, expect.stringMatching(/^whsec_/)]);
    const deal = await call(base, 'POST', '/buy/deals', {
      key,
      body: { vin: '1HGCM82633A004352', buyer: { name: 'Ada', zip: '94103' } },
    });
    expect([deal.status, deal.json.value.state]).toEqual([200, 'OPENED']);
    const advanced = await call(base, 'POST', `/buy/deals/${deal.json.value.dealId}/advance`, { key });
    expect([402, 403, 200]).toContain(advanced.status);
  }, 120_000);

  it('scales the services pillar to three replicas, and all three serve', async () => {
    await compose('up', '-d', '--no-recreate', '--scale', 'services-pillar=3', '--wait');
    const seen = new Set<string>();
    await waitFor(
      async () => {
        for (let i = 0; i < 30; i++)
          seen.add(servedBy(await call(base, 'GET', '/signings/status?vin=1HGCM82633A004352')));
        return seen.size >= 3;
      },
      30_000,
      200,
    );
    expect(seen.size).toBe(3);
  }, 180_000);

  it('a killed pillar container fails only calls in flight, each a typed 503; reads do not fail; no event is lost or doubled', async () => {
    const { rx, key, endpointId } = await subscribedReceiver(['TotalLoss.*']);
    const { stdout } = await compose('ps', '-q', 'services-pillar');
    const victim = stdout.trim().split('\n')[0]!;
    const reads: number[] = [];
    // Each write is a webhook.emit (run by the services pillar) naming its own VIN: its one event,
    // Webhook.emitted@1, carries that VIN to the receiver, so every answered write is matched to its event's id.
    const writes: { vin: string; status: number; code?: string }[] = [];
    let going = true;
    let n = 0;
    const load = Promise.all(
      Array.from({ length: 4 }, async (_, lane) => {
        while (going) {
          if (lane % 2) reads.push((await call(base, 'GET', '/signings/status?vin=1HGCM82633A004352', { key })).status);
          else {
            const vin = vinNo(++n);
            const w = await paid(base, '/webhooks/emit', key, { vin, endpointId });
            writes.push({ vin, status: w.status, code: w.json?.value?.code });
          }
        }
      }),
    );
    await new Promise((r) => setTimeout(r, 1000));
    await run('docker', ['kill', victim]);
    await new Promise((r) => setTimeout(r, 2000));
    // Enough answered writes to judge by, however slow a loaded machine is: what is checked is the outcomes, not speed.
    for (let waited = 0; waited < 60_000 && writes.filter((w) => w.status === 200).length <= 10; waited += 250)
      await new Promise((r) => setTimeout(r, 250));
    going = false;
    await load;
    try {
      expect(reads.length).toBeGreaterThan(10);
      expect(reads.filter((s) => s !== 200)).toEqual([]); // a read meeting the dead replica is retried on another
      const failed = writes.filter((w) => w.status !== 200);
      // A settled write whose pillar died mid-call is in doubt (execution-pending: it commits at most once, and is taken
      // up again by itself); one that met no replica is pillar-unavailable. Both are typed 503s, never a 500 or a 402.
      expect(
        failed.filter((w) => w.status !== 503 || (w.code !== 'pillar-unavailable' && w.code !== 'execution-pending')),
      ).toEqual([]);
      expect(failed.length).toBeLessThanOrEqual(4); // at most the calls in flight on the killed replica
      const answered = writes.filter((w) => w.status === 200);
      expect(answered.length).toBeGreaterThan(10);
      // The event ids delivered for each VIN. Delivery is at least once: the same event (same webhook-id) may come
      // again (a send cut off by the kill is retried), so only distinct ids count; a second id would be a doubled event.
      const idsOf = () => {
        const m = new Map<string, Set<string>>();
        for (const r of rx.received) {
          const e = eventOf(r);
          expect(e.id).toBe(r.id); // the webhook-id header names the event it carries
          if (e.type === 'Webhook.emitted@1') m.set(e.vin!, (m.get(e.vin!) ?? new Set()).add(e.id));
        }
        return m;
      };
      await waitFor(async () => answered.every((w) => idsOf().has(w.vin)), 60_000, 250);
      // A doubled event would be one more message in the stream: wait until every consumer has taken and acknowledged
      // all it holds, twice running with nothing new (on events, not a fixed wait).
      await waitForDrained(natsProbe(), EVENT_STREAM);
      const ids = idsOf();
      // Not lost: every answered write's event arrived; not doubled: under exactly one id.
      expect(
        answered.filter((w) => ids.get(w.vin)?.size !== 1).map((w) => [w.vin, [...(ids.get(w.vin) ?? [])]]),
      ).toEqual([]);
      // A write cut off in flight may or may not have committed its event: at most one id, and no event for a VIN
      // nobody wrote.
      expect(failed.filter((w) => (ids.get(w.vin)?.size ?? 0) > 1)).toEqual([]);
      const written = new Set(writes.map((w) => w.vin));
      expect([...ids.keys()].filter((v) => !written.has(v))).toEqual([]);
      expect(new Set([...ids.values()].flatMap((s) => [...s])).size).toBe(
        [...ids.values()].reduce((t, s) => t + s.size, 0),
      ); // no id under two VINs
    } finally {
      await rx.close();
    }
  }, 120_000);

  it("loses one NATS node at a time under load (stream leader, a consumer leader, the gateway's node): 0 lost, 0 doubled, flowing again in seconds, no container restarted", async () => {
    const { rx, key, endpointId } = await subscribedReceiver(['TotalLoss.*']);
    // The host reaches each container at its address on the project's network: the nodes' client and monitoring
    // ports, and the gateway's metrics port, none of them published.
    const probe = natsProbe();
    const services = ['gateway', 'data', 'services-pillar', 'commerce', 'workflows'];
    const containers = async () =>
      (
        await inspect(
          (await compose('ps', '-q', ...services)).stdout.trim().split('\n'),
          '{{.Name}} {{.State.Running}} {{.State.StartedAt}} {{.RestartCount}}',
        )
      ).sort();
    const before = await containers();
    try {
      const ran = await loseNodesUnderLoad({
        baseUrl: base,
        key,
        endpointId,
        rx,
        probe,
        stream: EVENT_STREAM,
        nodeName: /^nats-\d$/,
        firstVin: 100_001,
        kill: async (node) => {
          await compose('kill', node);
        },
        start: async (node) => {
          await compose('start', node);
        },
      });
      expectNodeLossHeld(ran);
    } finally {
      await rx.close();
    }
    // No service container restarted (by Docker's policy or otherwise): each still running since the same moment.
    expect(await containers()).toEqual(before);
    const [gatewayIp] = await inspect(
      [(await compose('ps', '-q', 'gateway')).stdout.trim()],
      '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}',
    );
    await expectGatewayMoved(async () => (await fetch(`http://${gatewayIp}:9090/metrics`)).text());
    expect((await call(base, 'GET', '/readyz')).status).toBe(200);
  }, 300_000);

  it('a restarted NATS container: everything reconnects by itself, every pillar serves, events are delivered', async () => {
    const { rx, key, endpointId } = await subscribedReceiver(['TotalLoss.*']);
    try {
      // All three nodes of the cluster at once: the whole bus gone, then back.
      await run('docker', ['restart', `${project}-nats-1-1`, `${project}-nats-2-1`, `${project}-nats-3-1`]);
      const VIN = '1HGCM82633A004352';
      await waitFor(
        async () =>
          (await call(base, 'GET', `/signings/status?vin=${VIN}`)).status === 200 && // services pillar
          (await call(base, 'POST', '/keys')).status === 200 && // commerce
          (await call(base, 'GET', `/mcos/status?vin=${VIN}`)).status === 200 && // data (a decode may come from the gateway's memory)
          (await call(base, 'POST', '/buy/deals', { key, body: { vin: VIN, buyer: { name: 'Ada', zip: '94103' } } }))
            .status === 200, // workflows
        60_000,
        500,
      );
      const deal = await call(base, 'POST', '/buy/deals', {
        key,
        body: { vin: VIN, buyer: { name: 'Ada', zip: '94103' } },
      });
      expect((await call(base, 'GET', `/buy/deals/${deal.json.value.dealId}`, { key })).status).toBe(200);
      // An event made after the restart goes through the stream to the receiver.
      const vin = vinNo(900_001);
      let emitted = 0;
      await waitFor(
        async () => (emitted = (await paid(base, '/webhooks/emit', key, { vin, endpointId })).status) === 200,
        30_000,
        500,
      );
      expect(emitted).toBe(200);
      await waitFor(async () => rx.received.some((r) => eventOf(r).vin === vin && r.status === 204), 30_000, 250);
    } finally {
      await rx.close();
    }
  }, 180_000);

  it('stopped and started again on the same volumes (now with its secrets from files), keys, intents, deals and undelivered webhooks survive', async () => {
    // The receiver refuses until the stack has been restarted: the test event sent to it (whatever its subscriptions)
    // is still undelivered when the stack stops.
    let restarted = false;
    const { rx, key } = await subscribedReceiver(['TotalLoss.*'], () => (restarted ? 204 : 503));
    try {
      const emitted = await paid(base, '/webhooks/emit', key, {});
      expect(emitted.status).toBe(200);
      await waitFor(async () => rx.received.length >= 1, 30_000, 100);
      const eventId = rx.received[0]!.id;
      const offer = (await call(base, 'POST', '/signings/quote', { key, body: { vin: '1HGCM82633A004352' } })).json;
      const deal = (
        await call(base, 'POST', '/buy/deals', {
          key,
          body: { vin: '1HGCM82633A004352', buyer: { name: 'Ada', zip: '94103' } },
        })
      ).json;
      await compose('stop');
      restarted = true;
      // The same secrets, now as files (docker-compose.secrets.yml): the operator's other path, on the same volumes.
      secretsDir = mkdtempSync(join(tmpdir(), 'vcs-secrets-'));
      const files = {
        connection_encryption_key: env.CONNECTION_ENCRYPTION_KEY,
        postgres_password: env.POSTGRES_PASSWORD,
        database_url: `postgres://vcs:${env.POSTGRES_PASSWORD}@pgbouncer:5432/vcs`,
        x402_receipt_signing_key: randomBytes(32).toString('base64'),
        // Payments stay off: the facilitator's and the chain node's files are empty.
        x402_facilitator_url: '',
        x402_rpc_url: '',
      };
      for (const [name, value] of Object.entries(files)) {
        writeFileSync(join(secretsDir, name), `${value}\n`);
        chmodSync(join(secretsDir, name), 0o444);
      }
      await composeWith({ secretsDir }, 'up', '-d', '--wait').catch(async (e: Error) => {
        // Which service did not become healthy, and why: its last health checks and log lines.
        const { stdout: ids } = await composeWith({ secretsDir }, 'ps', '-aq');
        const states = await inspect(ids.trim().split('\n'), '{{.Name}} {{.State.Status}} {{json .State.Health}}');
        const { stdout: logs } = await composeWith({ secretsDir }, 'logs', '--no-color', '--tail', '30', 'gateway');
        throw new Error(`${e.message}\n${states.join('\n')}\n${logs}`);
      });
      const { stdout: pillar } = await compose('ps', '-q', 'services-pillar');
      const { stdout: seen } = await run('docker', [
        'inspect',
        '-f',
        '{{json .Config.Env}}',
        pillar.trim().split('\n')[0]!,
      ]);
      const pillarEnv = JSON.parse(seen) as string[];
      expect(pillarEnv).toContain('CONNECTION_ENCRYPTION_KEY_FILE=/run/secrets/connection_encryption_key');
      expect(pillarEnv.filter((v) => /^(CONNECTION_ENCRYPTION_KEY|DATABASE_URL|POSTGRES_PASSWORD)=/.test(v))).toEqual(
        [],
      );
      const { stdout: gw } = await compose('ps', '-q', 'gateway');
      const gatewayEnv = JSON.parse(
        (await run('docker', ['inspect', '-f', '{{json .Config.Env}}', gw.trim().split('\n')[0]!])).stdout,
      ) as string[];
      expect(gatewayEnv).toContain('X402_RECEIPT_SIGNING_KEY_FILE=/run/secrets/x402_receipt_signing_key');
      expect(
        gatewayEnv.filter((v) => /^(X402_RECEIPT_SIGNING_KEY|X402_FACILITATOR_URL|X402_RPC_URL)=/.test(v)),
      ).toEqual([]);
      base = await gatewayUrl();
      expect((await call(base, 'GET', '/keys/me', { key })).status).toBe(200);
      const intent = await call(base, 'GET', `/intents/${offer.value.intent.id}`, { key });
      expect([intent.status, intent.json.value.status]).toEqual([200, 'pending']);
      expect((await call(base, 'GET', `/buy/deals/${deal.value.dealId}`, { key })).status).toBe(200);
      await waitFor(async () => rx.received.some((r) => r.id === eventId && r.status === 204), 60_000, 250);
    } finally {
      await rx.close();
    }
  }, 300_000);
});
