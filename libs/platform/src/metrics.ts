import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Db } from './store/db.ts';

/**
 * One Prometheus registry per process: process metrics (CPU, RSS, event-loop lag) plus the service's own.
 * The gateway adds its request counters; pillars expose it on HEALTH_PORT. Served at GET /metrics.
 */
export const metricsRegistry = new Registry();
// Event-loop lag sampled every 100 ms, not prom-client's default 10 ms: that timer woke every process 100 times a
// second, idle or not, and a wake-up is real CPU on a shared core. Lag percentiles stay meaningful at 100 ms.
collectDefaultMetrics({ register: metricsRegistry, prefix: 'vcs_', eventLoopMonitoringPrecision: 100 });

/**
 * A metric's children, resolved once per label set: observing through a child skips prom-client's label
 * hashing on every request. Label sets are bounded (see capabilityLabel), so the memo is too.
 */
export function childrenOf<L extends string, C>(metric: {
  labels(labels: Partial<Record<L, string>>): C;
}): (labels: Record<L, string>) => C {
  const children = new Map<string, C>();
  return (labels) => {
    const k = Object.values(labels).join('|');
    let child = children.get(k);
    if (!child) children.set(k, (child = metric.labels(labels)));
    return child;
  };
}

/** Round trip caller → pillar → caller over the bus (bus/call.ts), by pillar and outcome. */
export const busRequestSeconds = new Histogram({
  name: 'vcs_bus_request_seconds',
  help:
    'Bus request-reply latency from a caller (the gateway, commerce, workflows) to a pillar, ' +
    'by pillar and outcome (ok, no-responders, timeout, closed)',
  labelNames: ['pillar', 'outcome'] as const,
  buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [metricsRegistry],
});

/** Calls sent again: any call while no replica is subscribed, idempotent reads once after a time-out or a closed bus. */
export const busRetries = new Counter({
  name: 'vcs_bus_retries_total',
  help:
    'Calls sent again, by pillar and the reason: no-responders (any call, while no replica is subscribed, within ' +
    'its time-out), timeout or closed (idempotent calls, once, on another replica)',
  labelNames: ['pillar', 'reason'] as const,
  registers: [metricsRegistry],
});

const outboxSources = new Set<Db>();

/**
 * A gauge summed over the watched stores on scrape (never on the request path); a store that is down keeps the last
 * value.
 */
function depthGauge(name: string, help: string, sql: string) {
  return new Gauge({
    name,
    help,
    registers: [metricsRegistry],
    async collect() {
      let total = 0;
      for (const db of outboxSources) {
        try {
          const r = await db.query<{ n: string }>(sql);
          total += Number(r.rows[0]?.n ?? 0);
        } catch {
          /* store down: /readyz says why */ return;
        }
      }
      this.set(total);
    },
  });
}

/** Unpublished outbox rows, counted when Prometheus scrapes (not on the request path). */
export const outboxDepth = depthGauge(
  'vcs_outbox_unpublished',
  'Outbox rows written but not yet relayed to the event stream (sampled on scrape)',
  'select count(*)::text as n from outbox_events where published_at is null',
);

/** Webhook deliveries waiting to be sent or retried. */
export const webhookQueueDepth = depthGauge(
  'vcs_webhook_pending',
  'Webhook deliveries pending (due now or waiting for a retry), sampled on scrape',
  "select count(*)::text as n from webhook_deliveries where status = 'pending'",
);

/** Age of the oldest outbox row not yet relayed: how far behind the stream is (0 when none waits). */
export const outboxLag = new Gauge({
  name: 'vcs_outbox_lag_seconds',
  help:
    'Age in seconds of the oldest outbox row not yet relayed to the event stream (0 when none waits), ' +
    'sampled on scrape',
  registers: [metricsRegistry],
  async collect() {
    let oldest = 0;
    for (const db of outboxSources) {
      try {
        const r = await db.query<{ s: string | null }>(
          'select extract(epoch from now() - min(created_at))::text as s from outbox_events where published_at is null',
        );
        oldest = Math.max(oldest, Number(r.rows[0]?.s ?? 0));
      } catch {
        return;
      }
    }
    this.set(oldest);
  },
});

/** The NATS connection and JetStream publishes (bus/nats.ts). */
export const busState = {
  connected: new Gauge({
    name: 'vcs_nats_connected',
    help: '1 while this process is connected to a NATS server, 0 while it reconnects',
    registers: [metricsRegistry],
  }),
  reconnects: new Counter({
    name: 'vcs_nats_reconnects_total',
    help: 'Reconnections to NATS (to the same or another server of the cluster)',
    registers: [metricsRegistry],
  }),
  publishRetries: new Counter({
    name: 'vcs_event_publish_retries_total',
    help: 'JetStream publishes retried (no responders or a time-out during a leader election or a reconnect)',
    registers: [metricsRegistry],
  }),
};

const consumers = new Map<string, { last: number; stalledSince: number; pending: () => Promise<number | undefined> }>();
new Gauge({
  name: 'vcs_event_consumer_pending',
  help: 'Events on the stream this durable consumer has not yet been delivered (num_pending), sampled on scrape',
  labelNames: ['consumer'] as const,
  registers: [metricsRegistry],
  async collect() {
    await Promise.all(
      [...consumers].map(async ([name, c]) => {
        const n = await within(c.pending(), 1000, undefined);
        if (n !== undefined) this.set({ consumer: name }, n);
      }),
    );
  },
});
new Gauge({
  name: 'vcs_event_consumer_last_delivery_seconds',
  help: 'Seconds since this process last received an event on this consumer (or since it started consuming)',
  labelNames: ['consumer'] as const,
  registers: [metricsRegistry],
  collect() {
    for (const [name, c] of consumers) this.set({ consumer: name }, (Date.now() - c.last) / 1000);
  },
});
const consumerStalled = new Gauge({
  name: 'vcs_event_consumer_stalled',
  help: '1 while this consumer has missed its heartbeats or its pull went unanswered, until it receives again',
  labelNames: ['consumer'] as const,
  registers: [metricsRegistry],
});

/** A consumer's health, for its metrics and /readyz: delivered, stalled or flowing again, removed at stop. */
export function consumerWatch(name: string, pending: () => Promise<number | undefined>) {
  const c = { last: Date.now(), stalledSince: 0, pending };
  consumers.set(name, c);
  consumerStalled.set({ consumer: name }, 0);
  return {
    delivered() {
      c.last = Date.now();
    },
    stalled(on: boolean) {
      c.stalledSince = on ? Date.now() : 0;
      consumerStalled.set({ consumer: name }, on ? 1 : 0);
    },
    remove() {
      consumers.delete(name);
    },
  };
}

/** Since when publishing events fails (0 when it works): the outbox relay sets it (events/outbox.ts). */
export const eventFlow = { publishFailingSince: 0 };

/** What keeps a process from publishing or consuming events longer than `allowMs`: `publish`, `consume`, or nothing. */
export function eventFlowProblems(allowMs: number, now = Date.now()): string[] {
  const out: string[] = [];
  if (eventFlow.publishFailingSince && now - eventFlow.publishFailingSince > allowMs) out.push('publish');
  for (const c of consumers.values())
    if (c.stalledSince && now - c.stalledSince > allowMs) {
      out.push('consume');
      break;
    }
  return out;
}

/** Count this store in the queue-depth gauges (`vcs_outbox_unpublished`, `vcs_webhook_pending`); returns the undo. */
export function watchOutbox(db: Db): () => void {
  outboxSources.add(db);
  return () => {
    outboxSources.delete(db);
  };
}

/** Reject after `ms` so a hung check never hangs a probe. */
export function within<T>(p: Promise<T>, ms: number, fallback: T): Promise<T> {
  let t: NodeJS.Timeout;
  return Promise.race([
    p.catch(() => fallback),
    new Promise<T>((r) => {
      t = setTimeout(() => r(fallback), ms);
    }),
  ]).finally(() => clearTimeout(t));
}

/**
 * The readiness checks every process shares: bus connected, store and Redis answering, and events flowing: a
 * process that has not been able to publish (`events-publish`) or whose consumer has been stalled
 * (`events-consume`) for longer than `eventStallMs` (EVENT_STALL_READY_MS) is not ready.
 */
export async function readiness(
  infra: { bus: { isConnected(): boolean }; db: Db; kv: { ping(): Promise<boolean> } },
  eventStallMs = 30_000,
) {
  const [store, redis] = await Promise.all([
    within(infra.db.ping(), 1500, false),
    within(infra.kv.ping(), 1500, false),
  ]);
  const events = eventFlowProblems(eventStallMs);
  const checks = {
    bus: infra.bus.isConnected(),
    store,
    redis,
    'events-publish': !events.includes('publish'),
    'events-consume': !events.includes('consume'),
  };
  const failed = Object.entries(checks)
    .filter(([, ok]) => !ok)
    .map(([k]) => k);
  return { ready: failed.length === 0, checks, failed };
}
