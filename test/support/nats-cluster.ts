import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { exited, freePort } from './harness.ts';
import { portOpen, waitPort } from './private-infra.ts';

export const NATS_SERVER = '/usr/sbin/nats-server';
export const natsServerInstalled = () => existsSync(NATS_SERVER);

/** One node of a private cluster: its name (server_name), client URL and monitoring port; kill -9 and start again. */
export interface ClusterNode {
  name: string;
  url: string;
  port: number;
  monitorPort: number;
  readonly pid?: number;
  kill(signal?: NodeJS.Signals): Promise<void>;
  start(): Promise<void>;
}
/** What a test asks of a running cluster, whoever runs it (this file's processes, or compose's containers). */
export interface ClusterProbe {
  /** JetStream's account info: answers only once the nodes have found each other and elected a meta leader. */
  accountInfo(): Promise<unknown>;
  /** Which node each connection of this name is on (the monitoring endpoint's /connz). */
  connectedNodesOf(connectionName: string): Promise<string[]>;
  /** The stream's leader and a consumer's leader (server names), asked of any live node. */
  leaders(stream: string, consumer?: string): Promise<{ stream?: string; consumer?: string }>;
  /** Ask a consumer's leader to step down (another replica takes over): to place leaders where a test needs them. */
  stepDownConsumer(stream: string, consumer: string): Promise<void>;
  /**
   * Whether the stream and the consumer each have a leader and `replicas` members, every one of them online and
   * current (caught up with its leader): a node started again has rejoined both groups.
   */
  replicasCurrent(stream: string, consumer: string, replicas: number): Promise<boolean>;
  /**
   * Where the stream and its consumers stand when every consumer has taken and acknowledged all it holds (nothing
   * pending, nothing unacknowledged); null while one has not. The same answer twice running means nothing moved.
   */
  drainedAt(stream: string): Promise<string | null>;
}
export interface NatsCluster extends ClusterProbe {
  nodes: ClusterNode[];
  /** The seed list, as NATS_URL takes it. */
  urls: string;
  node(name: string): ClusterNode;
  destroy(): Promise<void>;
}

/** A live node as a probe reaches it: server name, client URL, monitoring base URL. */
export interface LiveNode {
  name: string;
  url: string;
  monitorUrl: string;
}

/** A probe of a cluster through its live nodes, asked afresh on every call (a node killed or started meanwhile counts). */
export function clusterProbe(live: () => Promise<LiveNode[]>): ClusterProbe {
  const ask = async <T>(
    fn: (jsm: Awaited<ReturnType<typeof jetstreamManager>>, nc: Awaited<ReturnType<typeof connect>>) => Promise<T>,
  ): Promise<T> => {
    const nc = await connect({ servers: (await live()).map((n) => n.url), name: 'cluster-probe', timeout: 1000 });
    try {
      return await fn(await jetstreamManager(nc, { timeout: 1000 }), nc);
    } finally {
      await nc.close();
    }
  };
  return {
    accountInfo: () => ask((jsm) => jsm.getAccountInfo()),
    async connectedNodesOf(connectionName) {
      const on: string[] = [];
      for (const n of await live()) {
        const r = await fetch(`${n.monitorUrl}/connz?limit=1000`, { signal: AbortSignal.timeout(2000) }).catch(
          () => null,
        );
        if (!r?.ok) continue;
        const body = (await r.json()) as { connections?: { name?: string }[] };
        if (body.connections?.some((c) => c.name === connectionName)) on.push(n.name);
      }
      return on;
    },
    // Each asked on its own: one without a leader yet (its info times out) does not hide the other's.
    leaders: (stream, consumer) =>
      ask(async (jsm) => {
        const [s, c] = await Promise.all([
          jsm.streams.info(stream).then(
            (i) => i.cluster?.leader,
            () => undefined,
          ),
          consumer
            ? jsm.consumers.info(stream, consumer).then(
                (i) => i.cluster?.leader,
                () => undefined,
              )
            : undefined,
        ]);
        return { stream: s, consumer: c };
      }),
    replicasCurrent: (stream, consumer, replicas) =>
      ask(async (jsm) => {
        const whole = (c?: { leader?: string; replicas?: { current: boolean; offline: boolean }[] }) =>
          !!c?.leader &&
          (c.replicas ?? []).length === replicas - 1 &&
          c.replicas!.every((r) => r.current && !r.offline);
        const [s, c] = await Promise.all([jsm.streams.info(stream), jsm.consumers.info(stream, consumer)]);
        return whole(s.cluster) && whole(c.cluster);
      }),
    drainedAt: (stream) =>
      ask(async (jsm) => {
        const consumers = [];
        for await (const c of jsm.consumers.list(stream)) consumers.push(c);
        if (consumers.some((c) => c.num_pending + c.num_ack_pending > 0)) return null;
        const { state } = await jsm.streams.info(stream);
        return JSON.stringify([state.last_seq, consumers.map((c) => [c.name, c.ack_floor.stream_seq]).sort()]);
      }),
    stepDownConsumer: (stream, consumer) =>
      ask(async (_jsm, nc) => {
        await nc.request(`$JS.API.CONSUMER.LEADER.STEPDOWN.${stream}.${consumer}`, undefined, { timeout: 2000 });
      }),
  };
}

/**
 * A private three-node (by default) NATS cluster of Debian's nats-server processes: routes between all nodes,
 * JetStream with its store under /tmp, a monitoring port each. Resolves once JetStream answers (a meta leader is
 * elected), so a stream with 3 replicas can be made.
 */
export async function startNatsCluster(size = 3): Promise<NatsCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'vcs-natscluster-'));
  const ports = await Promise.all(
    Array.from({ length: size }, async () => ({
      client: await freePort(),
      route: await freePort(),
      monitor: await freePort(),
    })),
  );
  const routes = ports.map((p) => `nats-route://127.0.0.1:${p.route}`);
  const nodes: ClusterNode[] = ports.map((p, i) => {
    const name = `n${i + 1}`;
    const store = join(dir, name);
    mkdirSync(store, { recursive: true });
    const conf = join(dir, `${name}.conf`);
    writeFileSync(
      conf,
      [
        `server_name: ${name}`,
        `listen: 127.0.0.1:${p.client}`,
        `http: 127.0.0.1:${p.monitor}`,
        `jetstream { store_dir: "${store}" }`,
        `cluster { name: vcs-test, listen: 127.0.0.1:${p.route}, routes: [${routes.filter((_, j) => j !== i).join(', ')}] }`,
      ].join('\n'),
    );
    let child: ChildProcess | undefined;
    const node: ClusterNode = {
      name,
      url: `nats://127.0.0.1:${p.client}`,
      port: p.client,
      monitorPort: p.monitor,
      get pid() {
        return child?.pid;
      },
      async start() {
        child = spawn(NATS_SERVER, ['-c', conf, '-l', join(dir, `${name}.log`)], { stdio: 'ignore' });
        await waitPort(p.client, true);
      },
      async kill(signal = 'SIGKILL') {
        if (!child) return;
        const c = child;
        child = undefined;
        const gone = exited(c);
        c.kill(signal);
        await gone;
        await waitPort(p.client, false);
      },
    };
    return node;
  });
  await Promise.all(nodes.map((n) => n.start()));
  const urls = nodes.map((n) => n.url).join(',');
  const probe = clusterProbe(async () =>
    (await Promise.all(nodes.map(async (n) => ((await portOpen(n.port)) ? [n] : []))))
      .flat()
      .map((n) => ({ name: n.name, url: n.url, monitorUrl: `http://127.0.0.1:${n.monitorPort}` })),
  );
  // JetStream answers only once the nodes have found each other and elected a meta leader.
  const until = Date.now() + 30_000;
  for (;;) {
    try {
      await probe.accountInfo();
      break;
    } catch (e) {
      if (Date.now() > until) throw new Error(`NATS cluster: JetStream not ready in 30 s (${(e as Error).message})`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  return {
    ...probe,
    nodes,
    urls,
    node: (name) => nodes.find((n) => n.name === name)!,
    async destroy() {
      await Promise.all(nodes.map((n) => n.kill('SIGKILL').catch(() => undefined)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
