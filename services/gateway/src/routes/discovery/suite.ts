import type { FastifyInstance } from 'fastify';
import type { GatewayDeps } from '../../deps.ts';
import { CACHE, sendCached } from '../../faces/negotiate.ts';
import { suite } from '../../faces/suite.ts';

/** GET /suite.json: the acceptance suite; its ETag is its digest. */
export async function suiteRoutes(app: FastifyInstance, _deps: GatewayDeps) {
  app.get('/suite.json', async (req, reply) => {
    const s = suite();
    return sendCached(req, reply, JSON.stringify(s), 'application/json; charset=utf-8', CACHE.discovery, s.digest);
  });
}
