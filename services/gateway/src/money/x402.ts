import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  capabilityByName,
  problemsOf,
  type Capability,
  type OpReply,
  type PaymentReceipt,
  type Problem,
} from '@vcs/contract';
import { offerFactsOf, requirementOf, requirementV1Of, type OfferFacts, type X402Terms } from '@vcs/platform';
import { z } from 'zod';
import { sameRequest, sendBlocked } from '../reply.ts';
import { OFFER_RECEIPT } from '@x402/extensions/offer-receipt';
import { extensionsOf, signReceipt, type ReceiptSigner } from './extensions.ts';

/**
 * x402 on the wire: the 402's PAYMENT-REQUIRED (v2 header) and body members (v1), the payment a client sends back
 * (v2 PAYMENT-SIGNATURE, v1 X-PAYMENT) and the receipt it reads (PAYMENT-RESPONSE, X-PAYMENT-RESPONSE). What the
 * requirement says comes from the platform's one `requirementOf`, which commerce checks the payment against too.
 */

export const encodeHeader = (v: unknown) => Buffer.from(JSON.stringify(v), 'utf8').toString('base64');

/**
 * The x402 v2 PaymentRequired for an offer of capability `c`; `error` says why a payment sent for it was refused. Its
 * `extensions` declare the capability for discovery (`bazaar`) and, with a signer, the signed offers (`offer-receipt`).
 */
export async function paymentRequiredOf(
  terms: X402Terms,
  c: Capability,
  o: OfferFacts,
  signer: ReceiptSigner | null,
  error?: string,
) {
  const required = {
    x402Version: 2,
    error: error ?? `payment required: pay with x402 or settle the intent (POST ${o.settlePath})`,
    resource: { url: o.resourceUrl, description: o.description, mimeType: 'application/json' },
    accepts: [requirementOf(terms, o)],
  };
  return withExtensions(c, required, signer);
}

/**
 * A PaymentRequired with its x402 extensions (discovery, signed offers, payment-identifier, sign-in-with-x), as
 * PAYMENT-REQUIRED carries it; the 402 body's `value.x402` (and so MCP's payment-required) carries the terms alone.
 */
export async function withExtensions<T extends Parameters<typeof extensionsOf>[1]>(
  c: Capability,
  required: T,
  signer: ReceiptSigner | null,
) {
  return { ...required, extensions: await extensionsOf(c, required, signer) };
}

/**
 * The same offer for x402 v1 clients, which read `x402Version` and `accepts` from the 402 body: added beside the
 * OFFER envelope's members, never in place of one. A body-level `error` only for a refused payment (x402's own
 * schema allows its facilitator reasons there; the words are in `value.message`).
 */
export function paymentRequiredV1Of(terms: X402Terms, o: OfferFacts, error?: string) {
  return { x402Version: 1 as const, ...(error ? { error } : {}), accepts: [requirementV1Of(terms, o)] };
}

const base64Json = (raw: string): unknown => JSON.parse(Buffer.from(raw.trim(), 'base64').toString('utf8'));
const intentOfPayment = z.object({
  accepted: z.object({ extra: z.object({ intentId: z.string() }).partial().optional() }).optional(),
});

export interface SentPayment {
  version: 1 | 2;
  payload: Record<string, unknown>;
  intentId: string | null;
}

/** The payment a request carries: v2 `PAYMENT-SIGNATURE` or v1 `X-PAYMENT`, base64 JSON; absent → null. */
export function paymentOf(req: FastifyRequest): SentPayment | { problems: Problem[] } | null {
  const v2 = req.headers['payment-signature'];
  const v1 = req.headers['x-payment'];
  const raw = typeof v2 === 'string' ? v2 : typeof v1 === 'string' ? v1 : undefined;
  if (raw === undefined) return null;
  const header = typeof v2 === 'string' ? 'PAYMENT-SIGNATURE' : 'X-PAYMENT';
  let payload: unknown;
  try {
    payload = base64Json(raw);
  } catch {
    return {
      problems: [{ field: `(header ${header})`, message: 'not base64-encoded JSON of an x402 payment payload' }],
    };
  }
  const shape = z
    .object({ x402Version: z.union([z.literal(1), z.literal(2)]) })
    .loose()
    .safeParse(payload);
  if (!shape.success) return { problems: problemsOf(shape.error.issues, 'header') };
  const intentId = intentOfPayment.safeParse(payload).data?.accepted?.extra?.intentId ?? null;
  return { version: shape.data.x402Version, payload: shape.data, intentId };
}

/**
 * The request's payment, or — when its header is not an x402 payment payload — 'refused', the 400 sent with each
 * problem (the offer gate and the settle route refuse it with the one wording).
 */
export function paymentOrRefusal(req: FastifyRequest, reply: FastifyReply): SentPayment | null | 'refused' {
  const payment = paymentOf(req);
  if (!payment || !('problems' in payment)) return payment;
  sendBlocked(
    reply,
    'payment-invalid',
    'the x402 payment header (PAYMENT-SIGNATURE or X-PAYMENT) must be base64 JSON of an x402 payment payload; ' +
      'fix each problem listed',
    { problems: payment.problems, next: sameRequest(req) },
  );
  return 'refused';
}

/**
 * Send a settlement's answer to an x402 payer: the receipt in PAYMENT-RESPONSE (v2) or X-PAYMENT-RESPONSE (v1)
 * when a payment moved, signed (offer-receipt) when there is a signer, and the signed receipt in `meter.payment` too;
 * a payment refused for good is x402's own 402 again, its `error` naming the reason (with our code in the envelope);
 * anything else as it is (a 503 with Retry-After when the outcome is not known yet).
 */
export async function decoratePaymentReply(
  reply: FastifyReply,
  r: OpReply,
  version: 1 | 2,
  terms: X402Terms,
  signer: ReceiptSigner | null,
  resourceUrl: string,
): Promise<OpReply> {
  const meter = r.answer.meter as { payment?: PaymentReceipt } | undefined;
  if (meter?.payment) {
    const p = meter.payment;
    // The spec's receipt names the network in CAIP-2 for v1 clients too; the facilitator's members keep v1's word.
    const signed = signer
      ? await signReceipt(signer, { resourceUrl, payer: p.payer, network: p.network, transaction: p.transaction })
      : undefined;
    const receipt = {
      success: true,
      transaction: p.transaction ?? '',
      network: version === 2 ? p.network : (terms.v1Network ?? p.network),
      payer: p.payer,
      ...(signed ? { extensions: { [OFFER_RECEIPT]: { info: { receipt: signed } } } } : {}),
    };
    reply.header(version === 2 ? 'payment-response' : 'x-payment-response', encodeHeader(receipt));
    if (!signed) return r;
    const signedReceipt = {
      format: signed.format,
      signature: signed.signature,
      ...('payload' in signed ? { payload: { ...signed.payload } } : {}),
    };
    const payment: PaymentReceipt = { ...p, signedReceipt };
    return { ...r, answer: { ...r.answer, meter: { ...meter, payment } } };
  }
  const value = r.answer.value as { x402Error?: string; capability?: string; intent?: { id?: string } } | undefined;
  const c = value?.capability ? capabilityByName(value.capability) : undefined;
  if (r.status !== 402 || !value?.x402Error || !c || !value.intent?.id) return r;
  const facts = offerFactsOf(c, value.intent.id, resourceUrl);
  reply.header('payment-required', encodeHeader(await paymentRequiredOf(terms, c, facts, signer, value.x402Error)));
  return { ...r, answer: { ...r.answer, ...paymentRequiredV1Of(terms, facts, value.x402Error) } };
}
