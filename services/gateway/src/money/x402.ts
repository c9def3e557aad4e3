import type { FastifyReply, FastifyRequest } from 'fastify';
import { blocked, httpStatusOf, problemsOf, type Capability, type Problem } from '@vcs/contract';
import { requirementOf, requirementV1Of, type OfferFacts, type X402Terms } from '@vcs/platform';
import { z } from 'zod';
import type { GatewayDeps } from '../deps.ts';
import { sameRequest } from '../reply.ts';
import { namingAnOffer, sendPriced, withHowToPay, type PaidAt } from './required.ts';
import { extensionsOf, type ReceiptSigner } from './extensions.ts';

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
/** An x402 payment payload as far as the gateway reads it: its version; the rest is checked by commerce. */
const paymentShape = z.object({ x402Version: z.union([z.literal(1), z.literal(2)]) }).loose();
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
  const shape = paymentShape.safeParse(payload);
  if (!shape.success) return { problems: problemsOf(shape.error.issues, 'header') };
  const intentId = intentOfPayment.safeParse(payload).data?.accepted?.extra?.intentId ?? null;
  return { version: shape.data.x402Version, payload: shape.data, intentId };
}

/**
 * The request's payment, or — when its header is not an x402 payment payload — 'refused', the 402 sent with each
 * problem and the offer to pay instead (the offer gate and the settle route refuse it with the one wording).
 */
export async function paymentOrRefusal(
  req: FastifyRequest,
  reply: FastifyReply,
  deps: GatewayDeps,
  at: PaidAt,
  resourceUrl: string,
): Promise<SentPayment | null | 'refused'> {
  const payment = paymentOf(req);
  if (!payment || !('problems' in payment)) return payment;
  const answer = blocked(
    'payment-invalid',
    'the x402 payment header (PAYMENT-SIGNATURE or X-PAYMENT) must be base64 JSON of an x402 payment payload; ' +
      'fix each problem listed',
    { problems: payment.problems, next: sameRequest(req) },
  );
  const named = await namingAnOffer(deps, { status: httpStatusOf(answer), answer }, at);
  sendPriced(reply, await withHowToPay(deps, named, resourceUrl));
  return 'refused';
}
