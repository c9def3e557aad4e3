import { capabilityByName, ops, type OpReply } from '@vcs/contract';
import { callOp, offerFactsOf, type CallContext } from '@vcs/platform';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import type { GatewayDeps } from '../deps.ts';
import { callerOf } from '../dispatch.ts';
import { sendOpReply } from '../reply.ts';
import { encodeHeader, paymentRequiredOf, paymentRequiredV1Of } from './x402.ts';

/**
 * Every 402 says how to pay: to an x402 client a 402 means "pay this", so each carries PAYMENT-REQUIRED for an offer
 * that can still be paid. The offer a 402 answer names: an OFFER's own intent; a refused payment's `offer` (a new
 * offer for the same call, when the intent it came for can no longer be paid); or its `intent`, still pending.
 */
const pending = z.object({ id: z.string(), status: z.literal('pending') });
const namesAnOffer = z.union([
  z.object({ type: z.literal('OFFER'), value: z.object({ capability: z.string(), intent: pending }) }),
  z.object({
    type: z.literal('BLOCKED'),
    value: z.object({ offer: z.object({ intent: pending.extend({ capability: z.string() }) }) }),
  }),
  z.object({ type: z.literal('BLOCKED'), value: z.object({ capability: z.string(), intent: pending }) }),
]);

/** The intent a 402 answer can be paid by, and its capability; null for an answer that names none. */
export function payableOf(answer: unknown): { intentId: string; capability: string } | null {
  const a = namesAnOffer.safeParse(answer);
  if (!a.success) return null;
  const v = a.data.value;
  if ('offer' in v) return { intentId: v.offer.intent.id, capability: v.offer.intent.capability };
  return { intentId: v.intent.id, capability: v.capability };
}

const x402ErrorOf = z.object({ value: z.object({ x402Error: z.string() }) });

/**
 * A 402 reply as it goes out: PAYMENT-REQUIRED (x402 v2, with its extensions) for the offer it names, whose `error`
 * is a refused payment's x402 reason (given, or the answer's `x402Error`); v1's `x402Version` and `accepts` beside the
 * envelope's members in the body; and for an OFFER the same terms in `value.x402` (without the extensions, which
 * PAYMENT-REQUIRED carries), for clients that read bodies only. Any other reply is returned as it is.
 */
export async function withHowToPay<R extends Pick<OpReply, 'status' | 'answer'>>(
  deps: GatewayDeps,
  r: R,
  resourceUrl: string,
  error?: string,
): Promise<{ reply: R; headers: Record<string, string> }> {
  const payable = r.status === 402 ? payableOf(r.answer) : null;
  const c = payable && capabilityByName(payable.capability);
  if (!payable || !c) return { reply: r, headers: {} };
  const { x402: terms, receiptSigner } = deps.config;
  const reason = error ?? x402ErrorOf.safeParse(r.answer).data?.value.x402Error;
  const facts = offerFactsOf(c, payable.intentId, resourceUrl);
  const required = await paymentRequiredOf(terms, c, facts, receiptSigner, reason);
  const { extensions: _inTheHeader, ...x402Terms } = required;
  const answer = r.answer as { type: string; value: Record<string, unknown> };
  return {
    reply: {
      ...r,
      answer: {
        ...answer,
        ...(answer.type === 'OFFER' ? { value: { ...answer.value, x402: x402Terms } } : {}),
        ...paymentRequiredV1Of(terms, facts, reason),
      },
    },
    headers: { 'payment-required': encodeHeader(required) },
  };
}

/** Send a reply as withHowToPay made it: its headers, then the reply. */
export function sendPriced(reply: FastifyReply, priced: { reply: OpReply; headers: Record<string, string> }) {
  for (const [k, v] of Object.entries(priced.headers)) reply.header(k, v);
  return sendOpReply(reply, priced.reply);
}

/** Where a paid request came: a capability's route with its input, or an intent's settle route. */
export interface PaidAt {
  route?: { capability: string; input: Record<string, unknown> };
  intentId?: string;
  ctx: CallContext;
}

/**
 * A 402 that names no offer — a payment refused before any intent was looked at (a header that is not an x402
 * payment) — named the offer to pay instead, as its `offer`: on a capability's route, a new one for the call; on a
 * settle route, its intent while pending (one the caller may not pay at all: that refusal instead). Any other reply is
 * returned as it is.
 */
export async function namingAnOffer<R extends Pick<OpReply, 'status' | 'answer'>>(
  deps: GatewayDeps,
  r: R,
  at: PaidAt,
): Promise<R> {
  if (r.status !== 402 || r.answer.type !== 'BLOCKED' || payableOf(r.answer)) return r;
  let intent: { id: string; status: 'pending'; capability: string; expiresAt: string } | undefined;
  if (at.route) {
    const made = await callOp(callerOf(deps), ops.intentsCreate, at.route, at.ctx);
    if (made.answer.type === 'OFFER') intent = made.answer.value.intent;
  } else if (at.intentId) {
    const got = await callOp(callerOf(deps), ops.intentsGet, { intentId: at.intentId }, at.ctx);
    // An intent this caller cannot pay at all (no such intent, another account's): that refusal comes first.
    if (got.answer.type === 'BLOCKED') return got as unknown as R;
    const v = got.answer.value;
    if (v.status === 'pending')
      intent = { id: v.id, status: 'pending', capability: v.capability, expiresAt: v.expiresAt };
  }
  if (!intent) return r;
  const offer = { intent, settle: { method: 'POST' as const, path: `/intents/${intent.id}/settle` } };
  return { ...r, answer: { ...r.answer, value: { ...(r.answer.value as Record<string, unknown>), offer } } };
}
