import { jsonSchemaOf, type Capability } from '@vcs/contract';

export interface Parsed {
  positional: string[];
  flags: Record<string, string>;
  /** `--header 'Name: value'`, in the order given: the one flag that may repeat. */
  headers: Record<string, string>;
  problems: string[];
}

/** Flags that take no value. */
export const SWITCHES = new Set(['json', 'pay']);

/** A header's name as HTTP allows it (a token), then a colon and its value. */
const HEADER = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*)$/;

/**
 * `--name value` and `--name=value`; only a switch (`--json`) stands alone. A value-taking flag with nothing after
 * it is a problem to report, not the string "true" sent to the service.
 */
export function parseArgs(argv: string[]): Parsed {
  const positional: string[] = [];
  const flags: Record<string, string> = {};
  const headers: Record<string, string> = {};
  const problems: string[] = [];
  const take = (name: string, value: string) => {
    if (name !== 'header') return void (flags[name] = value);
    const m = HEADER.exec(value);
    if (m) headers[m[1]!.toLowerCase()] = m[2]!.trim();
    else problems.push(`--header takes 'Name: value' (for example --header 'Sandbox-Trigger: empty'), not ${value}`);
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('--')) {
      positional.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    if (eq > 0) {
      take(a.slice(2, eq), a.slice(eq + 1));
      continue;
    }
    const name = a.slice(2);
    if (SWITCHES.has(name)) {
      flags[name] = 'true';
      continue;
    }
    const next = argv[i + 1];
    if (next !== undefined && !next.startsWith('--')) {
      take(name, next);
      i++;
    } else problems.push(`--${name} needs a value (--${name} <value> or --${name}=<value>)`);
  }
  return { positional, flags, headers, problems };
}

/** Turn `--param value` strings into the request's types, read from the catalog's request JSON schema. */
export function paramsFor(cap: Capability, flags: Record<string, string>): Record<string, unknown> {
  const props = (jsonSchemaOf(cap.request, 'input').properties ?? {}) as Record<string, { type?: string }>;
  const out: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(flags)) {
    const t = props[name]?.type;
    if (t && t !== 'string') {
      try {
        out[name] = JSON.parse(raw);
        continue;
      } catch {
        /* sent as text; the service says what to fix */
      }
    }
    out[name] = raw;
  }
  return out;
}
