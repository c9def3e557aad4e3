import { edgeOf, type apiKey } from '@vcs/contract';
import { ok, refuse, type CallContext, type KeyRow, type NounHandlers, type Queryable } from '@vcs/platform';
import { insertKey } from '../keys.ts';
import { move, mustMove } from '../money/transition.ts';
import type { CommerceSettings } from '../config.ts';

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);
export function keyRecord(r: KeyRow) {
  return {
    id: r.id,
    prefix: r.prefix,
    trustTier: r.trust_tier,
    scopes: r.scopes,
    mandateBinding: r.mandate_binding,
    owner: r.account_id,
    createdAt: iso(r.created_at)!,
    lastRotatedAt: iso(r.last_rotated_at),
    expiresAt: iso(r.expires_at),
    status: r.status,
  };
}

/** The runner copies the answer into the event; a secret must never ride along into the outbox or the stream. */

/** Append one transition to the key's own history (never the secret). */
async function recordKeyEvent(tx: Queryable, row: KeyRow, type: string, at: Date, data: Record<string, unknown> = {}) {
  await tx.query('insert into api_key_events(key_id, account_id, type, data, occurred_at) values ($1,$2,$3,$4,$5)', [
    row.id,
    row.account_id,
    type,
    JSON.stringify({ prefix: row.prefix, ...data }),
    at,
  ]);
}

/** The calling key, locked for the change; scoped by account so no account ever reaches another's key. */
async function callingKey(tx: Queryable, keyId: string | null, account: string | null): Promise<KeyRow | null> {
  if (!keyId || !account) return null;
  const { rows } = await tx.query<KeyRow>('select * from api_keys where id = $1 and account_id = $2 for update', [
    keyId,
    account,
  ]);
  return rows[0] ?? null;
}

const noKey = () =>
  refuse(
    'key-required',
    'send the key to act on as Authorization: Bearer <key> (or X-Api-Key); mint one with POST /keys',
    { next: { method: 'POST', path: '/keys' } },
  );

/** A key's scopes and mandate binding (its status moves through the table: money/transition.ts). */
async function setBinding(tx: Queryable, id: string, scopes: string[], mandateBinding: string): Promise<KeyRow> {
  const { rows } = await tx.query<KeyRow>(
    'update api_keys set scopes = $2, mandate_binding = $3 where id = $1 returning *',
    [id, scopes, mandateBinding],
  );
  return rows[0]!;
}

/** A new key on the calling key's account, at its environment and trust tier, recorded with `event`; null: no key. */
async function siblingKey(tx: Queryable, ctx: CallContext, now: Date, event: 'ApiKey.created@1' | 'ApiKey.minted@1') {
  const me = await callingKey(tx, ctx.keyId, ctx.account);
  if (!me) return null;
  const { key, row } = await insertKey(tx, {
    environment: ctx.environment,
    accountId: me.account_id,
    trustTier: me.trust_tier,
    now,
  });
  await recordKeyEvent(tx, row, event, now, { by: me.id });
  return { me, key, row };
}

/** Every verb acts on the calling key or its account (from the call context), never on an id from the body. */
export const apiKeyHandlers: NounHandlers<typeof apiKey, CommerceSettings> = {
  async create(_input, { tx, ctx, clock }) {
    const made = await siblingKey(tx, ctx, clock.now(), 'ApiKey.created@1');
    if (!made) return noKey();
    const { me, key, row } = made;
    return ok(
      {
        apiKey: row.id,
        prefix: row.prefix,
        subject: row.account_id,
        scopes: row.scopes,
        status: row.status,
        createdAt: iso(row.created_at)!,
        secretOnce: key,
      },
      { eventData: { by: me.id } },
    );
  },

  async mint(_input, { tx, ctx, clock }) {
    const made = await siblingKey(tx, ctx, clock.now(), 'ApiKey.minted@1');
    if (!made) return noKey();
    const { me, key, row } = made;
    return ok({ ...keyRecord(row), secretOnce: key }, { eventData: { by: me.id } });
  },

  async rotate(_input, { tx, ctx, clock, settings }) {
    const me = await callingKey(tx, ctx.keyId, ctx.account);
    if (!me) return noKey();
    // The table says which keys a rotation may supersede (an active one): a superseded key's successor rotates.
    if (!(edgeOf('key', 'supersede').from as string[]).includes(me.status)) {
      return refuse(
        'forbidden',
        `this key is ${me.status} and cannot be rotated again; ` +
          `rotate its successor${me.superseded_by ? ` ${me.superseded_by}` : ''} ` +
          'by sending that key to POST /api-keys/rotate',
        { status: me.status, successor: me.superseded_by, next: { method: 'POST', path: '/api-keys/rotate' } },
      );
    }
    const now = clock.now();
    const graceUntil = new Date(now.getTime() + settings.KEY_ROTATION_GRACE_SECONDS * 1000);
    const { key, row } = await insertKey(tx, {
      environment: ctx.environment,
      accountId: me.account_id,
      trustTier: me.trust_tier,
      scopes: me.scopes,
      now,
    });
    const successor = (
      await tx.query<KeyRow>(
        'update api_keys set mandate_binding = $2, last_rotated_at = $3 where id = $1 returning *',
        [row.id, me.mandate_binding, now],
      )
    ).rows[0]!;
    const old = await mustMove<KeyRow, 'key'>(tx, 'key', me.id, me.status, 'supersede', {
      superseded_by: successor.id,
      grace_until: graceUntil,
      last_rotated_at: now,
    });
    await recordKeyEvent(tx, successor, 'ApiKey.minted@1', now, { supersedes: old.id });
    await recordKeyEvent(tx, old, 'ApiKey.rotated@1', now, {
      successor: successor.id,
      graceUntil: graceUntil.toISOString(),
    });
    return ok(
      { ...keyRecord(successor), secretOnce: key },
      { eventData: { supersedes: old.id, graceUntil: graceUntil.toISOString() } },
    );
  },

  async revoke(_input, { tx, ctx, clock }) {
    const me = await callingKey(tx, ctx.keyId, ctx.account);
    if (!me) return noKey();
    const now = clock.now();
    const row = (await move<KeyRow, 'key'>(tx, 'key', me.id, 'revoke', { revoked_at: now, grace_until: null })) ?? me;
    await recordKeyEvent(tx, row, 'ApiKey.revoked@1', now, { from: me.status });
    return ok(keyRecord(row));
  },

  async scope(input, { tx, ctx, clock }) {
    const me = await callingKey(tx, ctx.keyId, ctx.account);
    if (!me) return noKey();
    const scopes = input.scopes ? [...new Set(input.scopes)] : me.scopes;
    const widened = scopes.filter((s) => !me.scopes.includes(s));
    if (widened.length) {
      return refuse(
        'forbidden',
        `scope only narrows: this key holds [${me.scopes.join(', ')}] ` +
          `and cannot gain [${widened.join(', ')}]; mint a new key for wider scopes`,
        { scopes: me.scopes },
      );
    }
    const now = clock.now();
    const row = await setBinding(tx, me.id, scopes, input.mandateBinding ?? me.mandate_binding);
    await recordKeyEvent(tx, row, 'ApiKey.scoped@1', now, {
      scopes: row.scopes,
      mandateBinding: row.mandate_binding,
      was: me.scopes,
    });
    return ok({
      apiKey: row.id,
      scopes: row.scopes,
      mandateBinding: row.mandate_binding,
      status: 'scoped',
      scopedAt: now.toISOString(),
    });
  },
};
