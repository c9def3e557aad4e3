import type { OpsImpl } from '@vcs/platform';
import type { CommerceServices } from '../config.ts';
import { lookupKey, mintAnonymousKey } from '../keys.ts';
import { runExecutionOp } from './executions.ts';
import { completeHandoff, createHandoff, getHandoff } from './handoffs.ts';
import { createIntent, getIntent, rereadPaid, settleIntent } from './intents.ts';
import { payCall } from './paidCall/index.ts';
import { settlementUsage } from './usage.ts';

/** Commerce's platform operations (contract ops.ts): keys, the intent rail and the handoff rail. */
export const commerceOps = (services: CommerceServices): OpsImpl<'commerce'> => {
  return {
    keysMint: () => mintAnonymousKey(services),
    keysLookup: (input) => lookupKey(services, input.prefix),
    usageGet: async (input) => ({
      status: 200,
      answer: {
        type: 'OK',
        answers: 'SettlementUsage@1',
        value: { byCapability: await settlementUsage(services.db, input.account) },
      },
    }),
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
