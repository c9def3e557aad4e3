import { z } from 'zod';

// ISO 3779 / 49 CFR 565 rules, shared by every schema that takes a VIN and by the decoder.
const TRANSLITERATION: Record<string, number> = {
  A: 1,
  B: 2,
  C: 3,
  D: 4,
  E: 5,
  F: 6,
  G: 7,
  H: 8,
  J: 1,
  K: 2,
  L: 3,
  M: 4,
  N: 5,
  P: 7,
  R: 9,
  S: 2,
  T: 3,
  U: 4,
  V: 5,
  W: 6,
  X: 7,
  Y: 8,
  Z: 9,
};
const WEIGHTS = [8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2];

export function vinValue(ch: string): number {
  return ch >= '0' && ch <= '9' ? Number(ch) : (TRANSLITERATION[ch] ?? NaN);
}

/** The check digit (position 9) a VIN must carry: '0'-'9' or 'X'. */
export function expectedCheckDigit(vin: string): string {
  let sum = 0;
  for (let i = 0; i < 17; i++) sum += vinValue(vin[i]!) * WEIGHTS[i]!;
  const r = sum % 11;
  return r === 10 ? 'X' : String(r);
}

export type VinProblem =
  | { rule: 'length'; message: string }
  | { rule: 'forbidden-character'; message: string; character: string; position: number }
  | { rule: 'check-digit'; message: string; expected: string; found: string };

/** The first VIN rule a (normalised, upper-case) string breaks, or null. */
export function vinProblem(vin: string): VinProblem | null {
  if (vin.length !== 17) return { rule: 'length', message: `a VIN has 17 characters; this one has ${vin.length}` };
  for (let i = 0; i < 17; i++) {
    const ch = vin[i]!;
    if (!/[A-HJ-NPR-Z0-9]/.test(ch)) {
      const why = 'IOQ'.includes(ch) ? ' (I, O and Q are never used in VINs)' : '';
      return {
        rule: 'forbidden-character',
        message: `character ${JSON.stringify(ch)} at position ${i + 1} is not in the VIN alphabet${why}`,
        character: ch,
        position: i + 1,
      };
    }
  }
  const expected = expectedCheckDigit(vin);
  if (vin[8] !== expected) {
    return {
      rule: 'check-digit',
      message: `check digit at position 9 is ${vin[8]} but the VIN's characters require ${expected}`,
      expected,
      found: vin[8]!,
    };
  }
  return null;
}

/**
 * Whitespace around trimmed, ASCII letters upper-cased. Only ASCII: `toUpperCase` would turn `ſ` into `S` and `ß`
 * into `SS`, accepting what VIN_PATTERN (and so the OpenAPI document) refuses.
 */
export const normaliseVin = (v: string) => v.trim().replace(/[a-z]+/g, (s) => s.toUpperCase());

/**
 * What a VIN's JSON Schema allows: 17 characters of the VIN alphabet (either case; I, O and Q never), a digit or X
 * at position 9, whitespace around it trimmed. The check digit's arithmetic is beyond a pattern: the description
 * says so, and `vinProblem` refuses the rest.
 */
export const VIN_PATTERN = '^\\s*[A-HJ-NPR-Za-hj-npr-z0-9]{8}[0-9Xx][A-HJ-NPR-Za-hj-npr-z0-9]{8}\\s*$';

/** A VIN: 17 characters of the VIN alphabet with a valid check digit; lower case is accepted and normalised. */
export const vin = z
  .string()
  .max(64)
  .overwrite(normaliseVin)
  .check((ctx) => {
    const p = vinProblem(ctx.value);
    if (p)
      ctx.issues.push({
        code: 'custom',
        message: `invalid VIN (${p.rule}): ${p.message}`,
        input: ctx.value,
        params: p,
      });
  })
  .meta({
    description:
      'Vehicle identification number (17 characters, no I, O or Q, either case; the check digit at position 9 ' +
      'is verified: a wrong one is refused 400 invalid-vin)',
    pattern: VIN_PATTERN,
    minLength: 17,
    example: '1HGCM82633A004352',
  });
