import { z } from 'zod';
import { defineNoun } from '../capability.ts';
import { decimalString } from '../answer.ts';
import { price, vinRequired } from '../common.ts';

const text = (description: string, example?: string) =>
  z.string().meta({ description, ...(example ? { example } : {}) });

/**
 * The decode record. What NHTSA's vPIC database knows of the VIN is real (named in `provenance.real`), and a member
 * vPIC does not give is absent rather than guessed; values no public source gives (retail value, MSRP, odometer)
 * are simulated in the sandbox and labelled so.
 */
export const decodeRecord = z
  .object({
    vin: z.string(),
    year: z.number().int().nullable().meta({
      description: 'Model year (null when the VIN does not encode one, as some non-North-American VINs do not)',
      example: 2003,
    }),
    make: z.string().nullable().meta({ description: 'Make, as vPIC names it', example: 'Honda' }),
    model: z
      .string()
      .nullable()
      .meta({ description: 'Model, as vPIC names it (null when vPIC has no pattern for the VIN)', example: 'Accord' }),
    series: text('Series').optional(),
    manufacturer: text('Manufacturer of record (the WMI holder)', 'AMERICAN HONDA MOTOR CO., INC.').optional(),
    vehicleType: text('Vehicle type', 'Passenger Car').optional(),
    driveType: text('Drive type', 'FWD/Front-Wheel Drive').optional(),
    trim: z
      .object({ name: text('Trim', 'EX-V6').optional(), level2: text('Second trim level').optional() })
      .catchall(z.unknown()),
    body: z
      .object({
        class: text('Body class', 'Coupe').optional(),
        doors: z.number().int().optional(),
        cab: text('Cab type').optional(),
      })
      .catchall(z.unknown()),
    engine: z
      .object({
        cylinders: z.number().int().optional(),
        displacementL: z.number().optional().meta({ description: 'Displacement in litres' }),
        configuration: text('Engine configuration', 'V-Shaped').optional(),
        model: text('Engine model', 'J30A4').optional(),
        horsepower: z.number().optional(),
        manufacturer: text('Engine manufacturer').optional(),
        electrification: text('Electrification level').optional(),
        description: text('A short description made from the members above', '3.5L V6').optional(),
      })
      .catchall(z.unknown()),
    fuel: z.object({
      primary: text('Primary fuel type', 'Gasoline').optional(),
      secondary: text('Secondary fuel type').optional(),
    }),
    transmission: z
      .object({ style: text('Transmission style').optional(), speeds: z.number().int().optional() })
      .optional(),
    gvwrClass: text('Gross vehicle weight rating class').optional(),
    plant: z.object({
      city: text('Plant city').optional(),
      state: text('Plant state').optional(),
      country: text('Plant country').optional(),
      company: text('Plant company').optional(),
    }),
    notes: z
      .array(z.string())
      .optional()
      .meta({ description: "vPIC's own notes about the decode (a model year it cannot pin down, low confidence)" }),
    retailValue: decimalString,
    msrp: decimalString,
    priceCurrency: z.string(),
    odometer: z
      .object({ value: z.number().int(), unit: z.string(), asOf: z.string(), simulated: z.boolean() })
      .catchall(z.unknown()),
  })
  .catchall(z.unknown());

/** Where each member of a decode came from: the vPIC database (and its version) or the sandbox's simulation. */
export const decodeSources = z
  .object({
    source: z.string(),
    real: z.array(z.string()),
    simulatedFields: z.array(z.string()),
  })
  .catchall(z.unknown());
/** A decode record and its sources, as the contract's schemas describe them (what libs/vin builds). */
export type DecodeRecord = z.infer<typeof decodeRecord>;
export type DecodeSources = z.infer<typeof decodeSources>;

export const vehicle = defineNoun({
  noun: 'vehicle',
  pillar: 'data',
  displayPillar: 'Data',
  entity: 'Vehicle',
  door: 'vehicles',
  summary: 'The vehicle itself: decode a VIN on the keyed platform rail.',
  capabilities: {
    decode: {
      method: 'GET',
      path: '/vehicles/decode',
      gate: 'key',
      mode: 'sandbox',
      facet: 'data',
      summary:
        'Decode a VIN from NHTSA vPIC: year, make, model, trim, body, engine, plant and more; ' +
        'the same answer as the keyless GET /decode/{vin}, with account context and metering.',
      request: vinRequired,
      answer: 'VehicleDecode@1',
      value: z.object({ decode: decodeRecord, sources: decodeSources }),
      events: [],
      price: price.metered('0.00', 'decode'),
    },
  },
});
