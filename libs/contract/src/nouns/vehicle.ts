import { z } from 'zod';
import { defineNoun } from '../capability.ts';
import { decimalString } from '../answer.ts';
import { price, vinRequired } from '../common.ts';

/** The decode record: what the VIN encodes is real; trim, values and odometer are simulated in the sandbox. */
export const decodeRecord = z.object({
  vin: z.string(),
  year: z.number().int(),
  make: z.string(),
  model: z.string(),
  retailValue: decimalString,
  msrp: decimalString,
  priceCurrency: z.string(),
  trim: z.object({ name: z.string(), simulated: z.boolean() }).catchall(z.unknown()),
  body: z.object({ style: z.string(), doors: z.number().int() }).catchall(z.unknown()),
  engine: z.object({ description: z.string() }).catchall(z.unknown()),
  odometer: z.object({ value: z.number().int(), unit: z.string(), asOf: z.string(), simulated: z.boolean() }).catchall(z.unknown()),
}).catchall(z.unknown());

export const vehicle = defineNoun({
  noun: 'vehicle',
  pillar: 'data',
  displayPillar: 'Data',
  entity: 'Vehicle',
  door: 'vehicles',
  summary: 'The vehicle itself: decode a VIN on the keyed platform rail.',
  capabilities: {
    decode: {
      method: 'GET', path: '/vehicles/decode', gate: 'key', mode: 'sandbox', facet: 'data',
      summary: 'Decode a VIN: the same answer as the keyless GET /decode/{vin}, with account context and metering.',
      request: vinRequired, answer: 'VehicleDecode@1',
      value: z.object({ decode: decodeRecord }),
      events: [], price: price.metered('0.00', 'decode'),
    },
  },
});
