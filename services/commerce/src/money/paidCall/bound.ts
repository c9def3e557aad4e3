import { newId, opTimeouts, ops } from '@vcs/contract';
import { isUniqueViolation, wrote, writeTogether } from '@vcs/platform';
import type { CommerceServices as Services } from '../../config.ts';
import { Refused } from '../common.ts';
import { executionInsert, findExecution } from '../executions.ts';
import { newIntentExecution } from '../intents.ts';
import { paymentPending, railOf } from '../payments.ts';
import { executionRow, returning } from '../rows.ts';
import { moveSql } from '../transition.ts';
import type { Offer } from './offered.ts';
import { Raced, type Paying, type Presented } from './paying.ts';
import { paymentInsert } from './paymentRows.ts';

/**
 * 6. Held: the payment bound to its intent (who pays stored with it, so what the reconciler finishes is that account's),
 * the intent settling, its execution made and claimed by this request — one statement (platform `writeTogether`). A
 * copy of this payment (or of its payment-identifier) bound first fails the statement on its unique key, so nothing of
 * it is written; that, or the intent taken another way meanwhile, is a race the entry decides (`Raced`).
 */
export async function bound(
  services: Services,
  pr: Presented,
  offer: Offer,
  requirements: Record<string, unknown>,
): Promise<Paying> {
  const { ctx } = pr.req;
  const a = pr.p.payload.authorization;
  const [network, asset] = pr.key;
  const now = services.clock.now().toISOString();
  const paymentId = newId('payment');
  const r = offer.intent;
  const account = r.account_id ?? ctx.account;
  const execution = newIntentExecution(r, {
    account,
    keyId: ctx.keyId,
    environment: ctx.environment,
    trigger: (ctx.environment === 'sandbox' ? ctx.trigger : null) ?? r.trigger,
    paymentId,
  });
  const runMs = opTimeouts(ops.intentsSettle, services.settings.BUS_TIMEOUT_MS).innerMs;
  const lost = () =>
    new Raced(
      new Refused(
        paymentPending(offer.terms, 'payment-pending', `intent ${offer.terms.id} is being settled another way`, 2),
        { intentId: offer.terms.id },
      ),
    );
  let made;
  try {
    made = await writeTogether(services.db, {
      // Still open (the move says so: pending, or nothing), then the one payment of this authorization.
      intent: moveSql('intent', r.id, 'pay', { account_id: account, claimed_at: now, payment_id: paymentId }),
      payment: paymentInsert(
        {
          id: paymentId,
          intentId: r.id,
          network,
          asset,
          payTo: railOf(services).terms.payTo,
          payer: a.from,
          nonce: a.nonce,
          amountAtomic: a.value,
          validBefore: a.validBefore,
          x402Version: pr.p.x402Version,
          payload: pr.p,
          requirements,
          accountId: ctx.account,
          keyId: ctx.keyId,
          environment: ctx.environment,
          identifier: pr.identifier,
          at: now,
        },
        wrote('intent').sql,
      ),
      execution: returning(executionRow, executionInsert(services, execution, runMs, wrote('payment').sql)),
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw lost();
    throw e;
  }
  if (!made.intent || !made.payment) throw lost();
  const claimed = made.execution ?? (await findExecution(services.db, 'intent', r.id))!;
  return { intent: made.intent, payment: made.payment, bound: true, claimed, executionId: claimed.id };
}
