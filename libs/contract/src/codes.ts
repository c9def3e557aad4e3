// One error model: every BLOCKED answer carries one of these codes, and the code decides the HTTP status.
export const blockedCodes = {
  'invalid-input': 400,
  'malformed-json': 400,
  'unsupported-media-type': 415,
  'invalid-vin': 400,
  'invalid-mandate': 400,
  'invalid-price-header': 400,
  'key-required': 401,
  'key-unknown': 401,
  'key-revoked': 401,
  'key-superseded': 401,
  'key-expired': 401,
  'forbidden': 403,
  'NEEDS_HUMAN': 403,
  'mandate-ceiling-exceeded': 403,
  'mandate-per-action-exceeded': 403,
  'mandate-expired': 403,
  'mandate-required': 403,
  'tripwire': 403,
  'not-found': 404,
  'intent-not-found': 404,
  'handoff-not-found': 404,
  'deal-not-found': 404,
  'method-not-allowed': 405,
  'idempotency-in-flight': 409,
  'intent-not-settleable': 409,
  'deal-step-conflict': 409,
  'intent-expired': 410,
  'intent-other-account': 403,
  'payload-too-large': 413,
  'idempotency-key-reused': 422,
  'offer-declined': 402,
  'rate-limited': 429,
  'sandbox-blocked': 422,
  'execution-failed': 422,
  'payment-failed': 402,
  'human-refused': 403,
  'pillar-unavailable': 503,
  'store-unavailable': 503,
  'internal': 500,
} as const;

export type BlockedCode = keyof typeof blockedCodes;

export function statusOfCode(code: string): number {
  return (blockedCodes as Record<string, number>)[code] ?? 400;
}
