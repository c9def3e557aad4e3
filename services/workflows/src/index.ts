import { DEAL_EVENTS } from '@vcs/contract';
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
    // Durable: a restarted workflows process resumes from the last acknowledged event. It takes only the events that
    // can move a deal's step (contract subjects.ts): the stream server keeps every other event from it.
    return [
      await services.bus.consumeEvents(
        { durable: 'workflows-deals', filter: DEAL_EVENTS, ackWaitMs: 10_000 },
        dealEventHandler(services, new DealMachine(services)),
      ),
    ];
  },
};
