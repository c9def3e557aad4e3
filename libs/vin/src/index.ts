import { normaliseVin, vinProblem, type VinProblem } from '@vcs/contract';
import { SANDBOX_TODAY, Seeded, centsToDecimal, sandboxDate } from '@vcs/sandbox';
import { modelOf } from './models.ts';
import { countryOf, regionOf } from './regions.ts';
import { wmiTable } from './wmi.ts';

export { wmiTable, type WmiEntry } from './wmi.ts';
export { regionOf, countryOf } from './regions.ts';

export const DECODER_SOURCE = 'vin-decoder@0.2.0';
const YEAR_CODES = 'ABCDEFGHJKLMNPRSTVWXY123456789';

/**
 * Model year from position 10. The code repeats every 30 years; North American VINs resolve the cycle
 * with position 7: a letter there means 2010 or later, a digit means 1980–2009.
 */
export function modelYear(vin: string): number {
  const i = YEAR_CODES.indexOf(vin[9]!);
  const base = 1980 + i;
  return /[A-Z]/.test(vin[6]!) ? base + 30 : base;
}

/** What the 17 characters themselves say: real, no simulation. */
export function encodedParts(vin: string) {
  const wmi = vin.slice(0, 3);
  const entry = wmiTable.get(wmi);
  return {
    wmi,
    region: regionOf(vin[0]!),
    country: countryOf(vin[0]!, vin[1]!),
    manufacturer: entry?.manufacturer ?? 'Unknown',
    vds: vin.slice(3, 8),
    checkDigit: vin[8]!,
    yearCode: vin[9]!,
    plantCode: vin[10]!,
    serial: vin.slice(11),
  };
}

/** Fields of the decode the VIN cannot carry: simulated deterministically from the VIN. */
export const SIMULATED_FIELDS = ['retailValue', 'msrp', 'trim', 'engine', 'odometer'] as const;

export type DecodeResult = { ok: true; decode: Record<string, any>; real: string[]; simulated: string[] } | { ok: false; problem: VinProblem };

export function decodeVin(raw: string): DecodeResult {
  const vin = normaliseVin(raw);
  const problem = vinProblem(vin);
  if (problem) return { ok: false, problem };
  const parts = encodedParts(vin);
  const year = modelYear(vin);
  const known = modelOf(vin);
  const s = new Seeded(vin, 'decode');
  const msrpCents = s.int(22_000, 48_000) * 100;
  // Straight-line-ish depreciation by age against the sandbox's fixed today, floored at 8 % of MSRP.
  const age = Math.max(0, Number(SANDBOX_TODAY.slice(0, 4)) - year);
  const retailCents = Math.round(msrpCents * Math.max(0.08, 0.85 ** age));
  const bodyStyle = known?.body ?? s.pick(['Sedan', 'SUV', 'Pickup', 'Hatchback', 'Coupe']);
  const real = ['vin', 'year', 'make', 'encoded', ...(known ? ['model', 'body.style'] : [])];
  return {
    ok: true,
    real,
    simulated: [...SIMULATED_FIELDS, ...(known ? [] : ['body'])],
    decode: {
      vin, year,
      make: wmiTable.get(parts.wmi)?.make ?? 'Unknown',
      model: known?.model ?? 'Unknown',
      retailValue: centsToDecimal(retailCents), msrp: centsToDecimal(msrpCents), priceCurrency: 'USD',
      trim: { name: s.pick(['Base', 'LX', 'EX', 'Sport', 'Limited']), simulated: true },
      body: { style: bodyStyle, doors: bodyStyle === 'Coupe' ? 2 : 4, simulated: !known },
      engine: { description: s.pick(['2.0L I4', '2.4L I4', '3.5L V6', '5.0L V8', 'Electric']), simulated: true },
      odometer: { value: Math.min(age * s.int(8_000, 14_000) + s.int(5, 900), 400_000), unit: 'mi', asOf: sandboxDate(), simulated: true },
      encoded: parts,
    },
  };
}

/** The provenance block of a decode: what is real, what is simulated, and from where. */
export function decodeProvenance(r: Extract<DecodeResult, { ok: true }>) {
  return { simulated: true, environment: 'sandbox' as const, source: DECODER_SOURCE, real: r.real, simulatedFields: r.simulated, data: 'WMI and model tables shipped with the service (offline)' };
}
