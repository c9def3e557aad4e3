import { ownMigrations, type PillarDefinition } from '@vcs/platform';
import { frameInspectionHandlers } from './nouns/frameInspection.ts';
import { poaHandlers } from './nouns/poa.ts';
import { signingHandlers } from './nouns/signing.ts';
import { totalLossHandlers } from './nouns/totalLoss.ts';
import { transportHandlers } from './nouns/transport.ts';
import { webhookHandlers } from './nouns/webhook.ts';
import { startEventConsumer } from './events.ts';
import { startWebhookSender } from './webhooks/sender.ts';
import { connectionOps } from './activation/queue.ts';
import { servicesPillarSettings } from './config.ts';

/** The Services pillar: work dispatched to people and partners. */
export const servicesPillar: PillarDefinition<'services', typeof servicesPillarSettings> = {
  pillar: 'services',
  name: 'services-pillar',
  version: '0.1.0',
  handlers: {
    signing: signingHandlers,
    transport: transportHandlers,
    poa: poaHandlers,
    frameInspection: frameInspectionHandlers,
    totalLoss: totalLossHandlers,
    webhook: webhookHandlers,
  },
  ops: connectionOps,
  /** The webhook sender, and the event consumer that fans events out to it and counts demand for activation. */
  async background(services) {
    const sender = startWebhookSender(services);
    return [await startEventConsumer(services, () => sender.kick()), sender];
  },
  settings: servicesPillarSettings,
  migrations: ownMigrations('services', import.meta.url),
};

/** The embedded process decides whether its webhook sender may deliver to this machine (webhooks/config.ts). */
export { listensOnLoopback } from './webhooks/config.ts';
