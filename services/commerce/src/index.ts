import { ownMigrations, type PillarDefinition } from '@vcs/platform';
import { commerceSettings } from './config.ts';
import { commerceOps } from './money/ops.ts';
import { railOf } from './money/payments.ts';
import { startReconciler } from './money/reconciler.ts';
import { apiKeyHandlers } from './nouns/apiKey.ts';

/** The Commerce pillar: keys, accounts and money. */
export const commercePillar: PillarDefinition<'commerce', typeof commerceSettings> = {
  pillar: 'commerce',
  name: 'commerce',
  version: '0.1.0',
  handlers: {
    apiKey: apiKeyHandlers,
  },
  ops: commerceOps,
  settings: commerceSettings,
  migrations: ownMigrations('commerce', import.meta.url),
  background: async (services) => {
    railOf(services); // a facilitator without a payee or chain node is a wrong setting: stop at start, naming it
    return [startReconciler(services)];
  },
};
