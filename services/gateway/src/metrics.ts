import type { FastifyRequest } from 'fastify';
import { Counter, Histogram } from 'prom-client';
import { metricsRegistry } from '@vcs/platform';
import { capabilityOf } from './routeCapability.ts';

export { metricsRegistry };

/** Answers by capability (or platform route), answer kind and HTTP status. */
export const requestsTotal = new Counter({
  name: 'vcs_requests_total',
  help: 'HTTP answers by capability, answer kind (OK, EMPTY, BLOCKED, OFFER) and status',
  labelNames: ['capability', 'kind', 'status'] as const,
  registers: [metricsRegistry],
});

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

const answerCounter = childrenOf(requestsTotal);
export function countAnswer(capability: string, kind: string, status: number) {
  answerCounter({ capability, kind, status: String(status) }).inc();
}

/** Round trip gateway → pillar → gateway over the bus, by pillar and outcome. */
export const busRequestSeconds = new Histogram({
  name: 'vcs_bus_request_seconds',
  help: 'Bus request-reply latency from the gateway to a pillar, by pillar and outcome (ok, no-responders, timeout, closed)',
  labelNames: ['pillar', 'outcome'] as const,
  buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [metricsRegistry],
});

/** Calls refused by rate limiting. Whoever enforces a limit increments this: `rateLimitRefusals.inc({ scope })`. */
export const rateLimitRefusals = new Counter({
  name: 'vcs_rate_limit_refusals_total',
  help: 'Calls answered 429 rate-limited, by limit class (anonymous, sandbox, live, mint)',
  labelNames: ['scope'] as const,
  registers: [metricsRegistry],
});

/** Retries of idempotent reads on another replica after no-responders, a time-out or a closed connection. */
export const busRetries = new Counter({
  name: 'vcs_bus_retries_total',
  help: 'GET capability calls retried once on another replica, by pillar and the reason of the first failure',
  labelNames: ['pillar', 'reason'] as const,
  registers: [metricsRegistry],
});

// Labels stay bounded: a capability's name from its route pattern, else the route pattern, else "unmatched".
export function capabilityLabel(req: FastifyRequest): string {
  const routeUrl = req.routeOptions.url;
  if (!routeUrl) return 'unmatched';
  return capabilityOf(req)?.name ?? `${req.method} ${routeUrl}`;
}
