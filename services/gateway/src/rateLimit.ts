import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { identify } from './auth.ts';
import type { GatewayDeps } from './deps.ts';
import { sendBlocked } from './reply.ts';

/** Calls per minute by class; sandbox and live keys each have their own, anonymous callers and minting go by client address. */
export const rateLimitEnv = z.object({
  RATE_LIMIT_SANDBOX_PER_MIN: z.coerce.number().int().min(1).default(1500),
  RATE_LIMIT_LIVE_PER_MIN: z.coerce.number().int().min(1).default(6000),
  RATE_LIMIT_ANON_PER_MIN: z.coerce.number().int().min(1).default(600),
  RATE_LIMIT_MINT_PER_MIN: z.coerce.number().int().min(1).default(60),
});
export type RateLimits = { sandbox: number; live: number; anonymous: number; mint: number };

export function rateLimitsFrom(env: NodeJS.ProcessEnv = process.env): RateLimits {
  const parsed = rateLimitEnv.safeParse(env);
  if (!parsed.success) throw new Error(`config error: ${parsed.error.issues[0]!.path.join('.')}: ${parsed.error.issues[0]!.message}`);
  const c = parsed.data;
  return { sandbox: c.RATE_LIMIT_SANDBOX_PER_MIN, live: c.RATE_LIMIT_LIVE_PER_MIN, anonymous: c.RATE_LIMIT_ANON_PER_MIN, mint: c.RATE_LIMIT_MINT_PER_MIN };
}

type LimitClass = keyof RateLimits;
const WINDOW_S = 60;

/**
 * Fixed one-minute windows counted in Redis (so every gateway replica shares them), or in memory in the
 * embedded mode. Every answer carries the IETF RateLimit headers; over the limit is a 429 BLOCKED answer.
 */
export function registerRateLimits(app: FastifyInstance, deps: GatewayDeps) {
  const limits = deps.config.rateLimits ?? rateLimitsFrom();
  const limiters = Object.fromEntries((Object.keys(limits) as LimitClass[]).map((cls) => {
    const opts = { keyPrefix: `rl:${cls}`, points: limits[cls], duration: WINDOW_S };
    const l: RateLimiterAbstract = deps.kv.redis ? new RateLimiterRedis({ ...opts, storeClient: deps.kv.redis }) : new RateLimiterMemory(opts);
    return [cls, l];
  })) as Record<LimitClass, RateLimiterAbstract>;

  app.addHook('onRequest', async (req, reply) => {
    const { cls, id } = await classify(req, deps);
    const limit = limits[cls];
    let res: RateLimiterRes;
    try {
      res = await limiters[cls].consume(id, 1);
    } catch (e) {
      if (e instanceof RateLimiterRes) {
        setHeaders(reply, limit, e);
        reply.header('retry-after', String(Math.max(1, Math.ceil(e.msBeforeNext / 1000))));
        return sendBlocked(reply, 'rate-limited', `over the limit of ${limit} calls a minute for ${describe(cls)}; retry after ${Math.ceil(e.msBeforeNext / 1000)} s`, { limit, window: `${WINDOW_S}s`, retryAfterSeconds: Math.ceil(e.msBeforeNext / 1000) });
      }
      // Redis unreachable: fail open rather than refuse every call; the store's own health shows the outage.
      req.log.warn({ err: e }, 'rate limiter unavailable; call let through');
      return;
    }
    setHeaders(reply, limit, res);
  });
}

async function classify(req: FastifyRequest, deps: GatewayDeps): Promise<{ cls: LimitClass; id: string }> {
  if (req.method === 'POST' && req.routeOptions.url === '/keys') return { cls: 'mint', id: req.ip };
  const caller = await identify(deps.db, req, deps.clock.now());
  if (caller.kind === 'key') return { cls: caller.environment === 'live' ? 'live' : 'sandbox', id: caller.keyId };
  return { cls: 'anonymous', id: req.ip };
}

function setHeaders(reply: FastifyReply, limit: number, res: RateLimiterRes) {
  const reset = Math.max(0, Math.ceil(res.msBeforeNext / 1000));
  reply.header('ratelimit-limit', String(limit));
  reply.header('ratelimit-remaining', String(Math.max(0, res.remainingPoints)));
  reply.header('ratelimit-reset', String(reset));
  reply.header('ratelimit-policy', `${limit};w=${WINDOW_S}`);
}

const describe = (cls: LimitClass) =>
  cls === 'mint' ? 'minting keys from this address' : cls === 'anonymous' ? 'anonymous calls from this address (a key raises it: POST /keys)' : `this ${cls} key`;
