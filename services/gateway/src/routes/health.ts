import type { FastifyInstance } from 'fastify';
import { readiness, watchOutbox } from '@vcs/platform';
import type { GatewayDeps } from '../deps.ts';
import { metricsRegistry } from '../metrics.ts';

/** /healthz (the process is alive), /readyz (bus, store and Redis reachable), /metrics (Prometheus text). */
export async function healthRoutes(app: FastifyInstance, deps: GatewayDeps) {
  const unwatch = watchOutbox(deps.db);
  app.addHook('onClose', async () => unwatch());

  app.get('/healthz', async (_req, reply) => reply.code(200).send({ status: 'alive' }));

  app.get('/readyz', async (_req, reply) => {
    const r = await readiness(deps);
    return reply
      .code(r.ready ? 200 : 503)
      .send({ status: r.ready ? 'ready' : 'not-ready', checks: r.checks, failed: r.failed });
  });

  // With METRICS_PORT set, Prometheus scrapes that port (platform healthServer) and the public one has no /metrics.
  if (deps.config.metricsOnPublicPort === false) return;
  app.get('/metrics', async (_req, reply) => {
    const body = await metricsRegistry.metrics();
    return reply.code(200).header('content-type', metricsRegistry.contentType).send(body);
  });
}
