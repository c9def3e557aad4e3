import type { OpsImpl } from '@vcs/platform';
import type { CommerceServices } from '../config.ts';
import { lookupKey, mintAnonymousKey } from '../keys.ts';
import { runExecutionOp, wireFinishers } from './executions.ts';
import { completeHandoff, createHandoff, finishHandoff, getHandoff } from './handoffs.ts';
import { createIntent, finishIntent, getIntent, rereadPaid, settleIntent } from './intents.ts';
import { payCall } from './pay.ts';

/** What an execution's answer finishes, by its source (a deal step is closed by its Execution.finished@1 event). */
export const wireMoney = (services: CommerceServices) =>
  wireFinishers(services, { intent: finishIntent, handoff: finishHandoff });

/** Commerce's platform operations (contract ops.ts): keys, the intent rail and the handoff rail. */
export const commerceOps = (services: CommerceServices): OpsImpl<'commerce'> => {
  wireMoney(services);
  return {
    keysMint: () => mintAnonymousKey(services),
    keysLookup: (input) => lookupKey(services, input.prefix),
    intentsCreate: (input, ctx) => createIntent(services, { ...input, ctx }),
    intentsGet: (input, ctx) => getIntent(services, { ...input, ctx }),
    intentsSettle: (input, ctx) => settleIntent(services, { ...input, ctx }),
    intentsPay: (input, ctx) => payCall(services, { ...input, ctx }),
    intentsReread: (input, ctx) => rereadPaid(services, { ...input, ctx }),
    executionsRun: (input, ctx) => runExecutionOp(services, { ...input, ctx }),
    handoffsCreate: (input, ctx) => createHandoff(services, { ...input, ctx }),
    handoffsGet: (input, ctx) => getHandoff(services, { ...input, ctx }),
    handoffsComplete: (input, ctx) => completeHandoff(services, { ...input, ctx }),
  };
};
