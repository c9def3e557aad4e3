import { ACCOUNT_EVENTS, eventEnvelope } from '@vcs/contract';
import {
  consumeEventBatches,
  dec,
  endSpan,
  SpanKind,
  spanTraceparent,
  startSpan,
  contextFrom,
  tracing,
  type Services,
} from '@vcs/platform';
import { recordDemand } from './activation/queue.ts';
import { fanOut, type StreamEvent } from './webhooks/fanout.ts';

/** Its durable consumer's name: replicas share it, and an autoscaler reads its lag (deploy/kubernetes/keda). */
export const EVENT_CONSUMER = 'services-events';

/**
 * The pillar's one consumer of the event stream: each batch is delivered and parsed once, then turned into webhook
 * deliveries and into demand signals for the activation queue. Both act only on an account's events, so it takes only
 * those (contract subjects.ts): an anonymous call's events never reach this pillar. Both are idempotent per event, so a batch that fails
 * is redelivered and runs again whole. (It replaces one consumer each, which doubled every event's delivery, parse
 * and ack; `continues` starts it where they had got to.)
 */
export async function startEventConsumer(services: Services, onNewDeliveries: () => void) {
  return consumeEventBatches(
    services.bus,
    { durable: EVENT_CONSUMER, filter: ACCOUNT_EVENTS, continues: ['webhook-fanout', 'activation-ranking'] },
    async (batch) => {
      const events: StreamEvent[] = [];
      for (const d of batch) {
        // The text is kept beside the parse: a webhook delivers the event's bytes as the stream gave them.
        const body = dec.decode(d.data);
        const parsed = eventEnvelope.safeParse(JSON.parse(body));
        if (parsed.success)
          events.push({
            evt: parsed.data,
            body,
            ...(d.headers?.traceparent ? { traceparent: d.headers.traceparent } : {}),
          });
        else services.log.warn({ subject: d.subject }, 'an event that is not an envelope was skipped');
      }
      // Tracing on: each event's fan-out is a span continuing the event's trace, and its deliveries continue that span.
      const spans = tracing.on
        ? events.map((e) => {
            const span = startSpan(
              `fanout ${e.evt.type}`,
              SpanKind.CONSUMER,
              { 'messaging.system': 'nats', 'messaging.message.id': e.evt.id },
              contextFrom(e.traceparent),
            );
            if (span) e.traceparent = spanTraceparent(span);
            return span;
          })
        : [];
      const [delivered] = await Promise.all([
        fanOut(services, events),
        recordDemand(
          services,
          events.map((e) => e.evt),
        ),
      ]).finally(() => spans.forEach((s) => endSpan(s)));
      if (delivered) onNewDeliveries();
    },
  );
}
