import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ops } from '@vcs/contract';
import { anonymousContext, callOp, dec, enc, type Bus, type KeyRow } from '@vcs/platform';
import { identify } from './auth.ts';
import type { GatewayDeps } from './deps.ts';
import { addRouteHook } from './routeCapability.ts';

/** Subject on which every gateway hears that a key changed (revoked, rotated, scoped) and drops its cached row. */
export const KEYS_CHANGED = 'sys.keys.changed';

/** How long a gateway trusts a key row it read; a broadcast change drops it sooner. */
export const KEY_CACHE_MS = 5_000;

interface Entry { row: KeyRow; until: number }
const caches = new WeakMap<Bus, Map<string, Entry>>();
const cacheOf = (bus: Bus) => { let c = caches.get(bus); if (!c) { c = new Map(); caches.set(bus, c); } return c; };

/** Commerce could not be asked about a key: the caller gets a typed 503, never a guess. */
export class KeyCheckUnavailable extends Error { override name = 'KeyCheckUnavailable'; }

/** The key row as commerce, which owns the table, has it now (`keys.lookup`); null when there is none. */
export async function lookupKey(bus: Bus, prefix: string, requestId: string, timeoutMs: number): Promise<KeyRow | null> {
  const r = await callOp(bus, ops.keysLookup, { prefix }, anonymousContext(requestId), timeoutMs);
  if (r.status !== 200) throw new KeyCheckUnavailable(String((r.answer.value as { message?: string } | undefined)?.message ?? 'commerce did not answer'));
  if (r.answer.type !== 'OK') return null;
  const v = r.answer.value as KeyRow & { secret_hash: string };
  return { ...v, secret_hash: Buffer.from(v.secret_hash, 'hex') };
}

/**
 * Key row by prefix through a short per-gateway cache: the gateway's clock bounds staleness (not key validity), and
 * a broadcast change drops a row sooner.
 */
export async function cachedKey(bus: Bus, prefix: string, now: number, requestId: string, timeoutMs: number): Promise<KeyRow | null> {
  const cache = cacheOf(bus);
  const hit = cache.get(prefix);
  if (hit && hit.until > now) return hit.row;
  const row = await lookupKey(bus, prefix, requestId, timeoutMs);
  // Unknown prefixes are not cached: a key minted a moment later must work at once.
  if (row) cache.set(prefix, { row, until: now + KEY_CACHE_MS });
  else cache.delete(prefix);
  if (cache.size > 50_000) cache.clear(); // a crude bound; the cache is an optimisation only
  return row;
}

export function forgetKey(bus: Bus, prefix: string) { cacheOf(bus).delete(prefix); }

/** Tell every gateway replica (this one included) to drop a key's cached row. */
export function announceKeyChange(bus: Bus, prefix: string) {
  forgetKey(bus, prefix);
  try { bus.broadcast(KEYS_CHANGED, enc.encode(JSON.stringify({ prefix }))); } catch { /* the 5 s expiry still bounds it */ }
}

export function watchKeyChanges(bus: Bus): { stop(): void } {
  return bus.onBroadcast(KEYS_CHANGED, (data) => {
    try {
      const { prefix } = JSON.parse(dec.decode(data)) as { prefix?: unknown };
      if (typeof prefix === 'string') forgetKey(bus, prefix);
    } catch { /* a malformed notice changes nothing */ }
  });
}

/**
 * After the pillar has committed a rotation, revocation or scoping (its reply comes after the commit),
 * announce it before the caller gets the answer, so no replica keeps serving the old row.
 */
export function registerKeyChangeNotices(app: FastifyInstance, deps: GatewayDeps) {
  const watch = watchKeyChanges(deps.bus);
  addRouteHook(app, 'onSend', async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (reply.statusCode === 200) {
      const caller = await identify(deps, req).catch(() => null);
      if (caller?.kind === 'key') announceKeyChange(deps.bus, caller.prefix);
    }
    return payload;
  }, (route) => route.config?.capability?.changesKey === true);
  app.addHook('onClose', async () => watch.stop());
}
