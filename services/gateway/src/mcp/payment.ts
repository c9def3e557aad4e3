// x402 inside MCP (the x402 MCP transport's tool-result binding): an OFFER that exec's code returns becomes x402's
// payment-required tool result, and the same call sent again with a PaymentPayload in `_meta["x402/payment"]` pays
// that offer's intent through the HTTP route an x402 client would use (POST /intents/{id}/settle with
// PAYMENT-SIGNATURE), so every money rule of commerce holds here too. The isolate never sees the payment.
import type { FastifyInstance } from 'fastify';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

export const PAYMENT_META = 'x402/payment';
export const PAYMENT_RESPONSE_META = 'x402/payment-response';

const text = (t: string) => ({ type: 'text' as const, text: t });
const fromBase64Json = (raw: string): unknown => JSON.parse(Buffer.from(raw, 'base64').toString('utf8'));

/** The x402 v2 PaymentRequired an OFFER answer carries (`value.x402`, the object the HTTP 402 sends), if any. */
const offerWithTerms = z.object({
  type: z.literal('OFFER'),
  value: z.object({
    capability: z.string(),
    x402: z.object({ x402Version: z.literal(2), accepts: z.array(z.unknown()).min(1) }).loose(),
  }),
});

/**
 * x402's payment-required result: `isError`, the PaymentRequired as `structuredContent` and the same JSON as
 * `content[0].text` (what the spec asks), then one line for a reader that is not an x402 client.
 */
function paymentRequired(required: Record<string, unknown>, note: string): CallToolResult {
  return { isError: true, structuredContent: required, content: [text(JSON.stringify(required)), text(note)] };
}

/**
 * The payment-required result for what exec's code returned, or null when it is not an offer to pay. `complete` adds
 * the PaymentRequired's x402 extensions (the 402 body carries the terms alone; PAYMENT-REQUIRED has them all).
 */
export async function offerResult(
  result: unknown,
  complete: (capability: string, x402: Record<string, unknown>) => Promise<Record<string, unknown>>,
): Promise<CallToolResult | null> {
  const offer = offerWithTerms.safeParse(result);
  if (!offer.success) return null;
  return paymentRequired(
    await complete(offer.data.value.capability, offer.data.value.x402),
    'The code returned an OFFER. Pay it with x402: call exec again with the same code and ' +
      `params._meta["${PAYMENT_META}"] = a PaymentPayload for accepts[0]; the code is not run again.`,
  );
}

const paymentShape = z
  .object({
    x402Version: z.literal(2),
    accepted: z.object({ extra: z.object({ intentId: z.string().min(1) }).loose() }).loose(),
  })
  .loose();

type Answer = { type?: string; value?: Record<string, unknown>; meter?: { payment?: Record<string, unknown> } };

/**
 * Pay the offer a PaymentPayload names (`accepted.extra.intentId`) as the HTTP path does, with the caller's own
 * authorization, and answer as the transport says: the paid Answer with the receipt in
 * `_meta["x402/payment-response"]`; a refused payment as payment-required again with x402's reason; an outcome not
 * known yet as an error that says to send the same call again. Content is served only with a settled payment.
 */
export async function payOffer(
  app: FastifyInstance,
  authHeaders: Record<string, string>,
  raw: unknown,
): Promise<CallToolResult> {
  const parsed = paymentShape.safeParse(raw);
  if (!parsed.success)
    return {
      isError: true,
      content: [
        text(
          `_meta["${PAYMENT_META}"] is not a payment for one of this service's offers: send the x402 v2 PaymentPayload ` +
            'made for accepts[0] of the payment-required result (its accepted.extra.intentId names the offer)',
        ),
      ],
    };
  const payment = parsed.data;
  const intentId = payment.accepted.extra.intentId;
  const res = await app.inject({
    method: 'POST',
    url: `/intents/${encodeURIComponent(intentId)}/settle`,
    headers: {
      ...authHeaders,
      'payment-signature': Buffer.from(JSON.stringify(payment)).toString('base64'),
    },
  });
  let answer: Answer;
  try {
    answer = res.json() as Answer;
  } catch {
    return { isError: true, content: [text(`paying intent ${intentId} failed: HTTP ${res.statusCode}`)] };
  }
  const receiptHeader = res.headers['payment-response'];
  const paid = answer.meter?.payment;
  if (res.statusCode === 200 && paid) {
    const receipt =
      typeof receiptHeader === 'string'
        ? fromBase64Json(receiptHeader)
        : { success: true, transaction: paid.transaction ?? '', network: paid.network, payer: paid.payer };
    return {
      content: [text(JSON.stringify({ result: answer, calls: 1 }))],
      _meta: { [PAYMENT_RESPONSE_META]: receipt },
    };
  }
  const code = String(answer.value?.code ?? `HTTP ${res.statusCode}`);
  const message = String(answer.value?.message ?? '');
  const required = res.headers['payment-required'];
  if (res.statusCode === 402 && typeof required === 'string')
    return paymentRequired(
      fromBase64Json(required) as Record<string, unknown>,
      `Payment refused (${code}): ${message} Nothing ran; sign a new payment for accepts[0] and call again.`,
    );
  if (res.statusCode === 503)
    return {
      isError: true,
      content: [
        text(
          `Payment pending (${code}): its outcome is not known yet, and nothing is served until it is. ` +
            `Call exec again with the same code and the same _meta["${PAYMENT_META}"] ` +
            `after ${String(answer.value?.retryAfter ?? 1)} s; do not sign a new payment for it.`,
        ),
        text(JSON.stringify(answer)),
      ],
    };
  // Anything else is a refusal (another intent's payment, no such offer...); only a BLOCKED answer is shown with it.
  return {
    isError: true,
    content: [
      text(`Payment refused (${code}): ${message}`),
      ...(answer.type === 'BLOCKED' ? [text(JSON.stringify(answer))] : []),
    ],
  };
}
