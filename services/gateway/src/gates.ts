import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  checkMandate,
  MINT_KEY,
  offerTerms,
  ops,
  type Mandate,
  requiresMandateWhenDelegated,
  sandboxDesks,
  type Capability,
} from '@vcs/contract';
import { callOp, type CallContext } from '@vcs/platform';
import type { Caller } from './auth.ts';
import { publicBaseOf } from './context.ts';
import type { GatewayDeps } from './deps.ts';
import { acceptPrice, isDelegated, mandateOf } from './money/headers.ts';
import { paymentOrRefusal } from './money/x402.ts';
import { sendPriced, withHowToPay } from './money/required.ts';
import { payCapabilityCall, sendPaidReply } from './money/pay.ts';
import { callerOf } from './dispatch.ts';
import { siwxProof } from './money/siwx.ts';
import { sameRequest, sendBlocked, sendOpReply } from './reply.ts';

/**
 * The offer and human gates. Each returns either an answer it has already sent (a 402 OFFER, a 403
 * NEEDS_HUMAN) or `execute` with the context to run the capability under (settled, mandate...).
 */
export type GateOutcome = { sent: true } | { sent: false; ctx: CallContext };
export type GateCheck = (
  c: Capability,
  input: Record<string, unknown>,
  caller: Caller,
  ctx: CallContext,
  req: FastifyRequest,
  reply: FastifyReply,
  deps: GatewayDeps,
) => Promise<GateOutcome>;

export const passThroughGate: GateCheck = async (_c, _i, _caller, ctx) => ({ sent: false, ctx });

/**
 * Mandate gate, on every capability: a malformed `Mandate` is 400; a delegated call to a capability that needs
 * a mandate without one is 403 mandate-required; expiry, perAction and tripwires halt the call. The running
 * total against the ceiling is kept by commerce when the call settles.
 */
const mandateGate: GateCheck = async (c, _input, caller, ctx, req, reply, deps) => {
  const m = mandateOf(req);
  if (m && 'problems' in m) {
    sendBlocked(
      reply,
      'invalid-mandate',
      'the Mandate header must be base64url JSON of {id, principal, ceiling, perAction, expires, tripwires}; ' +
        'fix each problem listed',
      { next: sameRequest(req), problems: m.problems, schema: '/docs/money.md#mandates' },
    );
    return { sent: true };
  }
  if (!m) {
    if (requiresMandateWhenDelegated(c) && isDelegated(req, caller)) {
      sendBlocked(
        reply,
        'mandate-required',
        `${c.name} made on someone's behalf needs a Mandate header: ` +
          `send ${c.method} ${c.path} again with Mandate: <base64url JSON of the principal's mandate>`,
        { capability: c.name, next: { method: c.method, path: c.path } },
      );
      return { sent: true };
    }
    return { sent: false, ctx };
  }
  const terms = offerTerms(c);
  const violation = checkMandate(m.mandate, {
    capability: c.name,
    ceilingCents: c.gate === 'offer' ? terms.ceilingCents : 0,
    currency: terms.ceiling.currency,
    now: deps.clock.now(),
  });
  if (violation) {
    sendBlocked(reply, violation.code, violation.message, {
      capability: c.name,
      mandate: { id: m.mandate.id, principal: m.mandate.principal },
      ...(violation.tripwire ? { tripwire: violation.tripwire } : {}),
    });
    return { sent: true };
  }
  return { sent: false, ctx: { ...ctx, mandate: m.mandate } };
};

/**
 * Offer gate: commerce stores a pending intent and answers 402 OFFER (mirrored as x402 in PAYMENT-REQUIRED and the
 * v1 body). With `Accept-Price` at or above the hard ceiling, or a Mandate that covers it, the intent is settled at
 * once; with an x402 payment (PAYMENT-SIGNATURE or X-PAYMENT) it is paid, then settled: the same request, again.
 */
const offerGate: GateCheck = async (c, input, caller, ctx, req, reply, deps) => {
  const accept = acceptPrice(req);
  if (accept === 'invalid') {
    sendBlocked(
      reply,
      'invalid-price-header',
      'Accept-Price must be an amount and a currency code, for example "Accept-Price: 5.00 USD"',
      { example: 'Accept-Price: 5.00 USD', next: { method: c.method, path: c.path } },
    );
    return { sent: true };
  }
  const resourceUrl = `${publicBaseOf(req, deps.config)}${c.path}`;
  const payment = await paymentOrRefusal(req, reply, deps, { route: { capability: c.name, input }, ctx }, resourceUrl);
  if (payment === 'refused') return { sent: true };
  if (payment) {
    // Paid: the one money path (money/pay.ts) — the intent the authorization already pays (a retry, v1 or v2), or the
    // one it names, or one made for this route, honoured only for what was offered (this capability, this input).
    const paid = await payCapabilityCall(deps, {
      route: { capability: c.name, input },
      intentId: payment.intentId ?? undefined,
      payment,
      ctx,
      resourceUrl,
    });
    req.paidCall = paid;
    sendPaidReply(reply, paid);
    return { sent: true };
  }
  // sign-in-with-x: the wallet that paid for this resource reads its stored answer again, no key, no payment.
  const origin = new URL(resourceUrl).origin;
  const proof = await siwxProof(req, origin, deps.kv);
  let refusedProof: string | undefined;
  if (proof && 'payer' in proof) {
    const again = await callOp(
      callerOf(deps),
      ops.intentsReread,
      { capability: c.name, input, payer: proof.payer },
      ctx,
    );
    if (again.status < 400) {
      sendOpReply(reply, again);
      return { sent: true };
    }
    refusedProof = `sign-in-with-x: wallet ${proof.payer} has not paid for this resource (this input); pay the offer`;
  } else if (proof) refusedProof = `sign-in-with-x: ${proof.refused}`;
  const created = await callOp(callerOf(deps), ops.intentsCreate, { capability: c.name, input }, ctx);
  if (created.answer.type !== 'OFFER') {
    sendOpReply(reply, created);
    return { sent: true };
  } // a refusal: the 402 is the offer
  const offer = created.answer.value;
  const intentId = offer.intent.id;
  reply.header('intent-id', intentId);
  const terms = offerTerms(c);
  const accepted = accept !== null && accept.currency === terms.ceiling.currency && terms.ceilingCents <= accept.cents;
  if (accepted || ctx.mandate) {
    if (caller.kind !== 'key') {
      sendBlocked(
        reply,
        'key-required',
        `settling ${c.name} needs a key: send Authorization: Bearer <key> (mint one with POST /keys), ` +
          `or settle intent ${intentId} later with one, or pay it with x402`,
        { intent: offer.intent, settle: offer.settle, mint: MINT_KEY, next: MINT_KEY },
      );
      return { sent: true };
    }
    const settled = await callOp(
      callerOf(deps),
      ops.intentsSettle,
      { intentId, mandate: ctx.mandate as Mandate | undefined },
      ctx,
    );
    sendOpReply(reply, settled);
    return { sent: true };
  }
  if (accept)
    reply.header(
      'accept-price-result',
      `declined: the hard ceiling ${terms.ceiling.amount} ${terms.ceiling.currency} is above ${accept.text}`,
    );
  // PAYMENT-REQUIRED, v1's body members and `value.x402` (money/required.ts): the extensions are in PAYMENT-REQUIRED
  // only: an agent reading the body does not read discovery schemas and signatures it needs not.
  const priced = await withHowToPay(deps, created, resourceUrl, refusedProof);
  sendPriced(reply, priced);
  return { sent: true };
};

/** Human gate: commerce stores a pending handoff and answers 403 BLOCKED NEEDS_HUMAN with its poll rail. */
const humanGate: GateCheck = async (c, input, _caller, ctx, _req, reply, deps) => {
  const h = c.human ?? { verb: 'authorize' as const, ...sandboxDesks.authorize };
  const created = await callOp(
    callerOf(deps),
    ops.handoffsCreate,
    { verb: h.verb, credential: h.credential, capability: c.name, input },
    ctx,
  );
  sendOpReply(reply, created);
  return { sent: true };
};

export const gates: { mandate: GateCheck; offer: GateCheck; human: GateCheck } = {
  mandate: mandateGate,
  offer: offerGate,
  human: humanGate,
};
