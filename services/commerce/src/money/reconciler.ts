import { edgeOf, leaseRunOutSql } from '@vcs/contract';
import type { Stoppable } from '@vcs/platform';
import type { CommerceServices } from '../config.ts';
import { reconcileExecutions, type Finisher } from './executions.ts';
import { finishHandoff } from './handoffs.ts';
import { finishIntent } from './intents.ts';
import { chargeOrVoid } from './paidCall/executed.ts';
import { resumePayment } from './paidCall/index.ts';
import { railOf } from './payments.ts';
import type { ExecutionSource } from './rows.ts';
import { statesSql } from './transition.ts';

/**
 * The way forward for everything left half-way: payments sent and not proven final (decided from the chain, their
 * intents collecting or withholding as their paying request would have) and executions whose lease ran out. One pass
 * at a time per process, a pass every `intervalMs` of the injected clock (a test moves time instead of sleeping);
 * every commerce replica runs it, and leases and conditional moves keep them apart.
 */
export function startReconciler(services: CommerceServices, intervalMs = 1_000): Stoppable {
  let stopped = false;
  const pass = async () => {
    await reconcileOpenPayments(services);
    await reconcileExecutions(services, finisherOf);
  };
  let current: Promise<void> | null = null;
  void (async () => {
    while (!stopped) {
      await services.clock.sleep(intervalMs);
      if (stopped) break;
      current = pass().catch((err) => services.log.warn({ err }, 'reconciler: a pass failed; trying again'));
      await current;
      current = null;
    }
  })();
  return {
    // The pass under way is finished; the sleep is left (on a test's manual clock it never ends by itself).
    async stop() {
      stopped = true;
      await current;
    },
  };
}

/**
 * The payments to decide ($1: now): in doubt, or sent with their lease run out (states the index `payments_open`
 * holds, written in the text so a generic plan reads only them).
 */
export const OPEN_PAYMENTS_SQL = `select id from payments
  where status = ${statesSql([edgeOf('payment', 'doubt').to])}
     or (status = ${statesSql([edgeOf('payment', 'send').to])} and ${leaseRunOutSql(1)})
  order by lease_until nulls first limit 20`;

/**
 * The payments' pass: every payment sent and not proven final — in doubt, or sent under a lease that ran out (its
 * sender died or gave up) — is driven on from the chain, as its own retry would: its intent collects once the chain
 * proves the transfer, or withholds its answer once the chain proves it never can. A payment still held waits on its
 * intent's execution (the executions' pass). Nobody is answered: the answer stays owed to its payer.
 */
export async function reconcileOpenPayments(services: CommerceServices): Promise<void> {
  if (!railOf(services).terms.live) return;
  const now = services.clock.now().toISOString();
  const { rows } = await services.db.query<{ id: string }>(OPEN_PAYMENTS_SQL, [now]);
  for (const { id } of rows) await resumePayment(services, id);
}

/**
 * What a due execution's answer finishes, by what it ran for: the one place an execution taken up without its caller
 * is matched to its source's step (a deal step has none: its Execution.finished@1 event closes it).
 */
function finisherOf(due: { source: ExecutionSource; paid: boolean }): Finisher | undefined {
  switch (due.source) {
    case 'intent':
      return due.paid ? chargeOrVoid : finishIntent;
    case 'handoff':
      return finishHandoff;
    case 'deal':
      return undefined;
  }
}
