import { describe, expect, it } from 'vitest';
import { expectedCheckDigit } from '@vcs/contract';
import { countryOf, decodeVin, modelYear, regionOf, wmiTable } from './index.ts';

// Published VINs (NHTSA examples and public listings); their check digits are verified below, not assumed.
const published = [
  { vin: '1HGCM82633A004352', year: 2003, make: 'Honda', model: 'Accord', country: 'United States' },
  { vin: '1M8GDM9AXKP042788', year: 1989, make: 'MCI', model: 'Unknown', country: 'United States' },
  { vin: '1B3BR65EXSV201546', year: 1995, make: 'Dodge', model: 'Unknown', country: 'United States' },
  { vin: 'KM8K2CAB4PU001140', year: 2023, make: 'Hyundai', model: 'Kona', country: 'South Korea' },
];

describe('VIN decoding', () => {
  it.each(published)('decodes $vin', ({ vin, year, make, model, country }) => {
    expect(expectedCheckDigit(vin)).toBe(vin[8]);
    const r = decodeVin(vin.toLowerCase());
    if (!r.ok) throw new Error(r.problem.message);
    expect(r.decode).toMatchObject({ vin, year, make, model });
    expect(r.decode.encoded).toMatchObject({ country, plantCode: vin[10], serial: vin.slice(11), checkDigit: vin[8] });
  });

  it('resolves the 30-year cycle by position 7', () => {
    expect(modelYear('1HGCM82633A004352')).toBe(2003);
    expect(modelYear('KM8K2CAB4PU001140')).toBe(2023);
    expect(modelYear('1M8GDM9AXKP042788')).toBe(1989);
  });

  it('names the rule a bad VIN breaks', () => {
    expect(decodeVin('1HGCM82633A00435')).toMatchObject({ ok: false, problem: { rule: 'length' } });
    expect(decodeVin('1HGCM82633A0O4352')).toMatchObject({ ok: false, problem: { rule: 'forbidden-character', position: 13 } });
    expect(decodeVin('1HGCM82643A004352')).toMatchObject({ ok: false, problem: { rule: 'check-digit', expected: '3', found: '4' } });
  });

  it('is deterministic and simulates only what a VIN cannot carry', () => {
    const a = decodeVin('1HGCM82633A004352');
    const b = decodeVin('1HGCM82633A004352');
    expect(a).toEqual(b);
    if (!a.ok) throw new Error('bad');
    expect(a.decode.odometer.simulated).toBe(true);
    expect(a.simulated).toContain('msrp');
  });

  it('maps regions and countries from the first two characters', () => {
    expect(regionOf('W')).toBe('Europe');
    expect(countryOf('W', 'V')).toBe('Germany');
    expect(countryOf('2', 'H')).toBe('Canada');
    expect(countryOf('J', 'T')).toBe('Japan');
    expect(wmiTable.size).toBeGreaterThan(250);
    for (const w of wmiTable.keys()) expect(w).toMatch(/^[A-HJ-NPR-Z0-9]{3}$/);
  });
});
