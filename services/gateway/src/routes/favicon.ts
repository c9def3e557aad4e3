import type { FastifyInstance } from 'fastify';
import { FAVICON, FAVICON_SVG } from '../faces/favicon.ts';
import { CACHE, sendCached } from '../faces/negotiate.ts';

/** GET /favicon.svg and /favicon.ico: the icon, so no browser tab logs a 404 for it. */
export async function faviconRoutes(app: FastifyInstance) {
  for (const url of [FAVICON, '/favicon.ico'])
    app.get(url, async (req, reply) => sendCached(req, reply, FAVICON_SVG, 'image/svg+xml', CACHE.discovery));
}
