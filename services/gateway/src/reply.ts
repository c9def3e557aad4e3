import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  blocked,
  httpStatusOf,
  idPrefixes,
  isIdOf,
  type BlockedCode,
  type NextRequest,
  type OpReply,
} from '@vcs/contract';

/** Send an answer object with the HTTP status its kind and code call for. */
export function sendAnswer(reply: FastifyReply, answer: { type: any; value?: unknown }) {
  return reply.code(httpStatusOf(answer)).type('application/json').header('x-answer-kind', answer.type).send(answer);
}

/** The one way a platform operation's reply is sent: its status, its answer, and `Idempotent-Replayed` when stored. */
export function sendOpReply(reply: FastifyReply, r: OpReply) {
  if (r.replayed) reply.header('idempotent-replayed', 'true');
  // An outcome not known yet (a payment or an execution in doubt, a request in flight) says when to ask again.
  const value = r.answer.value;
  const retryAfter = value && typeof value === 'object' && 'retryAfter' in value ? value.retryAfter : undefined;
  if (typeof retryAfter === 'number' && r.status >= 409) reply.header('retry-after', String(retryAfter));
  if (typeof r.answer.type === 'string') reply.header('x-answer-kind', r.answer.type);
  return reply.code(r.status).type('application/json').send(r.answer);
}

export function sendBlocked(
  reply: FastifyReply,
  code: BlockedCode,
  message: string,
  extra: Record<string, unknown> = {},
) {
  return sendAnswer(reply, blocked(code, message, extra));
}

/**
 * The request itself, as a refusal's `next` when the way forward is to send it again: corrected (invalid input,
 * a header), later (rate limit, a pillar or store down, a request in flight) or with a key that may make it.
 */
export function sameRequest(req: Pick<FastifyRequest, 'method' | 'url'>): NextRequest {
  return { method: req.method === 'POST' ? 'POST' : 'GET', path: req.url.split('?')[0]! };
}

/**
 * A POST's input is a JSON object, or no body at all (no input): any other JSON value (`null`, `5`, `true`, `[]`,
 * a string) is refused here, naming what to send. Returns the input, or null when the refusal was sent.
 */
export function bodyObject(req: FastifyRequest, reply: FastifyReply): Record<string, unknown> | null {
  const body = req.body;
  if (body === undefined) return {};
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) return body as Record<string, unknown>;
  const got = body === null ? 'null' : Array.isArray(body) ? 'an array' : `a ${typeof body}`;
  const path = req.url.split('?')[0]!;
  sendBlocked(
    reply,
    'invalid-input',
    `the body of POST ${path} must be a JSON object; this one is ${got}. Send {} (or no body) for no input`,
    {
      problems: [{ field: '(body)', in: 'body', message: `expected a JSON object, received ${got}` }],
      next: sameRequest(req),
    },
  );
  return null;
}

/** Where routes are listed: the next request after a path that names nothing. */
export const CATALOG: NextRequest = { method: 'GET', path: '/catalog' };

const NOT_FOUND = {
  intent: ['intent-not-found', 'a 402 OFFER'],
  handoff: ['handoff-not-found', 'a NEEDS_HUMAN answer'],
  deal: ['deal-not-found', 'POST /buy/deals'],
} as const;

/**
 * A path id that cannot be one of its kind names nothing: answer its 404 here, before it reaches a store or a
 * header. Returns true when the refusal was sent.
 */
export function refuseMalformedId(reply: FastifyReply, kind: keyof typeof NOT_FOUND, id: string): boolean {
  if (isIdOf(kind, id)) return false;
  const [code, from] = NOT_FOUND[kind];
  sendBlocked(
    reply,
    code,
    `no ${kind} with this id; ${kind} ids start ${idPrefixes[kind]} followed by letters, digits, - and _, ` +
      `and come from ${from}`,
  );
  return true;
}
