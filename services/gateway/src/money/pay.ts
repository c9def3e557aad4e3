import { capabilityByName, ops, opTimeouts, type OpReplyOf, type PaymentReceipt } from '@vcs/contract';
import { callOp, offerFactsOf, type CallContext } from '@vcs/platform';
import { OFFER_RECEIPT } from '@x402/extensions/offer-receipt';
import type { FastifyReply } from 'fastify';
import { callerOf } from '../dispatch.ts';
import { sendOpReply } from '../reply.ts';
import type { GatewayDeps } from '../deps.ts';
import { signReceipt } from './extensions.ts';
import { paymentLogOf, type PaymentLog } from './paymentLog.ts';
import { namingAnOffer, withHowToPay } from './required.ts';
import { encodeHeader, type SentPayment } from './x402.ts';

/** A paid call as the gateway takes it: where the payment was presented, and the payment. */
export interface PaidCall {
  /** The capability route it came on, with its input; absent on an intent's settle route. */
  route?: { capability: string; input: Record<string, unknown> };
  /** The intent it is for: the settle route's, or a v2 payment's `accepted.extra.intentId`. */
  intentId?: string;
  payment: SentPayment;
  ctx: CallContext;
  /** The URL it was presented at (the signed receipt names it). */
  resourceUrl: string;
}

/** A paid call's answer, ready to send: its status, answer and headers, and whether it counts as a call in usage. */
export interface PaidReply extends Pick<OpReplyOf<'intentsPay'>, 'status' | 'answer' | 'replayed'> {
  /** Intent-Id, and PAYMENT-RESPONSE (v2) / X-PAYMENT-RESPONSE (v1) with the receipt, or a refused payment's fresh
   * PAYMENT-REQUIRED; Retry-After travels in the answer (`value.retryAfter`). */
  headers: Record<string, string>;
  /** This request bound a new payment: the one call a paid call counts as, however many 503s it is retried through. */
  countsAsCall: boolean;
  /** What the request's log line says of the payment. */
  log: PaymentLog;
}

/** Send a paid call's answer with its headers. */
export function sendPaidReply(reply: FastifyReply, paid: PaidReply) {
  for (const [k, v] of Object.entries(paid.headers)) reply.header(k, v);
  // Its log line names the payment (app.ts); a capability route's meter reads whether it counts as a call.
  reply.request.paidCall = paid;
  return sendOpReply(reply, paid);
}

/** Answers that mean the outcome is being decided: the same payment, asked again, reaches it. */
const stillDeciding = new Set(['payment-pending', 'execution-pending', 'idempotency-in-flight']);

/**
 * The gateway's one entry point for "pay this capability call" (x402): the offer gate, the intent's settle route and
 * MCP's x402 binding all come here. Commerce's one pipeline pays it (`intents.pay`), holding the request while its
 * outcome is still being decided (its capability running, its settlement in doubt) for up to X402_PAYMENT_HOLD_MS
 * (`holdMs`, with a bus time-out to match), so a stock client — which waits that long and does not resend — gets the
 * answer from its first call where the chain allows, in one request. Only a payment not yet bound when it had to wait
 * (its intent being settled another way, the facilitator not answering, commerce not answering in time) is asked again
 * with the hold that is left. The answer goes out with x402's headers made from the typed members beside it.
 */
export async function payCapabilityCall(deps: GatewayDeps, call: PaidCall): Promise<PaidReply> {
  const until = deps.clock.now().getTime() + deps.config.paymentHoldMs;
  const base = opTimeouts(ops.intentsPay, deps.config.busTimeoutMs).timeoutMs;
  const ask = (holdMs: number) =>
    callOp(
      callerOf(deps),
      ops.intentsPay,
      {
        route: call.route,
        intentId: call.intentId,
        payment: call.payment.payload,
        holdMs,
        timeoutMs: Math.min(120_000, base + holdMs),
      },
      call.ctx,
    );
  let r = await ask(deps.config.paymentHoldMs);
  let bound = !!r.meta?.bound;
  for (;;) {
    const code = r.answer.type === 'BLOCKED' ? r.answer.value.code : undefined;
    const deciding = (code !== undefined && stillDeciding.has(code)) || r.unavailable === 'timeout';
    const left = until - deps.clock.now().getTime();
    if (!deciding || left <= 0) break;
    const retryAfter = r.answer.type === 'BLOCKED' ? Number(r.answer.value.retryAfter ?? 1) : 1;
    await deps.clock.sleep(Math.min(1000, retryAfter * 1000, left));
    r = await ask(Math.max(0, until - deps.clock.now().getTime()));
    bound ||= !!r.meta?.bound;
  }
  return { ...(await withX402(deps, call, r)), countsAsCall: bound, log: paymentLogOf(call.payment, r.meta) };
}

/**
 * x402's headers from the members beside the answer: the receipt in PAYMENT-RESPONSE (v2) or X-PAYMENT-RESPONSE (v1)
 * when a payment moved money, signed (offer-receipt) when there is a signer, and the signed receipt in `meter.payment`
 * too; a payment refused for good is x402's own 402 again, its `error` naming the reason (our code in the envelope).
 */
async function withX402(
  deps: GatewayDeps,
  call: PaidCall,
  r: Awaited<ReturnType<typeof callOp<typeof ops.intentsPay>>>,
): Promise<Omit<PaidReply, 'countsAsCall' | 'log'>> {
  const { x402: terms, receiptSigner: signer } = deps.config;
  const version = call.payment.version;
  const headers: Record<string, string> = {};
  const intentId = r.meta?.intentId;
  if (intentId) headers['intent-id'] = intentId;
  const receipt = r.meta?.receipt;
  if (receipt && r.answer.type !== 'BLOCKED') {
    // The spec's receipt names the network in CAIP-2 for v1 clients too; the facilitator's members keep v1's word.
    const signed = signer
      ? await signReceipt(signer, {
          resourceUrl: call.resourceUrl,
          payer: receipt.payer,
          network: receipt.network,
          transaction: receipt.transaction,
        })
      : undefined;
    headers[version === 2 ? 'payment-response' : 'x-payment-response'] = encodeHeader({
      success: true,
      transaction: receipt.transaction ?? '',
      network: version === 2 ? receipt.network : (terms.v1Network ?? receipt.network),
      payer: receipt.payer,
      ...(signed ? { extensions: { [OFFER_RECEIPT]: { info: { receipt: signed } } } } : {}),
    });
    if (!signed) return { status: r.status, answer: r.answer, replayed: r.replayed, headers };
    const payment: PaymentReceipt = {
      ...receipt,
      signedReceipt: {
        format: signed.format,
        signature: signed.signature,
        ...('payload' in signed ? { payload: { ...signed.payload } } : {}),
      },
    };
    return {
      status: r.status,
      answer: { ...r.answer, meter: { ...r.answer.meter, payment } },
      replayed: r.replayed,
      headers,
    };
  }
  // Not paid: a 402 says how to pay — the offer it names, with a refused payment's x402 reason (money/required.ts).
  const named = await namingAnOffer(deps, r, { route: call.route, intentId: call.intentId, ctx: call.ctx });
  const priced = await withHowToPay(deps, named, call.resourceUrl, r.meta?.refusal?.x402Error);
  return {
    status: r.status,
    answer: priced.reply.answer,
    replayed: r.replayed,
    headers: { ...headers, ...priced.headers },
  };
}
