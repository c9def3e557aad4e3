import { lifecycles } from '../lifecycles.ts';
import { z } from 'zod';
import { defineNoun, type EventDecl } from '../capability.ts';
import { timestamp } from '../answer.ts';
import { price } from '../common.ts';
import { vin } from '../vin.ts';

export const workflowIds = ['buy'] as const;

/** A US ZIP code: five digits, or ZIP+4. */
export const usZip = z
  .string()
  .trim()
  .regex(/^\d{5}(-\d{4})?$/, 'a US ZIP code: 5 digits, or ZIP+4 such as 94103-1234')
  .meta({ example: '94103' });

/** POST /buy/deals: the buyer and the car. */
export const buyDealRequest = z
  .object({
    vin,
    buyer: z
      .object({
        name: z.string().trim().min(1, "the buyer's name must not be empty").max(200),
        zip: usZip,
      })
      .strict(),
  })
  .strict();

/** The lifecycle a deal moves through; see docs/deals.md for the moves between them. */
export const dealStates = [
  'OPENED',
  'IN_PROGRESS',
  'AWAITING_PAYMENT',
  'AWAITING_HUMAN',
  'STEP_FAILED',
  'SETTLED',
] as const;
/** A step's states: the money's one model (lifecycles.ts) names them. */
export const stepStatuses = lifecycles.dealStep.states;

/**
 * Past-tense events a deal appends to its record (and publishes) as it moves; Deal.opened also comes from
 * deal.open.
 */
export const dealLifecycleEvents = [
  { type: 'Deal.opened@1', when: 'success' },
  { type: 'Deal.stepStarted@1', when: 'outcome' },
  { type: 'Deal.stepCompleted@1', when: 'outcome' },
  { type: 'Deal.stepFailed@1', when: 'outcome' },
  { type: 'Deal.settled@1', when: 'outcome' },
] as const satisfies readonly EventDecl[];

export const dealStep = z.object({
  position: z.number().int().meta({ description: '1-based order in the checklist' }),
  step: z.string().meta({ example: 'decode' }),
  title: z.string(),
  why: z.string().meta({ description: 'Why this step sits here in a purchase' }),
  capability: z
    .string()
    .nullable()
    .meta({ description: 'The capability that fulfils it; null for a pure human act', example: 'vehicle.decode' }),
  kind: z.enum(['execute', 'offer', 'human']).meta({
    description:
      'execute: runs at once; offer: arrives as a 402 OFFER to settle; human: arrives as a 403 NEEDS_HUMAN handoff',
  }),
  verb: z.enum(['authorize', 'notarize', 'sign', 'pay']).nullable(),
  status: z.enum(stepStatuses),
  attempts: z.number().int(),
  pending: z
    .object({ kind: z.enum(['offer', 'handoff']), id: z.string(), answer: z.record(z.string(), z.unknown()) })
    .nullable()
    .meta({ description: 'The offer (intent) or handoff the step waits on' }),
  outcome: z
    .object({
      type: z.string(),
      answers: z.string().optional(),
      code: z.string().optional(),
      message: z.string().optional(),
      at: timestamp,
    })
    .nullable(),
  startedAt: timestamp.nullable(),
  completedAt: timestamp.nullable(),
});

export const dealEventRecord = z.object({
  id: z.string(),
  type: z.string(),
  step: z.number().int().nullable(),
  occurredAt: timestamp,
  data: z.record(z.string(), z.unknown()),
});

/** The Deal@1 value: GET /buy/deals/{id}, POST /buy/deals and each advance. */
export const dealValue = z.object({
  dealId: z.string().meta({ example: 'deal_9sd...' }),
  workflow: z.enum(workflowIds),
  vin: z.string(),
  buyer: z.object({ name: z.string(), zip: z.string() }).nullable(),
  state: z.enum(dealStates),
  currentStep: z
    .number()
    .int()
    .nullable()
    .meta({ description: 'Position of the next step not yet done; null once SETTLED' }),
  checklist: z.array(dealStep),
  pending: dealStep.shape.pending,
  events: z.array(dealEventRecord),
  version: z.number().int(),
  openedAt: timestamp,
  updatedAt: timestamp,
});
export type DealValue = z.infer<typeof dealValue>;
export type DealStep = z.infer<typeof dealStep>;

/** deal.open answers the same Deal value as POST /buy/deals (as DealOpen@1). */
export const dealOpenValue = dealValue;

export const deal = defineNoun({
  noun: 'deal',
  pillar: 'workflows',
  displayPillar: 'Workflows',
  entity: 'Deal',
  door: 'deals',
  summary: 'Deals: a workflow (buy) that takes a vehicle purchase from OPENED to SETTLED step by step.',
  capabilities: {
    open: {
      method: 'POST',
      path: '/deals/open',
      gate: 'key',
      mode: 'sandbox',
      facet: 'commerce',
      summary: 'Open a deal of a workflow for a VIN; the answer carries its id, state OPENED and checklist.',
      request: z.object({ workflow: z.enum(workflowIds), vin }).strict(),
      answer: 'DealOpen@1',
      value: dealOpenValue,
      events: [{ type: 'Deal.opened@1', when: 'success' }],
      price: price.free(),
      notes: [
        `As the deal moves it appends and publishes ${dealLifecycleEvents.map((e) => e.type).join(', ')}; ` +
          'advance it with POST /buy/deals/{id}/advance.',
      ],
    },
  },
});
