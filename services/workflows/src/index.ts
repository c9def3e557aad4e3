import type { PillarDefinition } from '@vcs/platform';
import { dealEventHandler } from './buy/events.ts';
import { DealMachine } from './buy/machine.ts';
import { serveDeals } from './buy/serve.ts';
import { dealHandlers } from './nouns/deal.ts';

/** The Workflows pillar: deals that walk a checklist of capabilities to settlement. */
export const workflowsPillar: PillarDefinition = {
  pillar: 'workflows',
  name: 'workflows',
  version: '0.1.0',
  handlers: {
    deal: dealHandlers,
  },
  async background(services) {
    const machine = new DealMachine(services);
    const served = serveDeals(services, machine);
    // Durable: a restarted workflows process resumes from the last acknowledged event.
    const consumer = await services.bus.consumeEvents({ durable: 'workflows-deals', filter: 'evt.>', ackWaitMs: 10_000 }, dealEventHandler(services, machine));
    return [{ stop: () => served.stop() }, consumer];
  },
};
