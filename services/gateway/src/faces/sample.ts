// A sample input for a capability, derived from its request JSON Schema: field examples first, then the
// first enum value, then a type-shaped placeholder. Only required fields are filled, plus `vin` when offered.
export const SUITE_VIN = '1HGCM82633A004352';

type Schema = Record<string, any>;

function sampleOf(s: Schema, key?: string): unknown {
  if (key === 'vin') return SUITE_VIN;
  if (s.example !== undefined) return s.example;
  if (Array.isArray(s.examples) && s.examples.length) return s.examples[0];
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
  if (s.default !== undefined) return s.default;
  const alt = s.anyOf ?? s.oneOf;
  if (Array.isArray(alt) && alt.length) return sampleOf(alt.find((a: Schema) => a.type !== 'null') ?? alt[0], key);
  switch (s.type) {
    case 'object':
      return sampleObject(s);
    case 'array':
      return s.minItems ? [sampleOf(s.items ?? {})] : [];
    case 'integer':
      return Math.max(1, s.minimum ?? 1);
    case 'number':
      return Math.max(1, s.minimum ?? 1);
    case 'boolean':
      return true;
    case 'string':
      if (s.format === 'email') return 'buyer@example.com';
      if (s.format === 'uri' || s.format === 'url') return 'https://example.com/hook';
      if (s.format === 'date') return '2026-01-15';
      if (s.format === 'date-time') return '2026-01-15T12:00:00.000Z';
      return 'x'.repeat(Math.max(1, s.minLength ?? 6)).replace(/^x{6}/, 'sample');
    default:
      return {};
  }
}

function sampleObject(s: Schema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const req = new Set<string>(s.required ?? []);
  for (const [k, v] of Object.entries<Schema>(s.properties ?? {}))
    if (req.has(k) || k === 'vin') out[k] = sampleOf(v, k);
  return out;
}

export function sampleInput(requestSchema: Schema): Record<string, unknown> {
  return sampleObject(requestSchema);
}
