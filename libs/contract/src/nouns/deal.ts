import { z } from 'zod';
import { defineNoun } from '../capability.ts';
import { timestamp } from '../answer.ts';
import { price } from '../common.ts';
import { vin } from '../vin.ts';

export const workflowIds = ['buy'] as const;

export const dealOpenValue = z.object({
  dealId: z.string().meta({ example: 'deal_9sd...' }),
  workflow: z.enum(workflowIds),
  vin: z.string(),
  state: z.string().meta({ example: 'OPENED' }),
  checklist: z.array(z.object({ step: z.string(), capability: z.string(), status: z.string() }).catchall(z.unknown())),
  openedAt: timestamp,
});

export const deal = defineNoun({
  noun: 'deal',
  pillar: 'workflows',
  displayPillar: 'Workflows',
  entity: 'Deal',
  door: 'deals',
  summary: 'Deals: a workflow (buy) that takes a vehicle purchase from OPENED to SETTLED step by step.',
  capabilities: {
    open: {
      method: 'POST', path: '/deals/open', gate: 'key', mode: 'sandbox', facet: 'commerce',
      summary: 'Open a deal of a workflow for a VIN; the answer carries its id, state OPENED and checklist.',
      request: z.object({ workflow: z.enum(workflowIds), vin }).strict(),
      answer: 'DealOpen@1', value: dealOpenValue,
      events: [{ type: 'Deal.opened@1', when: 'success' }], price: price.free(),
    },
  },
});
