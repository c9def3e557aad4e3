import type { z } from 'zod';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { broadcasts, ops } from '@vcs/contract';
import { anonymousContext, callOp, dec, enc, type Bus, type KeyRow } from '@vcs/platform';
import { addRouteHook } from './routeCapability.ts';

/**
 * Every gateway hears that a key changed (revoked, rotated, scoped) and drops its cached row (contract `broadcasts`).
 */
const { keysChanged } = broadcasts;

/** How long a gateway trusts a key row it read; a broadcast change drops it sooner. */
export const KEY_CACHE_MS = 5_000;

interface Entry {
  row: KeyRow;
  until: number;
}

/**
 * Commerce could not be asked about a key, or could not answer it: the caller gets a typed 503, never a guess.
 * `code` is the cause: `store-unavailable` when commerce answered that its store is down, else `pillar-unavailable`.
 */
export class KeyCheckUnavailable extends Error {
  override name = 'KeyCheckUnavailable';
  constructor(
    message: string,
    readonly code: 'store-unavailable' | 'pillar-unavailable',
  ) {
    super(message);
  }
}

/** The key row as commerce, which owns the table, has it now (`keys.lookup`); null when there is none. */
export async function lookupKey(
  bus: Bus,
  prefix: string,
  requestId: string,
  timeoutMs: number,
): Promise<KeyRow | null> {
  const r = await callOp({ bus, busTimeoutMs: timeoutMs }, ops.keysLookup, { prefix }, anonymousContext(requestId));
  if (r.answer.type === 'BLOCKED')
    throw new KeyCheckUnavailable(
      r.answer.value.message,
      r.answer.value.code === 'store-unavailable' ? 'store-unavailable' : 'pillar-unavailable',
    );
  if (r.answer.type !== 'OK') return null;
  const v = r.answer.value;
  const date = (t: string | null) => (t === null ? null : new Date(t));
  return {
    ...v,
    secret_hash: Buffer.from(v.secret_hash, 'hex'),
    created_at: new Date(v.created_at),
    grace_until: date(v.grace_until),
    last_rotated_at: date(v.last_rotated_at),
    expires_at: date(v.expires_at),
    revoked_at: date(v.revoked_at),
  };
}

/**
 * Key rows by prefix, a short cache of one gateway (made by buildApp, so two apps in one process never share it):
 * the gateway's clock bounds staleness (not key validity), and a broadcast change drops a row sooner.
 */
export class KeyCache {
  private rows = new Map<string, Entry>();
  constructor(private bus: Bus) {}

  async get(prefix: string, now: number, requestId: string, timeoutMs: number): Promise<KeyRow | null> {
    const hit = this.rows.get(prefix);
    if (hit && hit.until > now) return hit.row;
    const row = await lookupKey(this.bus, prefix, requestId, timeoutMs);
    // Unknown prefixes are not cached: a key minted a moment later must work at once.
    if (row) this.rows.set(prefix, { row, until: now + KEY_CACHE_MS });
    else this.rows.delete(prefix);
    if (this.rows.size > 50_000) this.rows.clear(); // a crude bound; the cache is an optimisation only
    return row;
  }

  forget(prefix: string) {
    this.rows.delete(prefix);
  }

  /** Tell every gateway replica (this one included) to drop a key's cached row. */
  announce(prefix: string) {
    this.forget(prefix);
    try {
      this.bus.broadcast(
        keysChanged.subject,
        enc.encode(JSON.stringify({ prefix } satisfies z.input<typeof keysChanged.payload>)),
      );
    } catch {
      /* the 5 s expiry still bounds it */
    }
  }

  watch(): { stop(): void } {
    return this.bus.onBroadcast(keysChanged.subject, (data) => {
      let notice: unknown;
      try {
        notice = JSON.parse(dec.decode(data));
      } catch {
        return;
      } // a malformed notice changes nothing
      const parsed = keysChanged.payload.safeParse(notice);
      if (parsed.success) this.forget(parsed.data.prefix);
    });
  }
}

/**
 * After the pillar has committed a rotation, revocation or scoping (its reply comes after the commit),
 * announce it before the caller gets the answer, so no replica keeps serving the old row.
 */
export function registerKeyChangeNotices(app: FastifyInstance, keys: KeyCache) {
  const watch = keys.watch();
  addRouteHook(
    app,
    'onSend',
    async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      if (reply.statusCode === 200 && req.caller.kind === 'key') keys.announce(req.caller.prefix);
      return payload;
    },
    (route) => route.config?.capability?.changesKey === true,
  );
  app.addHook('onClose', async () => watch.stop());
}
