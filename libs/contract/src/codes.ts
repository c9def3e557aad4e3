// One error model: every BLOCKED answer carries one of these codes, and the code decides the HTTP status.
export const blockedCodes = {
  'invalid-input': 400,
  'malformed-json': 400,
  'unsupported-media-type': 415,
  'invalid-vin': 400,
  'invalid-mandate': 400,
  'invalid-price-header': 400,
  // A Sandbox-Trigger the capability does not list (or any trigger with a live key): nothing runs or moves.
  'trigger-not-honoured': 400,
  'key-required': 401,
  'key-unknown': 401,
  'key-revoked': 401,
  'key-superseded': 401,
  'key-expired': 401,
  forbidden: 403,
  NEEDS_HUMAN: 403,
  'mandate-ceiling-exceeded': 403,
  'mandate-per-action-exceeded': 403,
  'mandate-expired': 403,
  'mandate-required': 403,
  tripwire: 403,
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
  'uri-too-long': 414,
  'headers-too-large': 431,
  'idempotency-key-reused': 422,
  // A settlement declined (sandbox): that intent can no longer be settled; a new offer is a new call (not "pay this").
  'offer-declined': 409,
  'rate-limited': 429,
  'sandbox-blocked': 422,
  'execution-failed': 422,
  // A capability's own payment step failed (the `fail` trigger): its answer, a failure like execution-failed.
  'payment-failed': 422,
  // x402 payments refused for good (nothing ran, nothing was collected): each says which term was wrong.
  'payment-invalid': 402,
  'payment-invalid-signature': 402,
  'payment-wrong-amount': 402,
  'payment-wrong-recipient': 402,
  'payment-wrong-asset': 402,
  'payment-wrong-network': 402,
  'payment-wrong-scheme': 402,
  'payment-expired': 402,
  'payment-already-used': 402,
  'payment-other-intent': 409,
  // A payment offered for one resource (capability and input) presented for another: nothing moves.
  'payment-wrong-resource': 409,
  // x402 payment-identifier: the id was first sent with another payment.
  'payment-identifier-conflict': 409,
  'payment-insufficient-funds': 402,
  'payments-not-accepted': 400,
  // The payment's or the execution's outcome is not known yet: never a 402 (a client would pay again).
  'payment-unavailable': 503,
  'payment-pending': 503,
  'execution-pending': 503,
  'human-refused': 403,
  'pillar-unavailable': 503,
  'store-unavailable': 503,
  internal: 500,
} as const;

export type BlockedCode = keyof typeof blockedCodes;

export function statusOfCode(code: string): number {
  return (blockedCodes as Record<string, number>)[code] ?? 400;
}
