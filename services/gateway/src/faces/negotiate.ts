import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { toHtml, toMarkdown, type Doc } from './doc.ts';

export type Format = 'json' | 'markdown' | 'html';
const TYPES: Record<Format, string> = { json: 'application/json', markdown: 'text/markdown', html: 'text/html' };

/** The best of JSON, Markdown and HTML for an Accept header; JSON when nothing is asked for or all tie. */
export function negotiate(accept: string | undefined): Format {
  if (!accept) return 'json';
  let best: { f: Format; q: number; order: number } = { f: 'json', q: -1, order: 99 };
  accept.split(',').forEach((part, order) => {
    const [range, ...params] = part.trim().toLowerCase().split(';');
    const q = Number(
      params
        .map((p) => p.trim())
        .find((p) => p.startsWith('q='))
        ?.slice(2) ?? 1,
    );
    const f: Format | null =
      range === 'application/json'
        ? 'json'
        : range === 'text/markdown' || range === 'text/x-markdown'
          ? 'markdown'
          : range === 'text/html' || range === 'application/xhtml+xml'
            ? 'html'
            : range === '*/*' || range === 'application/*'
              ? 'json'
              : null;
    if (!f || !(q > 0)) return;
    // A wildcard only wins when nothing specific was asked for at the same weight.
    const specific = range !== '*/*' && range !== 'application/*';
    const rank = specific ? order : order + 50;
    if (q > best.q || (q === best.q && rank < best.order)) best = { f, q, order: rank };
  });
  return best.q < 0 ? 'json' : best.f;
}

export const CACHE = {
  /** Discovery documents change only with a deploy. */
  discovery: 'public, max-age=300, must-revalidate',
  /** The record and the lenses change as facts are posted: always revalidate. */
  record: 'no-cache',
};

/** Send a body with a strong ETag (sha256 of the bytes, or the given digest); a matching If-None-Match answers 304. */
export function sendCached(
  req: FastifyRequest,
  reply: FastifyReply,
  body: string,
  type: string,
  cacheControl: string,
  etag?: string,
) {
  const tag = `"${etag ?? createHash('sha256').update(body).digest('hex').slice(0, 32)}"`;
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

/** Send one face in the negotiated format: `json` as is, `doc` rendered as Markdown or HTML. */
export function sendFace(
  req: FastifyRequest,
  reply: FastifyReply,
  face: { json: unknown; doc: Doc },
  cacheControl: string,
  forced?: Format,
) {
  const f = forced ?? negotiate(req.headers.accept);
  reply.header('vary', 'Accept');
  const body = f === 'json' ? JSON.stringify(face.json) : f === 'markdown' ? toMarkdown(face.doc) : toHtml(face.doc);
  return sendCached(req, reply, body, `${TYPES[f]}; charset=utf-8`, cacheControl);
}
