import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { Db } from './store/db.ts';

/**
 * One Prometheus registry per process: process metrics (CPU, RSS, event-loop lag) plus the service's own.
 * The gateway adds its request counters; pillars expose it on HEALTH_PORT. Served at GET /metrics.
 */
export const metricsRegistry = new Registry();
// Event-loop lag sampled every 100 ms, not prom-client's default 10 ms: that timer woke every process 100 times a
// second, idle or not, and a wake-up is real CPU on a shared core. Lag percentiles stay meaningful at 100 ms.
collectDefaultMetrics({ register: metricsRegistry, prefix: 'vcs_', eventLoopMonitoringPrecision: 100 });

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
