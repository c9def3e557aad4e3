import { randomBytes } from 'node:crypto';

// Every id the service hands out carries a prefix from this one table (Stripe/Unkey style).
export const idPrefixes = {
  account: 'acct_',
  apiKey: 'key_',
  intent: 'pi_',
  handoff: 'ho_',
  event: 'evt_',
  deal: 'deal_',
  totalLoss: 'tl_',
  webhookEndpoint: 'ep_',
  subscription: 'sub_',
  delivery: 'dlv_',
  connection: 'conn_',
  request: 'req_',
} as const;
export type IdKind = keyof typeof idPrefixes;

export function newId(kind: IdKind): string {
  return idPrefixes[kind] + randomBytes(12).toString('base64url');
}

/**
 * Ids for things minted at a high rate and never guessed at (request ids): a random per-process stem plus a
 * counter. As unique as `newId` across processes, without drawing random bytes per request.
 */
export function idSequence(kind: IdKind): () => string {
  const stem = idPrefixes[kind] + randomBytes(6).toString('base64url');
  let n = 0;
  return () => stem + (n++).toString(36).padStart(6, '0');
}
