import { newId, type OpReplyOf } from '@vcs/contract';
import { generateKey, type Environment, type KeyRow, type Queryable, type Services } from '@vcs/platform';

/** `keys.mint` (contract ops.ts), behind POST /keys: mint an anonymous sandbox key and its account. */
export async function mintAnonymousKey(services: Services): Promise<OpReplyOf<'keysMint'>> {
  const now = services.clock.now();
  const { key, row } = await services.db.tx(async (q) => {
    const minted = await insertKey(q, { environment: 'sandbox', now });
    await q.query('insert into api_key_events(key_id, account_id, type, data, occurred_at) values ($1,$2,$3,$4,$5)', [
      minted.row.id,
      minted.row.account_id,
      'ApiKey.minted@1',
      JSON.stringify({ prefix: minted.row.prefix, via: 'POST /keys' }),
      now,
    ]);
    return minted;
  });
  return { status: 200, answer: { type: 'OK', key, account: row.account_id, keyId: row.id, prefix: row.prefix } };
}

/** Insert a new key for an account (creating the account when `accountId` is null). Returns the secret once. */
export async function insertKey(
  q: Queryable,
  opts: { environment: Environment; accountId?: string | null; trustTier?: string; scopes?: string[]; now: Date },
): Promise<{ key: string; row: KeyRow }> {
  let accountId = opts.accountId ?? null;
  if (!accountId) {
    accountId = newId('account');
    await q.query('insert into accounts(id, environment, trust_tier, created_at) values ($1,$2,$3,$4)', [
      accountId,
      opts.environment,
      opts.trustTier ?? 'anonymous',
      opts.now,
    ]);
  }
  const { key, prefix, hash } = generateKey(opts.environment);
  const { rows } = await q.query<KeyRow>(
    `insert into api_keys(id, account_id, prefix, secret_hash, scopes, trust_tier, created_at)
     values ($1,$2,$3,$4,$5,$6,$7) returning *`,
    [newId('apiKey'), accountId, prefix, hash, opts.scopes ?? ['read', 'act'], opts.trustTier ?? 'anonymous', opts.now],
  );
  return { key, row: rows[0]! };
}

/** A key row as the driver reads it: bytea is a Buffer from pg but a plain Uint8Array from PGlite. */
type StoredKeyRow = Omit<KeyRow, 'secret_hash'> & { secret_hash: Uint8Array };

export async function findKeyByPrefix(q: Queryable, prefix: string): Promise<KeyRow | null> {
  const { rows } = await q.query<StoredKeyRow>('select * from api_keys where prefix = $1', [prefix]);
  const r = rows[0];
  if (!r) return null;
  return { ...r, secret_hash: Buffer.from(r.secret_hash) };
}

/** `keys.lookup`: the key row the gateway checks a presented key against (a hash and its standing, never a secret). */
export async function lookupKey(services: Services, prefix: string): Promise<OpReplyOf<'keysLookup'>> {
  const row = await findKeyByPrefix(services.db, prefix);
  if (!row) return { status: 200, answer: { type: 'EMPTY', value: {} } };
  const at = (d: Date | null) => (d === null ? null : new Date(d).toISOString());
  const value = {
    ...row,
    secret_hash: row.secret_hash.toString('hex'),
    grace_until: at(row.grace_until),
    created_at: at(row.created_at)!,
    last_rotated_at: at(row.last_rotated_at),
    expires_at: at(row.expires_at),
    revoked_at: at(row.revoked_at),
  };
  return { status: 200, answer: { type: 'OK', answers: 'ApiKeyRow@1', value } };
}
