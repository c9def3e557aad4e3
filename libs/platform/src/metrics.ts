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
export function childrenOf<L extends string, C>(metric: { labels(labels: Partial<Record<L, string>>): C }): (labels: Record<L, string>) => C {
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
  help: 'Bus request-reply latency from a caller (the gateway, commerce, workflows) to a pillar, by pillar and outcome (ok, no-responders, timeout, closed)',
  labelNames: ['pillar', 'outcome'] as const,
  buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [metricsRegistry],
});

/** Retries of idempotent reads on another replica after no-responders, a time-out or a closed connection. */
export const busRetries = new Counter({
  name: 'vcs_bus_retries_total',
  help: 'Idempotent calls (GET capabilities, read operations) retried once on another replica, by pillar and the reason of the first failure',
  labelNames: ['pillar', 'reason'] as const,
  registers: [metricsRegistry],
});

const outboxSources = new Set<Db>();

/** A gauge summed over the watched stores on scrape (never on the request path); a store that is down keeps the last value. */
function depthGauge(name: string, help: string, sql: string) {
  return new Gauge({
    name, help, registers: [metricsRegistry],
    async collect() {
      let total = 0;
      for (const db of outboxSources) {
        try {
          const r = await db.query<{ n: string }>(sql);
          total += Number(r.rows[0]?.n ?? 0);
        } catch { /* store down: /readyz says why */ return; }
      }
      this.set(total);
    },
  });
}

/** Unpublished outbox rows, counted when Prometheus scrapes (not on the request path). */
export const outboxDepth = depthGauge('vcs_outbox_unpublished', 'Outbox rows written but not yet relayed to the event stream (sampled on scrape)',
  'select count(*)::text as n from outbox_events where published_at is null');

/** Webhook deliveries waiting to be sent or retried. */
export const webhookQueueDepth = depthGauge('vcs_webhook_pending', 'Webhook deliveries pending (due now or waiting for a retry), sampled on scrape',
  "select count(*)::text as n from webhook_deliveries where status = 'pending'");

/** Count this store in the queue-depth gauges (`vcs_outbox_unpublished`, `vcs_webhook_pending`); returns the undo. */
export function watchOutbox(db: Db): () => void {
  outboxSources.add(db);
  return () => { outboxSources.delete(db); };
}

/** Reject after `ms` so a hung check never hangs a probe. */
export function within<T>(p: Promise<T>, ms: number, fallback: T): Promise<T> {
  let t: NodeJS.Timeout;
  return Promise.race([p.catch(() => fallback), new Promise<T>((r) => { t = setTimeout(() => r(fallback), ms); })]).finally(() => clearTimeout(t));
}

/** The readiness checks every process shares: bus connected, store and Redis answering. */
export async function readiness(infra: { bus: { isConnected(): boolean }; db: Db; kv: { ping(): Promise<boolean> } }) {
  const [store, redis] = await Promise.all([within(infra.db.ping(), 1500, false), within(infra.kv.ping(), 1500, false)]);
  const checks = { bus: infra.bus.isConnected(), store, redis };
  const failed = Object.entries(checks).filter(([, ok]) => !ok).map(([k]) => k);
  return { ready: failed.length === 0, checks, failed };
}
