import { ownMigrations, type PillarDefinition } from '@vcs/platform';
import { frameInspectionHandlers } from './nouns/frameInspection.ts';
import { poaHandlers } from './nouns/poa.ts';
import { signingHandlers } from './nouns/signing.ts';
import { totalLossHandlers } from './nouns/totalLoss.ts';
import { transportHandlers } from './nouns/transport.ts';
import { webhookHandlers } from './nouns/webhook.ts';
import { startWebhookWorker } from './webhooks/worker.ts';
import { connectionOps, startActivation } from './activation/queue.ts';
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
  /** The webhook delivery worker (fan-out + sender) and the activation queue (submissions + demand ranking). */
  background: async (services) => [...(await startWebhookWorker(services)), ...(await startActivation(services))],
  settings: webhookSettings.extend(connectionSettings.shape),
  migrations: ownMigrations('services', import.meta.url),
};
