import { normaliseVin, vinProblem, type VinProblem } from '@vcs/contract';
import { Seeded, centsToDecimal, sandboxDate } from '@vcs/sandbox';

// Foundation version: the keyless-faces issue brings the WMI table, make/model data and full decode.
const YEAR_CODES = 'ABCDEFGHJKLMNPRSTVWXY123456789';

/** Model year from position 10, the 30-year cycle resolved by position 7 (a letter there means 2010 or later). */
export function modelYear(vin: string): number {
  const i = YEAR_CODES.indexOf(vin[9]!);
  const base = 1980 + i;
  return /[A-Z]/.test(vin[6]!) ? base + 30 : base;
}

export type DecodeResult = { ok: true; decode: Record<string, any> } | { ok: false; problem: VinProblem };

export function decodeVin(raw: string): DecodeResult {
  const vin = normaliseVin(raw);
  const problem = vinProblem(vin);
  if (problem) return { ok: false, problem };
  const s = new Seeded(vin, 'decode');
  const msrpCents = s.int(22_000, 48_000) * 100;
  return {
    ok: true,
    decode: {
      vin, year: modelYear(vin), make: 'Unknown', model: 'Unknown',
      retailValue: centsToDecimal(Math.round(msrpCents * 0.62)), msrp: centsToDecimal(msrpCents), priceCurrency: 'USD',
      trim: { name: 'Base', simulated: true }, body: { style: 'Sedan', doors: 4 }, engine: { description: '2.4L I4' },
      odometer: { value: s.int(5_000, 120_000), unit: 'mi', asOf: sandboxDate(), simulated: true },
    },
  };
}
