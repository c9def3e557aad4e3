import type { FastifyRequest } from 'fastify';
import { Counter } from 'prom-client';
import { childrenOf, metricsRegistry } from '@vcs/platform';
import { capabilityOf } from './routeCapability.ts';

export { childrenOf, metricsRegistry };

/** Answers by capability (or platform route), answer kind and HTTP status. */
export const requestsTotal = new Counter({
  name: 'vcs_requests_total',
  help: 'HTTP answers by capability, answer kind (OK, EMPTY, BLOCKED, OFFER) and status',
  labelNames: ['capability', 'kind', 'status'] as const,
  registers: [metricsRegistry],
});

const answerCounter = childrenOf(requestsTotal);
export function countAnswer(capability: string, kind: string, status: number) {
  answerCounter({ capability, kind, status: String(status) }).inc();
}

/** Calls refused by rate limiting. Whoever enforces a limit increments this: `rateLimitRefusals.inc({ scope })`. */
export const rateLimitRefusals = new Counter({
  name: 'vcs_rate_limit_refusals_total',
  help: 'Calls answered 429 rate-limited, by limit class (anonymous, sandbox, live, mint)',
  labelNames: ['scope'] as const,
  registers: [metricsRegistry],
});

// Labels stay bounded: a capability's name from its route pattern, else the route pattern, else "unmatched".
export function capabilityLabel(req: FastifyRequest): string {
  const routeUrl = req.routeOptions.url;
  if (!routeUrl) return 'unmatched';
  return capabilityOf(req)?.name ?? `${req.method} ${routeUrl}`;
}
