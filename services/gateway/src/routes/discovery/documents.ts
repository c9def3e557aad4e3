import type { FastifyInstance } from 'fastify';
import { publicBaseOf } from '../../context.ts';
import type { GatewayDeps } from '../../deps.ts';
import { agentsDocument } from '../../faces/agents.ts';
import { llmsFullTxt, llmsTxt } from '../../faces/llms.ts';
import { CACHE, sendCached } from '../../faces/negotiate.ts';
import { openapiDocument } from '../../faces/openapi.ts';

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * GET /openapi.json, /.well-known/agents.json, /llms.txt and /llms-full.txt: generated from the catalog on each
 * request (cheap), cached by ETag.
 */
export async function documentRoutes(app: FastifyInstance, deps: GatewayDeps) {
  const base = (req: { protocol: string; host: string }) => publicBaseOf(req, deps.config);
  const served = (method: string, url: string) => app.hasRoute({ method: method as 'GET', url });
  app.get('/openapi.json', async (req, reply) =>
    sendCached(req, reply, JSON.stringify(openapiDocument(base(req), served)), JSON_TYPE, CACHE.discovery),
  );
  app.get('/.well-known/agents.json', async (req, reply) =>
    sendCached(
      req,
      reply,
      JSON.stringify(agentsDocument(base(req), openapiDocument(base(req), served))),
      JSON_TYPE,
      CACHE.discovery,
    ),
  );
  app.get('/llms.txt', async (req, reply) =>
    sendCached(req, reply, llmsTxt(), 'text/plain; charset=utf-8', CACHE.discovery),
  );
  app.get('/llms-full.txt', async (req, reply) =>
    sendCached(req, reply, llmsFullTxt(), 'text/plain; charset=utf-8', CACHE.discovery),
  );
}
