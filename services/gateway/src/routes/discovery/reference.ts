import { createReadStream } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { CACHE, sendCached } from '../../faces/negotiate.ts';
import { assetTag, REFERENCE_ASSETS, referencePage } from '../../faces/reference.ts';
import { sendBlocked } from '../../reply.ts';

/** Swagger UI's files change only with its version, which names them in the ETag: a browser keeps them a day. */
const ASSET_CACHE = 'public, max-age=86400';

/** GET /docs (the API reference page) and /docs/<asset> (Swagger UI's bundle and stylesheet, streamed from disk). */
export async function referenceRoutes(app: FastifyInstance) {
  app.get('/docs', async (req, reply) =>
    sendCached(req, reply, referencePage(), 'text/html; charset=utf-8', CACHE.discovery),
  );
  app.get<{ Params: { asset: string } }>('/docs/:asset', async (req, reply) => {
    const asset = Object.hasOwn(REFERENCE_ASSETS, req.params.asset) ? REFERENCE_ASSETS[req.params.asset] : undefined;
    if (!asset)
      return sendBlocked(reply, 'not-found', `no file ${req.params.asset} under /docs; the reference is GET /docs`, {
        next: { method: 'GET', path: '/docs' },
      });
    const tag = assetTag(req.params.asset);
    reply.header('etag', tag).header('cache-control', ASSET_CACHE);
    if (req.headers['if-none-match']?.split(',').some((t) => t.trim() === tag)) return reply.code(304).send();
    return reply.type(asset.type).send(createReadStream(asset.file));
  });
}
