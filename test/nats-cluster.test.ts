/**
 * The distributed processes on a three-node NATS cluster (Debian's nats-server, started by test/support/nats-cluster.ts)
 * with a 3-replica event stream: under a light keyed write load (8 webhook.emit a second, each naming its own VIN,
 * delivered to a real receiver), the stream leader, then a consumer's leader, then the node the gateway is
 * connected to is killed -9 and later started again. Counted: every answered write's event delivered exactly once
 * (matched by VIN and event id, as the compose suite does), at most the writes in flight at a kill refused, no
 * process restarted, and how long events took to flow again. Needs Postgres and Redis (DATABASE_URL, REDIS_URL).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_STREAM } from '@vcs/contract';
import { call, distributedEnv, mintKey, paid, startDistributedHarness, type Harness } from './support/harness.ts';
import { natsServerInstalled, startNatsCluster, type NatsCluster } from './support/nats-cluster.ts';
import { expectGatewayMoved, expectNodeLossHeld, loseNodesUnderLoad } from './support/node-loss.ts';
import { startReceiver } from './support/receiver.ts';

process.env.WEBHOOK_ALLOW_PRIVATE_TARGETS = 'true';
process.env.WEBHOOK_RETRY_SCHEDULE_MS = ['0', ...Array(30).fill('1000')].join(',');

const runs = !!distributedEnv() && natsServerInstalled();
if (!runs)
  console.warn('nats-cluster suite skipped: needs DATABASE_URL, REDIS_URL (and NATS_URL) and /usr/sbin/nats-server');

describe.skipIf(!runs)('on a three-node NATS cluster with a 3-replica event stream', () => {
  let cluster: NatsCluster;
  let h: Harness;
  beforeAll(async () => {
    cluster = await startNatsCluster(3);
    h = await startDistributedHarness({ env: { NATS_URL: cluster.urls, EVENT_STREAM_REPLICAS: '3' } });
  }, 120_000);
  afterAll(async () => {
    await h?.stop();
    await cluster?.destroy();
  }, 60_000);

  it("loses a node three times under load (stream leader, a consumer leader, the gateway's node): 0 lost, 0 doubled, flowing again in seconds", async () => {
    const stream = `${EVENT_STREAM}_${h.env!.NATS_NAMESPACE}`;
    const rx = await startReceiver();
    const { key } = await mintKey(h.baseUrl);
    const reg = await paid(h.baseUrl, '/webhooks/register', key, { url: rx.url });
    expect(reg.status).toBe(200);
    const endpointId = reg.json.value.registration.id;
    expect(
      (await paid(h.baseUrl, '/webhooks/subscribe', key, { endpointId, eventTypes: ['TotalLoss.*'] })).status,
    ).toBe(200);
    try {
      const run = await loseNodesUnderLoad({
        baseUrl: h.baseUrl,
        key,
        endpointId,
        rx,
        probe: cluster,
        stream,
        nodeName: /^n\d$/,
        kill: (node) => cluster.node(node).kill('SIGKILL'),
        start: (node) => cluster.node(node).start(),
      });
      expectNodeLossHeld(run);
    } finally {
      await rx.close();
    }
    // No process restarted: every one the harness started is still running.
    expect([...h.procs!.values()].flat().filter((c) => c.exitCode !== null || c.signalCode !== null).length).toBe(0);
    await expectGatewayMoved(async () => (await call(h.baseUrl, 'GET', '/metrics')).text);
    expect((await call(h.baseUrl, 'GET', '/readyz')).status).toBe(200);
  }, 240_000);
});
