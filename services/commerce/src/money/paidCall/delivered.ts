import { edgeOf, type Blocked, type OpReplyOf, type PaidCallMembers, type PillarAnswer } from '@vcs/contract';
import { withMeter, withNewOffer } from '../intents.ts';
import { intentTermsOf, isProven, receiptOf } from '../payments.ts';
import { jsonValue, type IntentRow } from '../rows.ts';
import { refusalOf } from './offered.ts';
import type { Paying, Run } from './paying.ts';
import { markDelivered } from './paymentRows.ts';

const refusedStates: string[] = [edgeOf('payment', 'refuse').to, edgeOf('payment', 'expire').to];
const centsOf = (r: IntentRow) => Number(r.charged_cents ?? 0);

/**
 * 9. The answer as its payer gets it: the capability's (with its meter: what was charged in the end, and the receipt
 * of the payment that moved money), or its refusal, or the 503 that says when to ask again; with the members a paid
 * call carries beside it. A paid answer delivered within the caller's time is owed no more.
 */
export async function delivered(run: Run, p: Paying): Promise<OpReplyOf<'intentsPay'>> {
  const { services } = run;
  const members: PaidCallMembers = { intentId: p.intent.id, bound: p.bound };
  if (p.payment) members.paymentStatus = p.payment.status;
  if (p.pending) return { ...p.pending, meta: members };
  const proven = isProven(p.payment);
  if (proven) members.receipt = receiptOf(p.payment);
  // Refused at settlement, or expired unused on chain: x402's reason, and a new offer for the same call to pay instead
  // (this intent can no longer be paid).
  else if (p.payment.reason && refusedStates.includes(p.payment.status)) {
    members.refusal = refusalOf(intentTermsOf(p.intent), p.payment.reason);
    const stored = {
      status: p.intent.answer_status ?? 402,
      answer: jsonValue(p.intent.answer) as Blocked,
      replayed: !p.fresh,
    };
    return { ...(await withNewOffer(services, run.ctx!, p.intent, stored)), meta: members };
  }
  // This request's answer carries what it alone may show (a secret, this once); any other is the stored one.
  const answer =
    p.fresh && p.answer
      ? withMeter(p.answer, proven ? centsOf(p.intent) : 0, proven ? p.payment : undefined)
      : (jsonValue(p.intent.answer) as PillarAnswer);
  const now = services.clock.now();
  if (proven && !p.fresh && now.getTime() < run.deadline) await markDelivered(services.db, p.intent, now);
  return { status: p.intent.answer_status ?? 200, answer, replayed: !p.fresh, meta: members };
}

/** An intent settled before this payment came (another way, or by another payment): its stored answer, nothing charged. */
export const replayed = (r: IntentRow): OpReplyOf<'intentsPay'> => ({
  status: r.answer_status ?? 200,
  answer: jsonValue(r.answer) as PillarAnswer,
  replayed: true,
  meta: { intentId: r.id, bound: false },
});
