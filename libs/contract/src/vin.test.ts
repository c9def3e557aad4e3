import { describe, expect, it } from 'vitest';
import { jsonSchemaOf } from './catalog.ts';
import { normaliseVin, vin, VIN_PATTERN, vinProblem } from './vin.ts';

const VALID = ['1HGCM82633A004352', 'KM8K2CAB4PU001140', '11111111111111111', '1M8GDM9AXKP042788'];
const pattern = new RegExp(VIN_PATTERN);
/** ASCII, plus what Unicode case mapping and trimming treat specially. */
const CHARS = [
  ...Array.from({ length: 128 }, (_, i) => String.fromCharCode(i)),
  ...['ſ', 'ı', 'ß', 'ﬀ', 'Ａ', 'é', 'K', '\u00a0', '\ufeff', '\u2028', '\u3000'],
];

/** Every VIN with one character replaced, padded, cut or lengthened. */
function* candidates() {
  for (const v of VALID) {
    yield v;
    yield v.toLowerCase();
    yield v.slice(1);
    yield v + '1';
    for (let i = 0; i < 17; i++) for (const c of CHARS) yield v.slice(0, i) + c + v.slice(i + 1);
    for (const c of CHARS) yield c + v + c;
  }
}

describe('the VIN rule as JSON Schema', () => {
  it('allows what the service accepts and refuses the rest, but for the check digit arithmetic', () => {
    let allowed = 0;
    for (const s of candidates()) {
      const p = vinProblem(normaliseVin(s));
      const accepts = vin.safeParse(s).success;
      // The pattern holds every rule but the check digit's arithmetic: its place holds a digit or X.
      const shaped = p === null || (p.rule === 'check-digit' && /[0-9X]/.test(p.found));
      expect(pattern.test(s), JSON.stringify(s)).toBe(shaped);
      // The body schema accepts what the pattern allows when the check digit is right, and nothing else.
      expect(accepts, JSON.stringify(s)).toBe(pattern.test(s) && p === null);
      if (accepts) allowed++;
    }
    expect(allowed).toBeGreaterThan(100);
  });

  it('is in the JSON Schema of every vin member', () => {
    expect(jsonSchemaOf(vin, 'input')).toMatchObject({ type: 'string', pattern: VIN_PATTERN, minLength: 17 });
  });
});
