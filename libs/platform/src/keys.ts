import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

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
  id: string;
  account_id: string;
  prefix: string;
  secret_hash: Buffer;
  scopes: string[];
  mandate_binding: string;
  trust_tier: string;
  status: 'active' | 'superseded' | 'revoked';
  superseded_by: string | null;
  grace_until: Date | null;
  created_at: Date;
  last_rotated_at: Date | null;
  expires_at: Date | null;
  revoked_at: Date | null;
}
