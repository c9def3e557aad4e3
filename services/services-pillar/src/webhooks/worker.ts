import type { Services, Stoppable } from '@vcs/platform';
import { deliveryConfig } from './config.ts';
import { startFanout } from './fanout.ts';
import { DeliverySender } from './sender.ts';

/** The delivery worker: fan-out consumer of the event stream plus the sender loop over Postgres. */
export async function startWebhookWorker(services: Services): Promise<Stoppable[]> {
  // The embedded mode is a local development server: it may deliver to a receiver on this machine.
  const cfg = deliveryConfig(services.settings, { embedded: services.bus.kind === 'memory' });
  const sender = new DeliverySender(services, cfg).start();
  const fanout = await startFanout(services, () => sender.kick());
  return [fanout, sender];
}
