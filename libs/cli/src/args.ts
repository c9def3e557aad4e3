import { jsonSchemaOf, type Capability } from '@vcs/contract';

export interface Parsed { positional: string[]; flags: Record<string, string> }

/** `--name value` and `--name=value`; a flag with no value is "true". */
export function parseArgs(argv: string[]): Parsed {
  const positional: string[] = [];
  const flags: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) { positional.push(a); continue; }
    const eq = a.indexOf('=');
    if (eq > 0) { flags[a.slice(2, eq)] = a.slice(eq + 1); continue; }
    const next = argv[i + 1];
    if (next !== undefined && !next.startsWith('--')) { flags[a.slice(2)] = next; i++; } else flags[a.slice(2)] = 'true';
  }
  return { positional, flags };
}

/** Turn `--param value` strings into the request's types, read from the catalog's request JSON schema. */
export function paramsFor(cap: Capability, flags: Record<string, string>): Record<string, unknown> {
  const props = (jsonSchemaOf(cap.request, 'input').properties ?? {}) as Record<string, { type?: string }>;
  const out: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(flags)) {
    const t = props[name]?.type;
    if (t && t !== 'string') {
      try { out[name] = JSON.parse(raw); continue; } catch { /* sent as text; the service says what to fix */ }
    }
    out[name] = raw;
  }
  return out;
}
