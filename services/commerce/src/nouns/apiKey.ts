import type { apiKey } from '@vcs/contract';
import { insertKey, ok, refuse, type KeyRow, type NounHandlers } from '@vcs/platform';

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);
export function keyRecord(r: KeyRow) {
  return {
    id: r.id, prefix: r.prefix, trustTier: r.trust_tier, scopes: r.scopes, mandateBinding: r.mandate_binding,
    owner: r.account_id, createdAt: iso(r.created_at)!, lastRotatedAt: iso(r.last_rotated_at), expiresAt: iso(r.expires_at), status: r.status,
  };
}

// Foundation version: the keys issue completes rotation grace, revocation push and scoping.
export const apiKeyHandlers: NounHandlers<typeof apiKey> = {
  async create(_input, { tx, ctx, clock }) {
    if (!ctx.account) return refuse('key-required', 'a key is required');
    const { key, row } = await insertKey(tx, { environment: ctx.environment, accountId: ctx.account, now: clock.now() });
    return ok({ apiKey: row.id, prefix: row.prefix, subject: row.account_id, scopes: row.scopes, status: row.status, createdAt: iso(row.created_at)!, secretOnce: key });
  },
  async mint(_input, { tx, ctx, clock }) {
    if (!ctx.account) return refuse('key-required', 'a key is required');
    const { key, row } = await insertKey(tx, { environment: ctx.environment, accountId: ctx.account, now: clock.now() });
    return ok({ ...keyRecord(row), secretOnce: key });
  },
  async rotate() { return refuse('forbidden', 'rotation is not available yet'); },
  async revoke() { return refuse('forbidden', 'revocation is not available yet'); },
  async scope() { return refuse('forbidden', 'scoping is not available yet'); },
};
