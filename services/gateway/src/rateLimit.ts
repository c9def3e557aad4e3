import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { setting, systemClock, type Clock } from '@vcs/platform';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { GatewayDeps } from './deps.ts';
import { rateLimitRefusals } from './metrics.ts';
import { sameRequest, sendBlocked } from './reply.ts';

/**
 * Calls per minute by class; sandbox and live keys each have their own, anonymous callers and minting go by client
 * address.
 */
export const rateLimitEnv = z.object({
  RATE_LIMIT_SANDBOX_PER_MIN: setting.int(1, 1e9).default(1500),
  RATE_LIMIT_LIVE_PER_MIN: setting.int(1, 1e9).default(6000),
  RATE_LIMIT_ANON_PER_MIN: setting.int(1, 1e9).default(600),
  RATE_LIMIT_MINT_PER_MIN: setting.int(1, 1e9).default(60),
});
export type RateLimits = { sandbox: number; live: number; anonymous: number; mint: number };

/** The limits from the parsed settings. */
export function rateLimitsFrom(c: z.infer<typeof rateLimitEnv>): RateLimits {
  return {
    sandbox: c.RATE_LIMIT_SANDBOX_PER_MIN,
    live: c.RATE_LIMIT_LIVE_PER_MIN,
    anonymous: c.RATE_LIMIT_ANON_PER_MIN,
    mint: c.RATE_LIMIT_MINT_PER_MIN,
  };
}

type LimitClass = keyof RateLimits;
const WINDOW_S = 60;

/** What a limiter answers: tokens left in the window and when it resets (RateLimiterRes carries both). */
type Consumed = Pick<RateLimiterRes, 'remainingPoints' | 'msBeforeNext'>;
/** A limiter of one class: throws RateLimiterRes when over the limit. */
type Limiter = { consume(id: string): Promise<Consumed> };

interface Lease {
  tokens: number;
  shared: number;
  resetAt: number;
  refused: boolean;
  fetching?: Promise<void>;
}

/**
 * Tokens taken from the shared (Redis) window ahead of use, so most calls need no Redis round trip: while a
 * window has plenty left, a gateway leases a tenth of what remains (at most 100) and spends it locally; near
 * the limit it takes one token per call, so the limit stays exact where it matters. One lease request per key
 * is in flight at a time; concurrent calls wait for it. A lease left unspent when traffic moves to another
 * gateway is lost to the window (at most a tenth of what remained).
 */
export class LeasedLimiter implements Limiter {
  private leases = new Map<string, Lease>();
  // The clock ages leases (a local view of the shared window); Redis keeps the window itself in its own time.
  constructor(
    private readonly shared: RateLimiterAbstract,
    private readonly clock: Clock = systemClock,
  ) {}
  private ms() {
    return this.clock.now().getTime();
  }

  async consume(id: string): Promise<Consumed> {
    for (let round = 0; round < 5; round++) {
      const now = this.ms();
      let lease = this.leases.get(id);
      if (lease && now >= lease.resetAt && !lease.fetching) {
        this.leases.delete(id);
        lease = undefined;
      }
      if (lease && now < lease.resetAt) {
        if (lease.tokens > 0) {
          lease.tokens--;
          return { remainingPoints: lease.shared + lease.tokens, msBeforeNext: lease.resetAt - now };
        }
        // A fixed window only fills up: once refused, refused until it resets, without asking Redis again.
        if (lease.refused) throw new RateLimiterRes(0, lease.resetAt - now);
      }
      if (lease?.fetching) {
        await lease.fetching;
        continue;
      }
      await this.lease(id, lease);
    }
    return this.shared.consume(id, 1); // lost every race for leased tokens: take one directly
  }

  private lease(id: string, known: Lease | undefined): Promise<void> {
    const chunk = known ? Math.min(100, Math.max(1, Math.floor(known.shared / 10))) : 1;
    const entry: Lease = known ?? { tokens: 0, shared: 0, resetAt: 0, refused: false };
    if (!known) {
      if (this.leases.size >= 10_000) {
        const now = this.ms();
        for (const [k, l] of this.leases) if (l.resetAt <= now && !l.fetching) this.leases.delete(k);
      }
      this.leases.set(id, entry);
    }
    entry.fetching = this.shared
      .consume(id, chunk)
      .then(
        (res) => {
          Object.assign(entry, {
            tokens: entry.tokens + chunk,
            shared: res.remainingPoints,
            resetAt: this.ms() + res.msBeforeNext,
            refused: false,
          });
        },
        (e) => {
          if (!(e instanceof RateLimiterRes)) {
            this.leases.delete(id);
            throw e;
          } // Redis unreachable: the caller fails open
          Object.assign(entry, { tokens: 0, shared: 0, resetAt: this.ms() + e.msBeforeNext, refused: true });
        },
      )
      .finally(() => {
        entry.fetching = undefined;
      });
    return entry.fetching;
  }
}

/** One fixed window per caller, counted in Redis and shared by every gateway. */
export function redisWindow(storeClient: NonNullable<GatewayDeps['kv']['redis']>, keyPrefix: string, points: number) {
  return new RateLimiterRedis({ keyPrefix, points, duration: WINDOW_S, storeClient });
}
export { RateLimiterRes };

/**
 * Fixed one-minute windows counted in Redis (so every gateway replica shares them), or in memory in the
 * embedded mode. Every answer carries the IETF RateLimit headers; over the limit is a 429 BLOCKED answer.
 */
export function registerRateLimits(app: FastifyInstance, deps: GatewayDeps) {
  const limits = deps.config.rateLimits;
  const limiters = Object.fromEntries(
    (Object.keys(limits) as LimitClass[]).map((cls) => {
      const keyPrefix = `rl:${cls}`;
      const l: Limiter = deps.kv.redis
        ? new LeasedLimiter(redisWindow(deps.kv.redis, keyPrefix, limits[cls]), deps.clock)
        : new RateLimiterMemory({ keyPrefix, points: limits[cls], duration: WINDOW_S });
      return [cls, l];
    }),
  ) as Record<LimitClass, Limiter>;

  app.addHook('onRequest', async (req, reply) => {
    // Health and metrics are for load balancers and scrapers, which poll from one address: never limited.
    if (UNLIMITED.has(req.routeOptions.url ?? '')) return;
    const { cls, id } = await classify(req, deps);
    const limit = limits[cls];
    let res: Consumed;
    try {
      res = await limiters[cls].consume(id);
    } catch (e) {
      if (e instanceof RateLimiterRes) {
        rateLimitRefusals.inc({ scope: cls });
        setHeaders(reply, limit, e);
        reply.header('retry-after', String(Math.max(1, Math.ceil(e.msBeforeNext / 1000))));
        return sendBlocked(
          reply,
          'rate-limited',
          `over the limit of ${limit} calls a minute for ${describe(cls)}; ` +
            `retry ${req.method} ${sameRequest(req).path} after ${Math.ceil(e.msBeforeNext / 1000)} s`,
          {
            limit,
            window: `${WINDOW_S}s`,
            retryAfterSeconds: Math.ceil(e.msBeforeNext / 1000),
            next: sameRequest(req),
          },
        );
      }
      // Redis unreachable: fail open rather than refuse every call; the store's own health shows the outage.
      // one line, no stack: the store's outage is no bug here
      req.log.warn({ reason: (e as Error).message }, 'rate limiter unavailable; call let through');
      return;
    }
    setHeaders(reply, limit, res);
  });
}

const UNLIMITED = new Set(['/healthz', '/readyz', '/metrics']);

async function classify(req: FastifyRequest, deps: GatewayDeps): Promise<{ cls: LimitClass; id: string }> {
  if (req.method === 'POST' && req.routeOptions.url === '/keys') return { cls: 'mint', id: req.ip };
  const { caller } = req;
  if (caller.kind === 'key') return { cls: caller.environment === 'live' ? 'live' : 'sandbox', id: caller.keyId };
  return { cls: 'anonymous', id: req.ip };
}

function setHeaders(reply: FastifyReply, limit: number, res: Consumed) {
  const reset = Math.max(0, Math.ceil(res.msBeforeNext / 1000));
  reply.header('ratelimit-limit', String(limit));
  reply.header('ratelimit-remaining', String(Math.max(0, res.remainingPoints)));
  reply.header('ratelimit-reset', String(reset));
  reply.header('ratelimit-policy', `${limit};w=${WINDOW_S}`);
}

const describe = (cls: LimitClass) =>
  cls === 'mint'
    ? 'minting keys from this address'
    : cls === 'anonymous'
      ? 'anonymous calls from this address (a key raises it: POST /keys)'
      : `this ${cls} key`;
