import { capabilityByName, edgeOf, opTimeouts, ops, withoutSecrets, worthItsPrice } from '@vcs/contract';
import { leaseUntil } from '@vcs/platform';
import { afterExecution, findExecution, pendingReply, settleExecution, type Finisher } from '../executions.ts';
import { IN_FLIGHT, settledNow, settlePath } from '../intents.ts';
import { facilitatorTimeoutMs } from '../payments.ts';
import { contextOf, type IntentRow, type PaymentRow } from '../rows.ts';
import { moved, moveSql } from '../transition.ts';
import { storedPaying } from './looked.ts';
import type { Paying, Run } from './paying.ts';
import { paymentMove } from './paymentRows.ts';
import { counted } from '../../metrics.ts';

/** The state a bound payment's intent is in while its capability runs (the table's `pay` leads there). */
const RUNNING = edgeOf('intent', 'pay').to;

/**
 * 7. The capability runs once — by this request (it just made the execution, `bound`) or waited on — and its answer
 * decides, in the statement that records it (`chargeOrVoid`): worth its price, stored and withheld while its payment
 * is charged (step 8); any other answer, the intent's answer at once and its payment voided: nothing moves, 0.00
 * charged. A step for an intent whose capability has answered already (a retry, an owed answer) does nothing.
 */
export async function executed(run: Run, p: Paying): Promise<Paying> {
  const { services } = run;
  if (p.pending || p.intent.status !== RUNNING) return p;
  const retry = { method: 'POST' as const, path: settlePath(p.intent.id) };
  // The capability gets what is left of the call's time, and no more than a settlement's (the key route's).
  const left = run.deadline - services.clock.now().getTime();
  const runMs = Math.max(1000, Math.min(left, opTimeouts(ops.intentsSettle, services.settings.BUS_TIMEOUT_MS).innerMs));
  const id = p.claimed?.id ?? (await findExecution(services.db, 'intent', p.intent.id))!.id;
  const out = await settleExecution(services, id, runMs, retry, {
    claimed: p.claimed,
    requestId: run.requestId,
    finish: chargeOrVoid,
  });
  if (out.kind !== 'done') return { ...p, claimed: undefined, pending: pendingReply(out, retry) };
  if (out.recorded && out.record)
    return {
      ...p,
      intent: out.record.intent,
      payment: out.record.payment ?? p.payment,
      claimed: undefined,
      executionId: id,
      answer: out.answer,
      sendNow: true,
      fresh: true,
    };
  // Recorded by another attempt: the intent and its payment as it left them.
  return { ...(await storedPaying(services.db, p.payment.id))!, bound: p.bound };
}

/**
 * A paid intent's execution answered, in the statement that records it. Worth its price: the answer stored and
 * withheld (settling → charging) and its payment sent to settle (held → settling, under a lease). Otherwise the
 * intent is settled (or failed) now and its payment voided: never sent, nothing moves. Only the attempt whose
 * execution move wins makes these moves, and each must happen (`required`), or the whole record fails unwritten.
 */
export const chargeOrVoid: Finisher = (services, ex, answer, answerStatus) => {
  const { paymentId } = contextOf(ex);
  if (!paymentId) throw new Error(`execution ${ex.id} of intent ${ex.source_id} holds no payment`);
  const now = services.clock.now().toISOString();
  // The first delivery carries the secret an answer may hold; the stored copy (replays, GET) never does.
  if (worthItsPrice(capabilityByName(ex.capability)!, answer.type))
    return {
      parts: {
        intent: moveSql(
          'intent',
          ex.source_id,
          'charge',
          { answer: withoutSecrets(JSON.stringify(answer)), answer_status: answerStatus, executions: 1 },
          afterExecution,
        ),
        payment: paymentMove(
          paymentId,
          'send',
          { lease_until: leaseUntil(services.clock, facilitatorTimeoutMs(services)).toISOString(), updated_at: now },
          afterExecution,
        ),
      },
      required: ['intent', 'payment'],
      // Settled (and counted) when it collects or withholds: paidCall/charged.ts.
      settles: false,
      events: [],
      // The parts' rows, parsed by their parts (moveSql's).
      finished: (rows) => ({
        answer,
        record: {
          intent: moved(rows.intent as IntentRow | undefined, 'intent', IN_FLIGHT, 'charge'),
          payment: moved(rows.payment as PaymentRow | undefined, 'payment', 'held', 'send'),
        },
      }),
    };
  const settled = settledNow(services, ex, answer, answerStatus);
  return {
    parts: {
      intent: settled.intent,
      payment: paymentMove(
        paymentId,
        'void',
        {
          reason: `not settled: the answer was ${answer.type}, which its price does not pay for`,
          lease_until: null,
          updated_at: now,
        },
        afterExecution,
      ),
    },
    required: ['intent', 'payment'],
    settles: true,
    events: [settled.settled],
    finished: (rows) => ({
      answer: settled.stored,
      record: {
        intent: moved(rows.intent as IntentRow | undefined, 'intent', IN_FLIGHT, settled.event),
        payment: counted(moved(rows.payment as PaymentRow | undefined, 'payment', 'held', 'void')),
      },
    }),
  };
};
