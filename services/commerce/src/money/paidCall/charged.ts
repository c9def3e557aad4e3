import { claimWith, edgeOf, type PillarAnswer } from '@vcs/contract';
import { centsOfAtomic, eventsInsert, leaseSecondsLeft, leaseUntil, wrote, writeTogether } from '@vcs/platform';
import type { CommerceServices as Services } from '../../config.ts';
import { findExecution } from '../executions.ts';
import { findIntent, settledEvent, withMeter } from '../intents.ts';
import {
  chainVerdict,
  facilitatorTimeoutMs,
  intentTermsOf,
  isProven,
  paymentPending,
  paymentRefusal,
  settleOnce,
  type Refusal,
} from '../payments.ts';
import { jsonValue, type PaymentRow } from '../rows.ts';
import { moveSql } from '../transition.ts';
import { settlementCounted } from '../usage.ts';
import type { Paying, Run } from './paying.ts';
import { movePayment, paymentById, paymentMove } from './paymentRows.ts';

/** The state of an intent whose answer is stored and withheld while its payment is charged (the table's `charge`). */
const CHARGING = edgeOf('intent', 'charge').to;
import { counted, countPayment } from '../../metrics.ts';

/**
 * 8. A paid intent's answer is stored and withheld (charging); its held payment is settled now — and only now, for an
 * answer worth its price. The facilitator's clear yes proves it; a first send refused before any broadcast (the chain
 * saying unused) refuses it; anything else is a doubt the chain decides (`authorizationState` at one block), never our
 * clock, never a 402 for money that may have moved. Proven, the intent collects (its answer released with its receipt
 * and charge); refused, or expired unused on chain, the intent withholds its answer: nothing moved. A step for an
 * intent not charging (voided by step 7, or final already) does nothing.
 */
export async function charged(run: Run, p: Paying): Promise<Paying> {
  const { services } = run;
  if (p.pending || p.intent.status !== CHARGING) return p;
  const d = await driven(services, p.payment, !!p.sendNow);
  // Collected while a request is answering with it, within its time: delivered now, not owed.
  const delivering = !!run.requestId && services.clock.now().getTime() < run.deadline;
  if (d.kind === 'paid') return collected(services, { ...p, sendNow: false }, d.transaction, delivering);
  if (d.kind === 'refused') return withheldNow(services, { ...p, sendNow: false }, d.payment, d.refusal);
  return {
    ...p,
    sendNow: false,
    pending: paymentPending(
      intentTermsOf(p.intent),
      'payment-pending',
      `${d.message}; it will not be charged twice: send the same request again in ${d.retryAfter} s`,
      d.retryAfter,
    ),
  };
}

/** How long one request may drive a payment before anyone else (a retry, the reconciler) may: the facilitator's time. */
const paymentLease = (services: Services) => leaseUntil(services.clock, facilitatorTimeoutMs(services)).toISOString();

/** Where driving a payment one step got to. */
type Driven =
  | { kind: 'paid'; transaction: string | null }
  | { kind: 'refused'; payment: PaymentRow | undefined; refusal: Refusal }
  | { kind: 'waiting'; message: string; retryAfter: number };

/**
 * One step of a sent payment: this request's first send goes to the facilitator; one sent before is asked of the
 * chain first (used: paid at once, whoever is driving it), and sent again only once its lease ran out (the table's
 * lease rule) while the chain says it can still land.
 */
async function driven(services: Services, row: PaymentRow, sendNow: boolean): Promise<Driven> {
  if (isProven(row)) return { kind: 'paid', transaction: row.transaction };
  if (sendNow) return sent(services, row, true);
  const v = await chainVerdict(services, row);
  if (v.kind === 'used') return { kind: 'paid', transaction: v.transaction };
  if (v.kind === 'never') {
    const gone = await movePayment(services.db, row.id, 'expire', {
      reason: 'invalid_exact_evm_payload_authorization_valid_before',
      lease_until: null,
      updated_at: services.clock.now().toISOString(),
    });
    counted(gone);
    return {
      kind: 'refused',
      payment: gone,
      refusal: {
        code: 'payment-expired',
        message: "the chain passed the payment's validBefore with it unused: nothing was charged: sign a new one",
        x402Error: 'invalid_exact_evm_payload_authorization_valid_before',
      },
    };
  }
  if (v.kind === 'unknown')
    return {
      kind: 'waiting',
      message: "the chain node is not answering, so the payment's outcome is not known yet",
      retryAfter: 2,
    };
  // Open on chain. The one claim routine: under a live lease someone is sending it — wait for them; run out, take it
  // and send it again (the move checks the lease once more, so one taker wins).
  const now = services.clock.now();
  const taken = await claimWith('payment', row, now.getTime(), {
    replay: async () => undefined,
    wait: async () => undefined,
    take: () =>
      movePayment(
        services.db,
        row.id,
        'resubmit',
        { lease_until: paymentLease(services), updated_at: now.toISOString() },
        { leaseRunOutAt: now.toISOString() },
      ),
  });
  if (!taken)
    return {
      kind: 'waiting',
      message: `payment ${row.id} is being settled now (transfer sent, not yet seen on chain)`,
      retryAfter: Math.min(5, leaseSecondsLeft(services.clock, row.lease_until)),
    };
  return sent(services, taken, false);
}

/**
 * Send the payment to the facilitator and move it by what came back. Only a first send can be refused: a send again
 * may be refused by a facilitator that cannot see the first one's transfer (still in the pool; validBefore near by
 * its clock), so its refusal is a doubt the chain decides.
 */
async function sent(services: Services, row: PaymentRow, first: boolean): Promise<Driven> {
  const s = await settleOnce(services, row, first);
  const now = services.clock.now().toISOString();
  if (s.kind === 'settled') return { kind: 'paid', transaction: s.transaction };
  if (s.kind === 'refused') {
    const gone = await movePayment(services.db, row.id, 'refuse', {
      reason: s.refusal.x402Error,
      lease_until: null,
      updated_at: now,
    });
    counted(gone);
    return { kind: 'refused', payment: gone, refusal: s.refusal };
  }
  const transaction = s.transaction ?? row.transaction;
  await movePayment(services.db, row.id, 'doubt', {
    reason: s.reason,
    transaction,
    lease_until: paymentLease(services),
    updated_at: now,
  });
  // Often the chain already knows (a lost answer after the transfer landed): ask it once before answering 503.
  const v = await chainVerdict(services, { ...row, transaction });
  if (v.kind === 'used') return { kind: 'paid', transaction: v.transaction };
  if (first) countPayment('pending');
  return {
    kind: 'waiting',
    message: `the payment's settlement is not confirmed yet (${s.reason}); it is being checked on chain`,
    retryAfter: 2,
  };
}

/**
 * The chain has the transfer: the payment is settled and its intent collects — its withheld answer released with its
 * meter (the amount charged, the receipt), Intent.settled@1 written — in one statement, then the settlement counted
 * once by whoever moved it. `deliver`: a request is answering with it now (not the reconciler): it is not owed.
 */
async function collected(services: Services, p: Paying, transaction: string | null, deliver: boolean): Promise<Paying> {
  const now = services.clock.now().toISOString();
  const proven: PaymentRow = { ...p.payment, transaction: transaction ?? p.payment.transaction };
  const cents = centsOfAtomic(proven.amount_atomic);
  const answer = withMeter(jsonValue(p.intent.answer) as PillarAnswer, cents, proven);
  const event = eventsInsert(
    [settledEvent(services, p.intent, await executionOf(services, p), answer, cents)],
    wrote('intent').sql,
  );
  // One statement: the payment proven (unless another proved it first), the intent collected, its event written.
  const moved = await writeTogether(services.db, {
    payment: paymentMove(p.payment.id, 'prove', {
      transaction: proven.transaction,
      lease_until: null,
      updated_at: now,
      delivered_at: deliver ? now : null,
    }),
    intent: moveSql('intent', p.intent.id, 'collect', {
      answer: JSON.stringify(answer),
      charged_cents: cents,
      settled_at: now,
      delivered_at: deliver ? now : null,
    }),
    event: event.sql,
    // The settlement counted with the money, once: only where the intent's collection wrote.
    usage: usageOf(p, cents),
  });
  const payment = moved.payment ?? (await paymentById(services.db, p.payment.id));
  counted(moved.payment);
  if (!moved.intent) return { ...p, payment, intent: (await findIntent(services.db, p.intent.id))!, fresh: false };
  return { ...p, payment, intent: moved.intent, fresh: true };
}

/**
 * The payment refused at settlement (the payer's funds or authorization gone since it was verified), or expired unused
 * on chain: nothing moved, and the intent withholds its answer — its refusal stored in its place, Intent.settled@1
 * written (BLOCKED, 0.00), the settlement counted.
 */
async function withheldNow(
  services: Services,
  p: Paying,
  payment: PaymentRow | undefined,
  r: Refusal,
): Promise<Paying> {
  const t = intentTermsOf(p.intent);
  const refused = paymentRefusal(services, { environment: environmentOf(p) }, t, r);
  // One statement: the intent withholds (unless another moved it first), its event written, the settlement counted.
  const moved = await writeTogether(services.db, {
    intent: moveSql('intent', p.intent.id, 'withhold', {
      answer: JSON.stringify(refused.answer),
      answer_status: refused.status,
      settled_at: services.clock.now().toISOString(),
    }),
    event: eventsInsert(
      [settledEvent(services, p.intent, await executionOf(services, p), refused.answer, 0)],
      wrote('intent').sql,
    ).sql,
    usage: usageOf(p, 0),
  });
  const intent = moved.intent;
  return {
    ...p,
    payment: payment ?? (await paymentById(services.db, p.payment.id)),
    intent: intent ?? (await findIntent(services.db, p.intent.id))!,
    fresh: !!intent,
  };
}

/**
 * The settlement's count in usage (its account's), as a part written only where the intent's final move wrote; an
 * intent no account paid for counts nowhere.
 */
const usageOf = (p: Paying, cents: number) =>
  settlementCounted(
    p.intent.account_id ?? '',
    p.intent.capability,
    cents,
    p.intent.account_id ? wrote('intent').sql : 'false',
  );

const environmentOf = (p: Paying) => p.payment.environment ?? 'sandbox';
/** The intent's execution (the event of its end names it) and the environment it ran in, known or read. */
const executionOf = async (services: Services, p: Paying) => ({
  id: p.executionId ?? (await findExecution(services.db, 'intent', p.intent.id))!.id,
  environment: environmentOf(p),
});
