// x402 inside MCP (x402's MCP transport, both bindings): an OFFER that exec's code returns becomes payment-required —
// the extension binding's `payment_required` result when the request advertises `org.x402/payment` on 2026-07-28,
// else the tool-result binding's error result — and the same call sent again with a PaymentPayload in
// `_meta["x402/payment"]` pays that offer's intent through the HTTP route an x402 client would use
// (POST /intents/{id}/settle with PAYMENT-SIGNATURE), so every money rule of commerce holds here too. The isolate
// never sees the payment.
import type { FastifyInstance } from 'fastify';
import { CLIENT_CAPABILITIES_META_KEY, type CallToolResult, type ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';

export const PAYMENT_META = 'x402/payment';
export const PAYMENT_RESPONSE_META = 'x402/payment-response';
/** The extension binding's identifier, in `capabilities.extensions` of server/discover and of the client's request. */
export const PAYMENT_EXTENSION = 'org.x402/payment';

/** Which of x402's two MCP bindings answers a request's payment-required. */
export type Binding = 'extension' | 'tool-result';

/**
 * The extension binding when a 2026-07-28 request (client capabilities ride in every request's `_meta`) advertises
 * `org.x402/payment`, as the transport says to prefer it; else the tool-result binding, which every revision has. The
 * extension needs 2026-07-28: a 2025 request naming it in its `_meta` still gets the tool-result binding.
 */
export function bindingOf(ctx: ServerContext, era: 'modern' | 'legacy'): Binding {
  if (era !== 'modern') return 'tool-result';
  // The SDK types the envelope opaquely; its keys are the spec's reserved `io.modelcontextprotocol/*` ones.
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as { extensions?: Record<string, unknown> } | undefined;
  return capabilities?.extensions?.[PAYMENT_EXTENSION] !== undefined ? 'extension' : 'tool-result';
}

/** A tool's answer: a CallToolResult, or the extension binding's `payment_required` (a result type of its own). */
export type ToolAnswer =
  | CallToolResult
  | { resultType: 'payment_required'; paymentRequired: Record<string, unknown>; content: CallToolResult['content'] };

const text = (t: string) => ({ type: 'text' as const, text: t });
const fromBase64Json = (raw: string): unknown => JSON.parse(Buffer.from(raw, 'base64').toString('utf8'));

/** The x402 v2 PaymentRequired an OFFER answer carries (`value.x402`, the object the HTTP 402 sends), if any. */
const offerWithTerms = z.object({
  type: z.literal('OFFER'),
  value: z.object({ x402: z.object({ x402Version: z.literal(2), accepts: z.array(z.unknown()).min(1) }).loose() }),
});

/**
 * The PaymentRequired as MCP carries it: the terms (version, error, resource, accepts) without the HTTP 402's
 * `extensions` — discovery (bazaar), signed offers, sign-in-with-x and payment-identifier serve HTTP clients and
 * indexers; an MCP payer needs none of them to pay, and the tool-result binding writes the object twice.
 */
function termsOf(required: Record<string, unknown>): Record<string, unknown> {
  const { extensions: _httpOnly, ...terms } = required;
  return terms;
}

/**
 * Payment-required in the request's binding: `payment_required` with the PaymentRequired once (extension), or
 * `isError` with it as `structuredContent` and, as the transport requires, the same JSON as `content[0].text`
 * (tool-result); `note`, one line for a reader that is not an x402 client, follows it.
 */
function paymentRequired(required: Record<string, unknown>, note: string, binding: Binding): ToolAnswer {
  const terms = termsOf(required);
  return binding === 'extension'
    ? { resultType: 'payment_required', paymentRequired: terms, content: [text(note)] }
    : { isError: true, structuredContent: terms, content: [text(JSON.stringify(terms)), text(note)] };
}

/** The payment-required answer for what exec's code returned, or null when it is not an offer to pay. */
export function offerResult(result: unknown, binding: Binding): ToolAnswer | null {
  const offer = offerWithTerms.safeParse(result);
  if (!offer.success) return null;
  return paymentRequired(
    offer.data.value.x402,
    `An OFFER: to pay it, call exec again with the same arguments and _meta["${PAYMENT_META}"] = a PaymentPayload ` +
      'for accepts[0] (the code is not run again).',
    binding,
  );
}

const paymentShape = z
  .object({
    x402Version: z.literal(2),
    accepted: z.object({ extra: z.object({ intentId: z.string().min(1) }).loose() }).loose(),
  })
  .loose();

type Answer = {
  type?: string;
  value?: Record<string, unknown>;
  meter?: { charged?: string; posted?: boolean; payment?: Record<string, unknown> };
};

/** The paid answer as the model reads it: the signed receipt is the machines', in `_meta` beside it. */
function withoutSignedReceipt(answer: Answer): Answer {
  const payment = answer.meter?.payment;
  if (!payment || !('signedReceipt' in payment)) return answer;
  const { signedReceipt: _inMeta, ...rest } = payment;
  return { ...answer, meter: { ...answer.meter, payment: rest } };
}

/**
 * A paid call's answer as exec answers every result: `{result, calls: 1}` as JSON text, the Answer in `result`, then
 * `note` (why nothing was charged). No `structuredContent`: exec's results have none (exec declares no outputSchema),
 * and a second copy of the answer would take the wallet-only agent's path past its 8,000 characters.
 */
function answered(answer: Answer, note?: string): CallToolResult {
  return { content: [text(JSON.stringify({ result: answer, calls: 1 })), ...(note ? [text(note)] : [])] };
}

/**
 * Why a paid call's answer charged nothing, when it is the intent's recorded answer (its meter posted) with no payment
 * that moved money: a failure, an EMPTY answer where the price is for an answer, or an answer settled before by other
 * means. Null for anything else (a refusal of the payment itself, which is not the intent's answer).
 */
function notChargedWhy(answer: Answer, intentId: string): string | null {
  if (answer.meter?.posted !== true || answer.meter.payment) return null;
  const kind = answer.type;
  const why =
    kind === 'BLOCKED'
      ? `the answer is BLOCKED (${String(answer.value?.code)}), and a failure is not worth its price`
      : kind === 'EMPTY'
        ? 'the answer is EMPTY, and this price is for an answer'
        : kind === 'OK'
          ? `intent ${intentId} was settled before, without this payment; this is its stored answer`
          : null;
  if (!why) return null;
  return (
    `Not charged (meter.charged ${String(answer.meter.charged)}): ${why}. The payment was voided: never sent to ` +
    'settle, no money moved. result is the answer, as a paid one is.'
  );
}

/**
 * Pay the offer a PaymentPayload names (`accepted.extra.intentId`) as the HTTP path does, with the caller's own
 * `headers` (authorization, host), and answer as the transport says: the paid Answer with the receipt in
 * `_meta["x402/payment-response"]`; an answer not worth its price (nothing charged, the payment voided) in the same
 * shape, saying so, with no settlement response; a refused payment as payment-required again (in the request's
 * binding) with x402's reason and the offer to pay now; an outcome not known yet as an error that says to send the
 * same call again. An answer is served only with a settled payment, or when nothing was charged for it.
 */
export async function payOffer(
  app: FastifyInstance,
  headers: Record<string, string>,
  raw: unknown,
  binding: Binding,
): Promise<ToolAnswer> {
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
      ...headers,
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
    return { ...answered(withoutSignedReceipt(answer)), _meta: { [PAYMENT_RESPONSE_META]: receipt } };
  }
  // The paid call's own answer, not worth its price (BLOCKED, or EMPTY where the price is for an answer): the payment
  // was voided, never sent to settle. It is the answer the code asked for, in the paid answer's shape, with no
  // settlement response (none happened: x402's MCP transport sends one only for a settlement).
  const notCharged = notChargedWhy(answer, intentId);
  if (notCharged && res.statusCode !== 402 && res.statusCode < 500) return answered(answer, notCharged);
  const code = String(answer.value?.code ?? `HTTP ${res.statusCode}`);
  const message = String(answer.value?.message ?? '');
  const required = res.headers['payment-required'];
  if (res.statusCode === 402 && typeof required === 'string')
    return paymentRequired(
      fromBase64Json(required) as Record<string, unknown>,
      `Payment refused (${code}): ${message} Nothing was charged; sign a new payment for accepts[0] and call again.`,
      binding,
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
