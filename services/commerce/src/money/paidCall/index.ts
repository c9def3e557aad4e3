import { opTimeouts, ops, type OpReplyOf, type PaidCallMembers } from '@vcs/contract';
import type { CommerceServices as Services } from '../../config.ts';
import { Refused } from '../common.ts';
import { countPayment } from '../../metrics.ts';
import { bound } from './bound.ts';
import { charged } from './charged.ts';
import { delivered, replayed } from './delivered.ts';
import { executed } from './executed.ts';
import { found } from './found.ts';
import { held } from './held.ts';
import { looked, storedPaying } from './looked.ts';
import { offered } from './offered.ts';
import { owed, withheld } from './owed.ts';
import { parsed } from './parsed.ts';
import { Raced, type Paying, type PayRequest, type Run } from './paying.ts';
import { verified } from './verified.ts';

/**
 * A paid call (x402), in the order it runs: the one pipeline every paid request takes (on a capability's route, on its
 * intent's settle route, from MCP through the settle route). Each step is a function in a file of its own in this
 * folder; this file is the order. The lifecycle table (libs/contract lifecycles.ts) guards each move a step makes; it
 * does not choose the next step.
 *
 *   1 parsed → 2 found (a retry) | 3 owed | 4 offered → 5 verified → 6 bound → 7 executed → 8 charged (or voided)
 *   → 8½ held (while the outcome is decided, within the caller's hold) → 9 delivered
 *
 * A retry is recognised once, here, at the entry (`found`): on the first look, or after a new payment's step lost to a
 * copy of the same payment (`Raced`). A retry, an owed answer and the reconciler take the same steps 7–8 from where
 * the intent is (`toTheEnd`): each step does nothing for an intent past it.
 *
 * A refusal is thrown (common.ts `Refused`) from any step and answered once, here, with what a paid call carries beside
 * its answer (`PaidCallMembers`: the intent, whether this request bound a new payment, the receipt, a refused
 * payment's x402 reason).
 */
export async function payCall(services: Services, req: PayRequest): Promise<OpReplyOf<'intentsPay'>> {
  const timeoutMs = opTimeouts(ops.intentsPay, services.settings.BUS_TIMEOUT_MS, req.timeoutMs).innerMs;
  const now = services.clock.now().getTime();
  // The hold ends early enough for one more step to finish within the call's time.
  const holdMs = Math.min(req.holdMs ?? 0, timeoutMs - services.settings.BUS_TIMEOUT_MS);
  const run: Run = {
    services,
    ctx: req.ctx,
    requestId: req.ctx.requestId,
    deadline: now + timeoutMs,
    holdUntil: now + holdMs,
  };
  try {
    const pr = parsed(services, req); //                                           1
    const seen = await looked(services, pr);
    const retry = found(services, pr, seen.own); //                                2
    if (retry) return await delivered(run, await decided(run, retry));
    try {
      const debt = await owed(services, pr, seen.owed); //                         3
      if (debt) {
        const out = await decided(run, debt);
        // Withheld after all (its payment never landed): nothing is owed; this payment pays for a new answer.
        if (!withheld(out)) return await delivered(run, out);
      }
      const offer = await offered(services, pr, seen.named); //                    4
      if ('settled' in offer) return replayed(offer.settled);
      if ('reoffered' in offer) return offer.reoffered;
      const requirements = await verified(services, pr, offer); //                 5
      const holding = await bound(services, pr, offer, requirements); //           6
      const ran = await executed(run, holding); //                                 7
      const paid = await charged(run, ran); //                                     8
      const outcome = await held(run, paid, toTheEnd); //                          8½
      return await delivered(run, outcome); //                                     9
    } catch (e) {
      // A copy of this payment was bound meanwhile: this request is its retry after all.
      if (!(e instanceof Raced)) throw e;
      const copy = found(services, pr, (await looked(services, pr)).own);
      if (!copy) throw e.refused;
      return await delivered(run, await decided(run, copy));
    }
  } catch (e) {
    if (!(e instanceof Refused)) throw e;
    const members: PaidCallMembers = { intentId: e.members.intentId ?? req.intentId, bound: false };
    if (e.members.refusal) members.refusal = e.members.refusal;
    if (e.members.refusal) countPayment('refused');
    return { ...e.reply, meta: members };
  }
}

/** Steps 7–8 for a payment bound before: its capability's answer (run or waited on), then its charge. */
export const toTheEnd = async (run: Run, p: Paying) => charged(run, await executed(run, p));
/** Steps 7–8½ for a payment bound before (a retry, an owed answer): to its outcome, held while it is decided. */
const decided = async (run: Run, p: Paying) => held(run, await toTheEnd(run, p), toTheEnd);

/**
 * The reconciler's way into the same steps: a payment sent and not proven final, driven on from where it is, with
 * nobody to answer (its answer stays owed to the wallet that paid).
 */
export async function resumePayment(services: Services, paymentId: string): Promise<void> {
  const p = await storedPaying(services.db, paymentId);
  if (p) await toTheEnd({ services, deadline: services.clock.now().getTime() + services.settings.BUS_TIMEOUT_MS }, p);
}
