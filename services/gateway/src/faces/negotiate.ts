import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { toHtml, toMarkdown, type Doc } from './doc.ts';

export type Format = 'json' | 'markdown' | 'html' | 'text';
export const TYPES: Record<Format, string> = {
  json: 'application/json',
  markdown: 'text/markdown',
  html: 'text/html',
  text: 'text/plain',
};

/** What a face offers: the format for each media range it serves, and for a request with no Accept. */
export interface Offer {
  ranges: Record<string, Format>;
  none: Format;
}

const WILDCARDS = new Set(['*/*', 'application/*', 'text/*']);

/** The documents: JSON, Markdown or HTML, and JSON to a client that names none of them or takes anything. */
export const DOCUMENT: Offer = {
  ranges: {
    'application/json': 'json',
    'text/markdown': 'markdown',
    'text/x-markdown': 'markdown',
    'text/html': 'html',
    'application/xhtml+xml': 'html',
    '*/*': 'json',
    'application/*': 'json',
  },
  none: 'json',
};

/**
 * The best format an offer has for an Accept header: the highest q wins, and at the same q the first specific range
 * asked for beats any wildcard; the offer's `none` when nothing it serves is asked for.
 */
export function negotiate(accept: string | undefined, offer: Offer = DOCUMENT): Format {
  if (!accept) return offer.none;
  let best: { f: Format; q: number; order: number } = { f: offer.none, q: -1, order: 99 };
  accept.split(',').forEach((part, order) => {
    const [range = '', ...params] = part.trim().toLowerCase().split(';');
    const q = Number(
      params
        .map((p) => p.trim())
        .find((p) => p.startsWith('q='))
        ?.slice(2) ?? 1,
    );
    const f = offer.ranges[range.trim()];
    if (!f || !(q > 0)) return;
    const rank = WILDCARDS.has(range.trim()) ? order + 50 : order;
    if (q > best.q || (q === best.q && rank < best.order)) best = { f, q, order: rank };
  });
  return best.q < 0 ? offer.none : best.f;
}

export const CACHE = {
  /** Discovery documents change only with a deploy. */
  discovery: 'public, max-age=300, must-revalidate',
  /** The record and the lenses change as facts are posted: always revalidate. */
  record: 'no-cache',
};

/**
 * Send a body with a strong ETag (sha256 of its type and bytes, so two formats of one text differ; or the given
 * digest); a matching If-None-Match answers 304.
 */
export function sendCached(
  req: FastifyRequest,
  reply: FastifyReply,
  body: string,
  type: string,
  cacheControl: string,
  etag?: string,
) {
  const tag = `"${etag ?? createHash('sha256').update(type).update(body).digest('hex').slice(0, 32)}"`;
  reply.header('etag', tag).header('cache-control', cacheControl);
  const inm = req.headers['if-none-match'];
  if (
    inm &&
    inm
      .split(',')
      .map((t) => t.trim().replace(/^W\//, ''))
      .some((t) => t === tag || t === '*')
  )
    return reply.code(304).send();
  return reply.code(200).type(type).send(body);
}

/** Send one face in the negotiated format: `json` as is, `doc` rendered as HTML or Markdown (also as plain text). */
export function sendFace(
  req: FastifyRequest,
  reply: FastifyReply,
  face: { json: unknown; doc: Doc },
  cacheControl: string,
  forced?: Format,
) {
  const f = forced ?? negotiate(req.headers.accept);
  reply.header('vary', 'Accept');
  const body = f === 'json' ? JSON.stringify(face.json) : f === 'html' ? toHtml(face.doc) : toMarkdown(face.doc);
  return sendCached(req, reply, body, `${TYPES[f]}; charset=utf-8`, cacheControl);
}
