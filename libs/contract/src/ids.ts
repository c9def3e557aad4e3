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
  execution: 'ex_',
  payment: 'pay_',
} as const;
export type IdKind = keyof typeof idPrefixes;

/**
 * Whether `s` can be an id of this kind: its prefix, then the characters ids are made of (base64url), at most 64.
 * Anything else names nothing, and must not travel further (a NUL byte reaches Postgres as an error; a non-ASCII
 * id, echoed into a header, breaks the response).
 */
export function isIdOf(kind: IdKind, s: string): boolean {
  return s.startsWith(idPrefixes[kind]) && /^[A-Za-z0-9_-]{1,64}$/.test(s.slice(idPrefixes[kind].length));
}

const base64url = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/**
 * Random bytes drawn 4 KiB at a time and each handed out once, as Node's `randomUUID` caches its own: one call into
 * the system's generator per few hundred ids instead of one per id (ids are made on every paid call).
 */
const pool = new Uint8Array(4096);
let used = pool.length;
function randomBytes(n: number): Uint8Array {
  if (used + n > pool.length) {
    globalThis.crypto.getRandomValues(pool);
    used = 0;
  }
  used += n;
  return pool.subarray(used - n, used);
}

/**
 * `n` random bytes (a multiple of 3) as base64url, from Web Crypto (`globalThis.crypto`, in Node 20 and every
 * browser), so the contract imports nothing Node-only.
 */
function randomText(n: number): string {
  const b = randomBytes(n);
  let s = '';
  for (let i = 0; i < n; i += 3) {
    const v = (b[i]! << 16) | (b[i + 1]! << 8) | b[i + 2]!;
    s += base64url[v >>> 18]! + base64url[(v >>> 12) & 63]! + base64url[(v >>> 6) & 63]! + base64url[v & 63]!;
  }
  return s;
}

export function newId(kind: IdKind): string {
  return idPrefixes[kind] + randomText(12);
}

/**
 * Ids for things minted at a high rate and never guessed at (request ids): a random per-process stem plus a
 * counter. As unique as `newId` across processes, without drawing random bytes per request.
 */
export function idSequence(kind: IdKind): () => string {
  const stem = idPrefixes[kind] + randomText(6);
  let n = 0;
  return () => stem + (n++).toString(36).padStart(6, '0');
}
