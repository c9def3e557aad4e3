import { z } from 'zod';
import { defineNoun } from '../capability.ts';
import { decimalString, isoDate } from '../answer.ts';
import { price, valueBase } from '../common.ts';
import { vin } from '../vin.ts';

const place = z
  .string()
  .regex(/^\d{5}$/, 'a 5-digit US ZIP code')
  .meta({ example: '94103' });

export const transport = defineNoun({
  noun: 'transport',
  pillar: 'services',
  displayPillar: 'Services',
  entity: 'Shipment',
  door: 'transports',
  summary: 'Moving a vehicle between two places: quotes now, priced orders later.',
  capabilities: {
    quote: {
      method: 'GET',
      path: '/transports/quote',
      gate: 'none',
      mode: 'sandbox',
      facet: 'data',
      summary: 'Quote carrying a VIN from one ZIP to another.',
      request: z.object({ vin, from: place, to: place }).strict(),
      answer: 'TransportQuote@1',
      value: valueBase.extend({
        quote: z.object({
          from: z.string(),
          to: z.string(),
          miles: z.number().int(),
          amount: decimalString,
          currency: z.string(),
          pickupBy: isoDate,
          deliverBy: isoDate,
        }),
      }),
      events: [],
      price: price.free(),
    },
  },
});
