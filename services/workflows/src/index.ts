import { noOwnSettings, ownMigrations, type PillarDefinition } from '@vcs/platform';
import { dealEventHandler } from './buy/events.ts';
import { DealMachine } from './buy/machine.ts';
import { dealOps } from './buy/serve.ts';
import { dealHandlers } from './nouns/deal.ts';

/** The Workflows pillar: deals that walk a checklist of capabilities to settlement. */
export const workflowsPillar: PillarDefinition<'workflows'> = {
  pillar: 'workflows',
  name: 'workflows',
  version: '0.1.0',
  migrations: ownMigrations('workflows', import.meta.url),
  settings: noOwnSettings,
  handlers: {
    deal: dealHandlers,
  },
  ops: (services) => dealOps(services, new DealMachine(services)),
  async background(services) {
    // Durable: a restarted workflows process resumes from the last acknowledged event.
    return [
      await services.bus.consumeEvents(
        { durable: 'workflows-deals', filter: 'evt.>', ackWaitMs: 10_000 },
        dealEventHandler(services, new DealMachine(services)),
      ),
    ];
  },
};
