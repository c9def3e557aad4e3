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

/**
 * What a capability's result puts in `data` when it fails (the `failure` events, and `run` events of a failed run):
 * the BLOCKED code and message.
 */
export const failureData = z.object({ code: z.string(), message: z.string() });

/** The deal step a pending intent, handoff or execution was made for (workflows' buy deals), or null. */
export const eventOrigin = z.object({ dealId: z.string(), step: z.number().int() }).nullable();
const answerType = z
  .enum(['OK', 'EMPTY', 'BLOCKED', 'OFFER', 'NEEDS_HUMAN'])
  .meta({ description: 'The type of the answer the capability gave' });
export type EventAnswerType = z.infer<typeof answerType>;

/**
 * Events of the platform's own work (no capability's declaration covers them): who makes each and what its `data`
 * holds. Producers build them with `platformEvent` (which parses `data` against its schema) and consumers read them
 * with `parsePlatformEvent`; the catalog and docs/events.md list their payloads from here.
 */
export const platformEvents = {
  'Intent.settled@1': {
    producer: 'commerce',
    summary:
      'An intent settled: its capability ran once and its answer is kept on the intent ' +
      '(answerType says how it answered).',
    data: z.object({
      intentId: z.string().meta({ example: 'int_...' }),
      capability: z.string(),
      origin: eventOrigin,
      answerType,
      executionId: z.string(),
      charged: z.string().meta({ description: 'What the settlement collected, USD decimal', example: '1.00' }),
    }),
  },
  'Handoff.completed@1': {
    producer: 'commerce',
    summary: 'The credentialed human completed a NEEDS_HUMAN handoff (its capability, if any, has answered).',
    data: z.object({
      handoffId: z.string(),
      verb: z.enum(['authorize', 'notarize', 'sign', 'pay']),
      capability: z.string().nullable(),
      origin: eventOrigin,
    }),
  },
  'Handoff.refused@1': {
    producer: 'commerce',
    summary: 'The credentialed human refused a NEEDS_HUMAN handoff; its capability did not run.',
    data: z.object({
      handoffId: z.string(),
      verb: z.enum(['authorize', 'notarize', 'sign', 'pay']),
      capability: z.string().nullable(),
      origin: eventOrigin,
    }),
  },
  'Execution.finished@1': {
    producer: 'commerce',
    summary:
      'A durable execution (an intent settlement, a handoff completion or a deal step) recorded its answer, once.',
    data: z.object({
      executionId: z.string(),
      source: z.enum(['intent', 'handoff', 'deal']),
      sourceId: z.string().meta({ description: 'The intent or handoff id, or `<dealId>:<step>:<attempt>`' }),
      capability: z.string(),
      origin: eventOrigin,
      status: z.enum(['succeeded', 'failed']),
      answerType,
      answers: z.string().nullable(),
    }),
  },
  'Deal.stepStarted@1': {
    producer: 'workflows',
    summary: "A deal's step started (an execute step ran, an offer or handoff was made).",
    data: z.object({
      dealId: z.string(),
      position: z.number().int().meta({ description: "The step's 1-based place in the checklist" }),
      step: z.string().meta({ example: 'decode' }),
      capability: z.string().nullable(),
      kind: z.enum(['execute', 'offer', 'human']),
      attempt: z.number().int(),
    }),
  },
  'Deal.stepCompleted@1': {
    producer: 'workflows',
    summary: "A deal's step completed.",
    data: z.object({
      dealId: z.string(),
      position: z.number().int(),
      step: z.string(),
      capability: z.string().nullable(),
      answerType: z.string(),
      attempt: z.number().int(),
    }),
  },
  'Deal.stepFailed@1': {
    producer: 'workflows',
    summary: "A deal's step failed; the deal waits in STEP_FAILED for an advance to retry it.",
    data: z.object({
      dealId: z.string(),
      position: z.number().int(),
      step: z.string(),
      capability: z.string().nullable(),
      code: z.string(),
      message: z.string(),
      attempt: z.number().int(),
    }),
  },
  'Deal.settled@1': {
    producer: 'workflows',
    summary: "A deal's last step completed: the deal is SETTLED.",
    data: z.object({ dealId: z.string(), step: z.null(), state: z.literal('SETTLED'), steps: z.number().int() }),
  },
  'Webhook.failed@1': {
    producer: 'services',
    summary:
      'A webhook delivery gave up (retries exhausted, or the endpoint answered 410 and was disabled); ' +
      'webhook.meteredPay also emits it when it fails.',
    data: z.union([
      z.object({
        reason: z.string(),
        deliveryId: z.string(),
        endpointId: z.string(),
        eventId: z.string(),
        eventType: z.string(),
        attempts: z.number().int(),
        endpointDisabled: z.literal(true).optional(),
        disabledReason: z.string().optional(),
      }),
      failureData,
    ]),
  },
} as const satisfies Record<
  string,
  { producer: 'data' | 'services' | 'commerce' | 'workflows'; summary: string; data: z.ZodType }
>;
export type PlatformEventType = keyof typeof platformEvents;
export type PlatformEventData<T extends PlatformEventType> = z.output<(typeof platformEvents)[T]['data']>;
export type PlatformEventInput<T extends PlatformEventType> = z.input<(typeof platformEvents)[T]['data']>;
/** A platform event read back: its envelope with `data` typed by its declaration. */
export type PlatformEvent<T extends PlatformEventType = PlatformEventType> = {
  [K in T]: Omit<EventEnvelope, 'type' | 'data'> & { type: K; data: PlatformEventData<K> };
}[T];

/**
 * A platform event to write (outbox `writeEvents`): its `data` parsed against its declaration, so a producer cannot
 * emit an undeclared member shape.
 */
export function platformEvent<T extends PlatformEventType>(
  type: T,
  envelope: Omit<EventEnvelope, 'id' | 'type' | 'data'>,
  data: PlatformEventInput<T>,
): Omit<EventEnvelope, 'id'> {
  return { type, ...envelope, data: platformEvents[type].data.parse(data) as Record<string, unknown> };
}

export const isPlatformEventType = (type: string): type is PlatformEventType => Object.hasOwn(platformEvents, type);

/** Parse an envelope as the platform event it says it is; null for any other type or for data that does not match. */
export function parsePlatformEvent<T extends PlatformEventType>(
  e: EventEnvelope,
  ...types: T[]
): PlatformEvent<T> | null {
  if (!isPlatformEventType(e.type) || (types.length && !types.includes(e.type as T))) return null;
  const data = platformEvents[e.type].data.safeParse(e.data);
  return data.success ? ({ ...e, data: data.data } as PlatformEvent<T>) : null;
}
