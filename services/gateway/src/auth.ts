import type { FastifyInstance, FastifyRequest } from 'fastify';
import { keyMatches, parseKey, type Environment } from '@vcs/platform';
import { isFinal, MINT_KEY, type BlockedCode, type NextRequest } from '@vcs/contract';
import type { GatewayDeps } from './deps.ts';
import { KeyCheckUnavailable, type KeyCache } from './keyCache.ts';
import { sameRequest } from './reply.ts';

/** Who is calling: anonymous, a valid key, or a key that was presented but refused (and why). */
export type Caller =
  | { kind: 'anonymous'; environment: 'sandbox' }
  | {
      kind: 'key';
      account: string;
      keyId: string;
      prefix: string;
      environment: Environment;
      scopes: string[];
      mandateBinding: string;
    }
  | { kind: 'refused'; code: BlockedCode; message: string; environment: 'sandbox'; next: NextRequest };

/** The key from `Authorization: Bearer <key>` or `X-Api-Key: <key>`. */
export function presentedKey(req: FastifyRequest): string | null {
  const auth = req.headers.authorization;
  if (typeof auth === 'string' && /^Bearer\s+/i.test(auth)) return auth.replace(/^Bearer\s+/i, '').trim();
  const x = req.headers['x-api-key'];
  if (typeof x === 'string' && x.length) return x.trim();
  return null;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling, identified once per request before any other hook runs (registerCaller). */
    caller: Caller;
  }
}

const ANONYMOUS: Caller = { kind: 'anonymous', environment: 'sandbox' };
/** Routes for load balancers and scrapers: they never look at a key, so none is looked up for them. */
const KEYLESS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * The one identification of a request: `req.caller`, set by the first onRequest hook after the request id (buildApp
 * registers it before the rate limiter), read by the hooks (rate limit, scopes, idempotency, meter, key-change
 * notices) and the routes. A request without a key costs no lookup.
 */
export function registerCaller(app: FastifyInstance, deps: Pick<GatewayDeps, 'clock' | 'config'>, keys: KeyCache) {
  app.decorateRequest('caller', null as never);
  app.addHook('onRequest', async (req) => {
    req.caller =
      KEYLESS.has(req.routeOptions.url ?? '') || !presentedKey(req)
        ? ANONYMOUS
        : await identifyOnce(deps, keys, req, deps.clock.now());
  });
}

/** A presented key refused: every refusal names the request to make next (docs/decisions.md). */
const refused = (code: BlockedCode, message: string, next: NextRequest = MINT_KEY): Caller => ({
  kind: 'refused',
  code,
  message,
  environment: 'sandbox',
  next,
});

async function identifyOnce(
  deps: Pick<GatewayDeps, 'config'>,
  keys: KeyCache,
  req: FastifyRequest,
  now: Date,
): Promise<Caller> {
  const key = presentedKey(req);
  if (!key) return ANONYMOUS;
  const parsed = parseKey(key);
  // Messages never echo the presented key: an error text is not a place for a secret.
  if (!parsed) return refused('key-unknown', 'the key is not a key this service issued; mint one with POST /keys');
  let row;
  try {
    row = await keys.get(parsed.prefix, now.getTime(), req.id, deps.config.busTimeoutMs);
  } catch (e) {
    if (!(e instanceof KeyCheckUnavailable)) throw e;
    const again = sameRequest(req);
    // The cause, not the messenger: commerce answering that its database is down is a store outage.
    if (e.code === 'store-unavailable')
      return refused(
        'store-unavailable',
        'the key store is unavailable (commerce, which checks keys, cannot reach its database); ' +
          `retry ${again.method} ${again.path} shortly`,
        again,
      );
    return refused(
      'pillar-unavailable',
      `the commerce pillar, which checks keys, is not answering; retry ${again.method} ${again.path} shortly`,
      again,
    );
  }
  if (!row || !keyMatches(key, row.secret_hash)) return refused('key-unknown', 'no such key; mint one with POST /keys');
  // Revoked is the key's one final state (the lifecycle table): nothing brings it back.
  if (isFinal('key', row.status)) return refused('key-revoked', 'this key was revoked; mint a new one with POST /keys');
  if (row.status === 'superseded' && (!row.grace_until || new Date(row.grace_until) <= now)) {
    return refused(
      'key-superseded',
      'this key was rotated and its grace period is over; ' +
        'send its successor (the key POST /api-keys/rotate answered) instead, or mint a new one with POST /keys',
    );
  }
  if (row.expires_at && new Date(row.expires_at) <= now)
    return refused('key-expired', 'this key has expired; mint a new one with POST /keys');
  return {
    kind: 'key',
    account: row.account_id,
    keyId: row.id,
    prefix: row.prefix,
    environment: parsed.environment,
    scopes: row.scopes,
    mandateBinding: row.mandate_binding,
  };
}
