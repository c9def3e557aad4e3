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
import { connectionSettings } from './activation/crypto.ts';
import { webhookSettings } from './webhooks/config.ts';

/** The Services pillar: work dispatched to people and partners. */
export const servicesPillar: PillarDefinition<'services'> = {
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
  settings: webhookSettings.extend(connectionSettings.shape),
  migrations: ownMigrations('services', import.meta.url),
};
