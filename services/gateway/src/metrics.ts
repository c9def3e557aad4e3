import type { FastifyRequest } from 'fastify';
import { Counter, Histogram } from 'prom-client';
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

/**
 * OpenTelemetry's `http.server.request.duration` in Prometheus form: every answer's time (as fastify measures it, from
 * the request's arrival to the response's end) by the route's template (`/intents/:intentId/settle`, never the path sent),
 * the method and the status. The buckets are OpenTelemetry's for this instrument (its semantic conventions' advice).
 */
export const requestDuration = new Histogram({
  name: 'http_server_request_duration_seconds',
  help:
    'Duration of HTTP server requests (OpenTelemetry http.server.request.duration), by route template ' +
    '(unmatched when no route served it), method and status code',
  labelNames: ['http_route', 'http_request_method', 'http_response_status_code'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10],
  registers: [metricsRegistry],
});

// OpenTelemetry's rule for http.request.method: a method outside the known set is `_OTHER`, so labels stay bounded.
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);
const durationOf = childrenOf(requestDuration);
export function observeDuration(req: FastifyRequest, status: number, seconds: number) {
  durationOf({
    http_route: req.routeOptions.url ?? 'unmatched',
    http_request_method: KNOWN_METHODS.has(req.method) ? req.method : '_OTHER',
    http_response_status_code: String(status),
  }).observe(seconds);
}

// Labels stay bounded: a capability's name from its route pattern, else the route pattern, else "unmatched".
export function capabilityLabel(req: FastifyRequest): string {
  const routeUrl = req.routeOptions.url;
  if (!routeUrl) return 'unmatched';
  return capabilityOf(req)?.name ?? `${req.method} ${routeUrl}`;
}
