import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { dec, enc, findKeyByPrefix, type Bus, type Db, type KeyRow } from '@vcs/platform';
import { identify } from './auth.ts';
import type { GatewayDeps } from './deps.ts';
import { addRouteHook } from './routeCapability.ts';

/** Subject on which every gateway hears that a key changed (revoked, rotated, scoped) and drops its cached row. */
export const KEYS_CHANGED = 'sys.keys.changed';

/** How long a gateway trusts a key row it read; a broadcast change drops it sooner. */
export const KEY_CACHE_MS = 5_000;

interface Entry { row: KeyRow; until: number }
const caches = new WeakMap<Db, Map<string, Entry>>();
const cacheOf = (db: Db) => { let c = caches.get(db); if (!c) { c = new Map(); caches.set(db, c); } return c; };

/** Key row by prefix, read through a short per-gateway cache (wall time: it bounds staleness, not key validity). */
export async function cachedKey(db: Db, prefix: string): Promise<KeyRow | null> {
  const cache = cacheOf(db);
  const hit = cache.get(prefix);
  if (hit && hit.until > Date.now()) return hit.row;
  const row = await findKeyByPrefix(db, prefix);
  // Unknown prefixes are not cached: a key minted a moment later must work at once.
  if (row) cache.set(prefix, { row, until: Date.now() + KEY_CACHE_MS });
  else cache.delete(prefix);
  if (cache.size > 50_000) cache.clear(); // a crude bound; the cache is an optimisation only
  return row;
}

export function forgetKey(db: Db, prefix: string) { cacheOf(db).delete(prefix); }

/** Tell every gateway replica (this one included) to drop a key's cached row. */
export function announceKeyChange(bus: Bus, db: Db, prefix: string) {
  forgetKey(db, prefix);
  try { bus.broadcast(KEYS_CHANGED, enc.encode(JSON.stringify({ prefix }))); } catch { /* the 5 s expiry still bounds it */ }
}

export function watchKeyChanges(bus: Bus, db: Db): { stop(): void } {
  return bus.onBroadcast(KEYS_CHANGED, (data) => {
    try {
      const { prefix } = JSON.parse(dec.decode(data)) as { prefix?: unknown };
      if (typeof prefix === 'string') forgetKey(db, prefix);
    } catch { /* a malformed notice changes nothing */ }
  });
}

/**
 * After the pillar has committed a rotation, revocation or scoping (its reply comes after the commit),
 * announce it before the caller gets the answer, so no replica keeps serving the old row.
 */
export function registerKeyChangeNotices(app: FastifyInstance, deps: GatewayDeps) {
  const watch = watchKeyChanges(deps.bus, deps.db);
  addRouteHook(app, 'onSend', async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (reply.statusCode === 200) {
      const caller = await identify(deps.db, req, deps.clock.now()).catch(() => null);
      if (caller?.kind === 'key') announceKeyChange(deps.bus, deps.db, caller.prefix);
    }
    return payload;
  }, (route) => route.config?.capability?.changesKey === true);
  app.addHook('onClose', async () => watch.stop());
}
