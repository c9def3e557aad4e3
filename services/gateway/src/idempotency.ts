import { createHash } from 'node:crypto';
import { withoutSecrets } from '@vcs/contract';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { addRouteHook } from './routeCapability.ts';
import type { GatewayDeps } from './deps.ts';
import { sameRequest, sendBlocked } from './reply.ts';

/** Stripe's window: the same key with the same body within 24 hours replays the first answer. */
export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;
/** A claim left by a gateway that died mid-call expires; longer than any call can run. */
const IN_FLIGHT_TTL_MS = 120_000;

type Stored =
  { state: 'running'; fp: string } | { state: 'done'; fp: string; status: number; contentType: string; body: string };

declare module 'fastify' {
  interface FastifyRequest {
    /** The Idempotency-Key this request claimed (preHandler), so its answer is remembered when sent (onSend). */
    idempotencyClaim: { kvKey: string; fp: string; forget?: true } | null;
  }
}

/**
 * This request's answer is a refusal made before anything ran, which the same request corrected (a header the key's
 * fingerprint does not cover) must not replay: its Idempotency-Key is released instead of remembered.
 */
export function forgetIdempotency(req: FastifyRequest) {
  if (req.idempotencyClaim) req.idempotencyClaim.forget = true;
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

const isRecord = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object';

/** Same meaning, same text: object members sorted so `{a,b}` and `{b,a}` are one body. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isRecord(v))
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

/**
 * `Idempotency-Key` on POST, kept in Kv (Redis) so it holds across gateway replicas; scoped per account,
 * or per client address when anonymous, so two callers never collide on a key.
 */
export function registerIdempotency(app: FastifyInstance, deps: GatewayDeps) {
  const isPost = (route: RouteOptions) =>
    route.method === 'POST' || (Array.isArray(route.method) && route.method.includes('POST'));
  app.decorateRequest('idempotencyClaim', null);
  addRouteHook(
    app,
    'preHandler',
    async (req: FastifyRequest, reply: FastifyReply) => {
      if (req.method !== 'POST') return;
      const header = req.headers['idempotency-key'];
      if (header === undefined) return;
      if (typeof header !== 'string' || header.length < 1 || header.length > 255) {
        return sendBlocked(
          reply,
          'invalid-input',
          'Idempotency-Key must be one value of 1 to 255 characters (a UUID is a good choice)',
          { next: sameRequest(req) },
        );
      }
      const { caller } = req;
      const scope = caller.kind === 'key' ? `acct:${caller.account}` : `ip:${req.ip}`;
      const kvKey = `idem:${scope}:${sha(header)}`;
      const fp = sha(`${req.method} ${req.url}\n${canonical(req.body ?? {})}`);
      for (let attempt = 0; attempt < 2; attempt++) {
        if (await deps.kv.setNx(kvKey, JSON.stringify({ state: 'running', fp } satisfies Stored), IN_FLIGHT_TTL_MS)) {
          req.idempotencyClaim = { kvKey, fp };
          return;
        }
        const raw = await deps.kv.get(kvKey);
        if (!raw) continue; // expired between the two reads: claim again
        const seen = JSON.parse(raw) as Stored;
        if (seen.fp !== fp) {
          return sendBlocked(
            reply,
            'idempotency-key-reused',
            'this Idempotency-Key was used with a different request (path or body); use a new key for a new request',
            { next: sameRequest(req) },
          );
        }
        if (seen.state === 'running') {
          reply.header('retry-after', '1');
          return sendBlocked(
            reply,
            'idempotency-in-flight',
            'the first request with this Idempotency-Key is still running; retry shortly to get its answer',
            { next: sameRequest(req) },
          );
        }
        return reply.code(seen.status).type(seen.contentType).header('idempotent-replayed', 'true').send(seen.body);
      }
    },
    isPost,
  );

  addRouteHook(
    app,
    'onSend',
    async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      const claim = req.idempotencyClaim;
      if (!claim) return payload;
      req.idempotencyClaim = null;
      const status = reply.statusCode;
      // Retriable outcomes, and a refusal asked to be forgotten, are not remembered: the next attempt runs again.
      if (
        claim.forget ||
        status >= 500 ||
        status === 429 ||
        (typeof payload !== 'string' && !Buffer.isBuffer(payload))
      ) {
        await deps.kv.del(claim.kvKey).catch(() => undefined);
        return payload;
      }
      // A secret is shown once: the remembered answer keeps its shape but never a secret-marked member (the route
      // names a flat reply's schema, POST /keys; an answer names its own by `answers`).
      const body = withoutSecrets(
        Buffer.isBuffer(payload) ? payload.toString('utf8') : payload,
        `${req.method} ${req.routeOptions.url}`,
      );
      const stored: Stored = {
        state: 'done',
        fp: claim.fp,
        status,
        contentType: String(reply.getHeader('content-type') ?? 'application/json'),
        body,
      };
      await deps.kv
        .set(claim.kvKey, JSON.stringify(stored), IDEMPOTENCY_TTL_MS)
        .catch((err) => req.log.warn({ reason: (err as Error).message }, 'idempotency record not stored'));
      return payload;
    },
    isPost,
  );
}
