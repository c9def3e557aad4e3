import type { FastifyRequest } from 'fastify';
import { keyMatches, parseKey, type Environment } from '@vcs/platform';
import { MINT_KEY, type BlockedCode, type NextRequest } from '@vcs/contract';
import type { GatewayDeps } from './deps.ts';
import { cachedKey, KeyCheckUnavailable } from './keyCache.ts';
import { sameRequest } from './reply.ts';

/** Who is calling: anonymous, a valid key, or a key that was presented but refused (and why). */
export type Caller =
  | { kind: 'anonymous'; environment: 'sandbox' }
  | { kind: 'key'; account: string; keyId: string; prefix: string; environment: Environment; scopes: string[]; mandateBinding: string }
  | { kind: 'refused'; code: BlockedCode; message: string; environment: 'sandbox'; next: NextRequest };

/** The key from `Authorization: Bearer <key>` or `X-Api-Key: <key>`. */
export function presentedKey(req: FastifyRequest): string | null {
  const auth = req.headers.authorization;
  if (typeof auth === 'string' && /^Bearer\s+/i.test(auth)) return auth.replace(/^Bearer\s+/i, '').trim();
  const x = req.headers['x-api-key'];
  if (typeof x === 'string' && x.length) return x.trim();
  return null;
}

// One identification per request: hooks (rate limit, idempotency, meter) and the route share it.
const memo = new WeakMap<FastifyRequest, Promise<Caller>>();

export function identify(deps: Pick<GatewayDeps, 'bus' | 'clock' | 'config'>, req: FastifyRequest): Promise<Caller> {
  let p = memo.get(req);
  if (!p) { p = identifyOnce(deps, req, deps.clock.now()); memo.set(req, p); p.catch(() => memo.delete(req)); }
  return p;
}

/** A presented key refused: every refusal names the request to make next (docs/decisions.md). */
const refused = (code: BlockedCode, message: string, next: NextRequest = MINT_KEY): Caller => ({ kind: 'refused', code, message, environment: 'sandbox', next });

async function identifyOnce(deps: Pick<GatewayDeps, 'bus' | 'config'>, req: FastifyRequest, now: Date): Promise<Caller> {
  const key = presentedKey(req);
  if (!key) return { kind: 'anonymous', environment: 'sandbox' };
  const parsed = parseKey(key);
  // Messages never echo the presented key: an error text is not a place for a secret.
  if (!parsed) return refused('key-unknown', 'the key is not a key this service issued; mint one with POST /keys');
  let row;
  try { row = await cachedKey(deps.bus, parsed.prefix, now.getTime(), req.id, deps.config.busTimeoutMs); } catch (e) {
    if (!(e instanceof KeyCheckUnavailable)) throw e;
    const again = sameRequest(req);
    // The cause, not the messenger: commerce answering that its database is down is a store outage (issue 27).
    if (e.code === 'store-unavailable') return refused('store-unavailable', `the key store is unavailable (commerce, which checks keys, cannot reach its database); retry ${again.method} ${again.path} shortly`, again);
    return refused('pillar-unavailable', `the commerce pillar, which checks keys, is not answering; retry ${again.method} ${again.path} shortly`, again);
  }
  if (!row || !keyMatches(key, row.secret_hash)) return refused('key-unknown', 'no such key; mint one with POST /keys');
  if (row.status === 'revoked') return refused('key-revoked', 'this key was revoked; mint a new one with POST /keys');
  if (row.status === 'superseded' && (!row.grace_until || new Date(row.grace_until) <= now)) {
    return refused('key-superseded', 'this key was rotated and its grace period is over; send its successor (the key POST /api-keys/rotate answered) instead, or mint a new one with POST /keys');
  }
  if (row.expires_at && new Date(row.expires_at) <= now) return refused('key-expired', 'this key has expired; mint a new one with POST /keys');
  return { kind: 'key', account: row.account_id, keyId: row.id, prefix: row.prefix, environment: parsed.environment, scopes: row.scopes, mandateBinding: row.mandate_binding };
}
