import { z } from 'zod';
import { blockedCodes, type BlockedCode } from './codes.ts';

export const answerKinds = ['OK', 'EMPTY', 'BLOCKED', 'OFFER'] as const;
export type AnswerKind = (typeof answerKinds)[number];

export const decimalString = z
  .string()
  .regex(/^-?\d+\.\d{2}$/, 'a decimal string with two decimals, for example "12.50"')
  .meta({ description: 'Money as two-decimal text', example: '12.50' });

export const money = z
  .object({ amount: decimalString, currency: z.string().length(3).meta({ example: 'USD' }) })
  .meta({ description: 'Money as {amount, currency}' });

export const isoDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/)
  .meta({ description: 'A date, YYYY-MM-DD', example: '2026-01-15' });
export const timestamp = z.string().meta({ description: 'An ISO 8601 timestamp', example: '2026-01-15T12:00:00.000Z' });

export const provenance = z.object({
  simulated: z.boolean(),
  environment: z.enum(['sandbox', 'live']),
  source: z.string().meta({ description: 'The answering service and its version', example: 'services-pillar@0.1.0' }),
});
export type Provenance = z.infer<typeof provenance>;

/** The x402 payment that paid for a call: its receipt, as PAYMENT-RESPONSE carries it too. */
export const paymentReceipt = z.object({
  id: z.string().meta({ description: 'Our payment id (pay_…)' }),
  intentId: z.string().meta({ description: 'The intent this payment paid (pi_…): GET /intents/{intentId}' }),
  network: z.string().meta({ description: 'CAIP-2 network the transfer was made on', example: 'eip155:84532' }),
  asset: z.string(),
  payer: z.string().meta({ description: 'The paying address' }),
  payTo: z.string(),
  amount: decimalString.meta({ description: 'The amount transferred, in the token (USD)' }),
  transaction: z.string().nullable().meta({
    description: "The transfer's transaction hash (null when it was found on chain by its authorization only)",
  }),
  signedReceipt: z
    .object({
      format: z.enum(['jws', 'eip712']).meta({ description: 'How it is signed: a JWS (EdDSA, did:jwk key id) here' }),
      signature: z.string().meta({ description: 'The JWS compact serialization; its payload is the receipt' }),
      payload: z.record(z.string(), z.unknown()).optional().meta({ description: 'The receipt (EIP-712 only)' }),
    })
    .optional()
    .meta({
      description:
        "The service's signed receipt (x402 offer-receipt extension: resourceUrl, network, payer, issuedAt, " +
        'transaction), the one PAYMENT-RESPONSE carries; absent when the deployment signs nothing',
    }),
});
export type PaymentReceipt = z.infer<typeof paymentReceipt>;

export const meter = z.object({
  charged: decimalString.meta({
    description:
      'What this call collected: 0.00 for a simulated settlement (the sandbox key route) or a free call; ' +
      'the amount an x402 payment moved',
  }),
  posted: z.boolean().meta({ description: 'Whether the charge is posted to the account ledger' }),
  payment: paymentReceipt.optional().meta({ description: 'The x402 payment that paid for this call, when one did' }),
});
export type Meter = z.infer<typeof meter>;

/** One problem with the input, by field path (dot-joined), said so a caller can fix it. */
export const problem = z.object({
  field: z.string(),
  in: z.enum(['query', 'body', 'header']).optional(),
  message: z.string(),
});
export type Problem = z.infer<typeof problem>;

/**
 * The request to make next, as an agent needs it: method and path (a capability's name is not enough). BLOCKED
 * and OFFER answers carry it as `value.next` whenever the way forward is a request to this service, and their
 * message names it too (docs/decisions.md).
 */
export const nextRequest = z
  .object({
    method: z.enum(['GET', 'POST']),
    path: z.string().meta({ example: '/keys' }),
  })
  .meta({ description: 'The next request to make: method and path' });
export type NextRequest = z.infer<typeof nextRequest>;
/** A next request as the message names it: `POST /keys`. */
export const requestText = (n: NextRequest) => `${n.method} ${n.path}`;
/** Minting a key: the next request of every key refusal. */
export const MINT_KEY: NextRequest = { method: 'POST', path: '/keys' };

export const blockedValue = z
  .object({
    code: z.enum(Object.keys(blockedCodes) as [BlockedCode, ...BlockedCode[]]),
    message: z.string(),
    problems: z.array(problem).optional(),
    next: nextRequest.optional(),
  })
  .catchall(z.unknown());
export type BlockedValue = z.infer<typeof blockedValue>;

export const offerValue = z
  .object({
    code: z.literal('payment-required'),
    message: z.string(),
    capability: z.string(),
    price: money,
    ceiling: money.meta({ description: 'The most this call can cost, take-rates included' }),
    intent: z.object({
      id: z.string(),
      status: z.literal('pending'),
      capability: z.string(),
      expiresAt: timestamp,
    }),
    settle: z.object({ method: z.literal('POST'), path: z.string() }),
    next: nextRequest.optional().meta({ description: 'The next request to make: the settlement, as in `settle`' }),
    x402: z
      .looseObject({
        x402Version: z.literal(2),
        resource: z.looseObject({ url: z.string() }),
        accepts: z.array(
          z.looseObject({
            scheme: z.string(),
            network: z.string(),
            amount: z.string(),
            asset: z.string(),
            payTo: z.string(),
            maxTimeoutSeconds: z.number(),
          }),
        ),
      })
      .optional()
      .meta({
        description:
          'The same offer as x402 v2 PaymentRequired (what PAYMENT-REQUIRED carries): ' +
          'sign a payment for it with any x402 client and send it as PAYMENT-SIGNATURE ' +
          'to the same request or to `settle`',
      }),
  })
  .catchall(z.unknown());
export type OfferValue = z.infer<typeof offerValue>;

const envelopeBase = {
  answers: z.string().regex(/^[A-Za-z]+@\d+$/),
  evidence: z.record(z.string(), z.unknown()),
  provenance,
  events: z.array(z.unknown()),
  meter,
};

/** The Answer envelope for one capability whose OK value is `value`. */
export function answerSchema<V extends z.ZodType>(value: V) {
  return z.discriminatedUnion('type', [
    z.object({ type: z.literal('OK'), value, ...envelopeBase }),
    z.object({ type: z.literal('EMPTY'), value: z.record(z.string(), z.unknown()), ...envelopeBase }),
    z.object({ type: z.literal('BLOCKED'), value: blockedValue, ...envelopeBase }),
    z.object({ type: z.literal('OFFER'), value: offerValue, ...envelopeBase }),
  ]);
}
export const anyAnswer = answerSchema(z.record(z.string(), z.unknown()));

// Type aliases, not interfaces: an answer is a JSON record (assignable to Record<string, unknown>).
type Envelope = {
  answers: string;
  evidence: Record<string, unknown>;
  provenance: Provenance;
  events: unknown[];
  meter: Meter;
};
export type Ok<T> = Envelope & { type: 'OK'; value: T };
export type Empty = Envelope & { type: 'EMPTY'; value: Record<string, unknown> };
export type Blocked = Envelope & { type: 'BLOCKED'; value: BlockedValue };
export type Offer = Envelope & { type: 'OFFER'; value: OfferValue };
/** What a pillar answers a capability call: OK, EMPTY or BLOCKED (an OFFER is the offer gate's, never a pillar's). */
export type PillarAnswer = Ok<Record<string, unknown>> | Empty | Blocked;
/** A caller must narrow on `type` (and handle the Offer) before reading an OK value. */
export type Answer<T> = Ok<T> | Empty | Blocked | Offer;

export const FREE_METER: Meter = { charged: '0.00', posted: false };

/** HTTP status of an answer: OK and EMPTY 200, OFFER 402, BLOCKED by its code. */
export function httpStatusOf(answer: { type: AnswerKind; value?: unknown }): number {
  if (answer.type === 'OK' || answer.type === 'EMPTY') return 200;
  if (answer.type === 'OFFER') return 402;
  const code = (answer.value as { code?: string } | undefined)?.code ?? 'internal';
  return (blockedCodes as Record<string, number>)[code] ?? 400;
}

/** A BLOCKED answer built outside any capability (gateway, platform faces). */
export function blocked(
  code: BlockedCode,
  message: string,
  extra: Record<string, unknown> = {},
  provenanceIn: Provenance = { simulated: false, environment: 'sandbox', source: 'gateway' },
): Blocked {
  const next = extra.next as NextRequest | undefined;
  // The message names the next request too, for a reader that reads only the text.
  const said = next && !message.includes(requestText(next)) ? `${message} (next: ${requestText(next)})` : message;
  const value = { code, message: said, ...extra } as BlockedValue;
  return {
    type: 'BLOCKED',
    answers: 'Blocked@1',
    value,
    evidence: value,
    provenance: provenanceIn,
    events: [],
    meter: FREE_METER,
  };
}

/**
 * Problems from a zod error. An unknown member is named as its own field (zod reports it on its parent), so a
 * misspelt query parameter reads `{field: "vinn", in: "query"}`, not a problem with the whole body.
 */
export function problemsOf(
  issues: readonly { code?: string; path: readonly PropertyKey[]; message: string; keys?: readonly string[] }[],
  where?: 'query' | 'body' | 'header',
): Problem[] {
  const at = (path: readonly PropertyKey[]) => path.map(String).join('.') || `(${where ?? 'body'})`;
  return issues.flatMap((i) =>
    i.code === 'unrecognized_keys' && i.keys?.length
      ? i.keys.map((k) => ({
          field: at([...i.path, k]),
          ...(where ? { in: where } : {}),
          message: `"${k}" is not a parameter of this operation; remove it (or check its spelling)`,
        }))
      : [{ field: at(i.path), ...(where ? { in: where } : {}), message: i.message }],
  );
}
