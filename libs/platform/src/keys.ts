import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { newId } from '@vcs/contract';
import type { Queryable } from './store/db.ts';

/**
 * A key is `vcs_<env>_<lookup>_<secret>`: `vcs_<env>_<lookup>` is its visible, non-secret prefix
 * (says the environment, finds the row without scanning); the whole key is stored only as a sha256 hash.
 */
export type Environment = 'sandbox' | 'live';
const ENV_TAG: Record<Environment, string> = { sandbox: 'test', live: 'live' };

export function hashSecret(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

export function parseKey(key: string): { prefix: string; environment: Environment } | null {
  const m = /^(vcs_(test|live)_[A-Za-z0-9]{10})_[A-Za-z0-9_-]{43}$/.exec(key);
  if (!m) return null;
  return { prefix: m[1]!, environment: m[2] === 'live' ? 'live' : 'sandbox' };
}

export function generateKey(environment: Environment): { key: string; prefix: string; hash: Buffer } {
  const lookup = randomBytes(16).toString('base64url').replace(/[-_]/g, '').slice(0, 10).padEnd(10, 'x');
  const prefix = `vcs_${ENV_TAG[environment]}_${lookup}`;
  const key = `${prefix}_${randomBytes(32).toString('base64url')}`;
  return { key, prefix, hash: hashSecret(key) };
}

/** Constant-time comparison of a presented key with a stored hash. */
export function keyMatches(key: string, storedHash: Buffer | Uint8Array): boolean {
  const a = hashSecret(key);
  const b = Buffer.from(storedHash);
  return a.length === b.length && timingSafeEqual(a, b);
}

export interface KeyRow {
  id: string; account_id: string; prefix: string; secret_hash: Buffer; scopes: string[]; mandate_binding: string;
  trust_tier: string; status: 'active' | 'superseded' | 'revoked'; superseded_by: string | null; grace_until: Date | null;
  created_at: Date; last_rotated_at: Date | null; expires_at: Date | null; revoked_at: Date | null;
}

/** Insert a new key for an account (creating the account when `accountId` is null). Returns the secret once. */
export async function insertKey(
  q: Queryable,
  opts: { environment: Environment; accountId?: string | null; trustTier?: string; scopes?: string[]; now: Date },
): Promise<{ key: string; row: KeyRow }> {
  let accountId = opts.accountId ?? null;
  if (!accountId) {
    accountId = newId('account');
    await q.query('insert into accounts(id, environment, trust_tier, created_at) values ($1,$2,$3,$4)', [accountId, opts.environment, opts.trustTier ?? 'anonymous', opts.now]);
  }
  const { key, prefix, hash } = generateKey(opts.environment);
  const { rows } = await q.query<KeyRow>(
    `insert into api_keys(id, account_id, prefix, secret_hash, scopes, trust_tier, created_at)
     values ($1,$2,$3,$4,$5,$6,$7) returning *`,
    [newId('apiKey'), accountId, prefix, hash, opts.scopes ?? ['read', 'act'], opts.trustTier ?? 'anonymous', opts.now],
  );
  return { key, row: rows[0]! };
}

export async function findKeyByPrefix(q: Queryable, prefix: string): Promise<KeyRow | null> {
  const { rows } = await q.query<KeyRow>('select * from api_keys where prefix = $1', [prefix]);
  const r = rows[0];
  if (!r) return null;
  return { ...r, secret_hash: Buffer.from(r.secret_hash as any) };
}
