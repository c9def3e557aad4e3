import { z } from 'zod';
import { timestamp } from './answer.ts';

/**
 * The event envelope on the bus, in the outbox and in webhook deliveries.
 * `type` is `<Noun>.<pastTenseVerb>@<version>`; a breaking change to `data` bumps the version,
 * and both versions are published side by side until the old one is retired.
 */
export const eventEnvelope = z.object({
  id: z.string().meta({ example: 'evt_...' }),
  type: z.string().regex(/^[A-Z][A-Za-z]*\.[a-z][A-Za-z]*@\d+$/),
  occurredAt: timestamp,
  account: z.string().nullable(),
  capability: z.string().nullable(),
  vin: z.string().nullable(),
  data: z.record(z.string(), z.unknown()),
  simulated: z.boolean(),
});
export type EventEnvelope = z.infer<typeof eventEnvelope>;

/** JetStream subject of an event type: `evt.<Noun>.<verb>.v<version>`. */
export function eventSubject(type: string): string {
  const m = /^([A-Za-z]+)\.([A-Za-z]+)@(\d+)$/.exec(type);
  if (!m) throw new Error(`not an event type: ${type}`);
  return `evt.${m[1]}.${m[2]}.v${m[3]}`;
}
export const EVENT_STREAM = 'EVENTS';
export const EVENT_SUBJECTS = 'evt.>';
