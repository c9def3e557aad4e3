import { eventEnvelope } from '@vcs/contract';
import { consumeEventBatches, dec, type Services } from '@vcs/platform';
import { recordDemand } from './activation/queue.ts';
import { fanOut, type StreamEvent } from './webhooks/fanout.ts';

/**
 * The pillar's one consumer of the event stream: each batch is delivered and parsed once, then turned into webhook
 * deliveries and into demand signals for the activation queue. Both are idempotent per event, so a batch that fails
 * is redelivered and runs again whole. (It replaces one consumer each, which doubled every event's delivery, parse
 * and ack; `continues` starts it where they had got to.)
 */
export async function startEventConsumer(services: Services, onNewDeliveries: () => void) {
  return consumeEventBatches(services.bus, { durable: 'services-events', filter: 'evt.>', continues: ['webhook-fanout', 'activation-ranking'] }, async (batch) => {
    const events: StreamEvent[] = [];
    for (const d of batch) {
      // The text is kept beside the parse: a webhook delivers the event's bytes as the stream gave them.
      const body = dec.decode(d.data);
      const parsed = eventEnvelope.safeParse(JSON.parse(body));
      if (parsed.success) events.push({ evt: parsed.data, body });
      else services.log.warn({ subject: d.subject }, 'an event that is not an envelope was skipped');
    }
    const [delivered] = await Promise.all([fanOut(services, events), recordDemand(services, events.map((e) => e.evt))]);
    if (delivered) onNewDeliveries();
  });
}
