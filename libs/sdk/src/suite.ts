// The acceptance suite, runnable wherever the SDK runs (Node, browsers, the MCP exec isolate): fetch the
// digest-pinned /suite.json and run its cases through the SDK's client. Checks answer kind, HTTP-level code and
// the OK value's required members; a full JSON Schema validation is the service's own test (test/suite.test.ts).
import { clientOf, TransportError, type CallOptions, type Client } from './runtime.ts';

export interface SuiteCaseResult {
  id: string;
  capability: string;
  passed: boolean;
  skipped?: string;
  why?: string;
}
export interface SuiteRun {
  digest: string;
  passed: number;
  failed: number;
  skipped: number;
  results: SuiteCaseResult[];
}

interface SuiteCase {
  id: string;
  capability: string;
  method: 'GET' | 'POST';
  path: string;
  auth: 'key' | 'none';
  input: Record<string, unknown>;
  trigger?: string;
  expect: { kind: string; status: number; code?: string; valueSchema?: { required?: string[] } };
}

/** Cases that would spend the calling key (rotate supersedes it, revoke ends it) are skipped, never run. */
const SPENDS_THE_KEY = new Set(['apiKey.rotate', 'apiKey.revoke']);

export async function runAcceptanceSuite(
  opts: CallOptions & { capabilities?: string[]; client?: Client } = {},
): Promise<SuiteRun> {
  const client = clientOf(opts);
  const suite = (await client.request('GET', '/suite.json', {}, opts)) as {
    digest: string;
    capabilities: { capability: string; cases: SuiteCase[] }[];
  };
  if (!suite || !Array.isArray(suite.capabilities)) throw new TransportError('/suite.json is not an acceptance suite');
  const wanted = opts.capabilities ? new Set(opts.capabilities) : undefined;
  const results: SuiteCaseResult[] = [];
  for (const cap of suite.capabilities) {
    if (wanted && !wanted.has(cap.capability)) continue;
    for (const c of cap.cases) {
      if (SPENDS_THE_KEY.has(c.capability) && c.auth === 'key') {
        results.push({ id: c.id, capability: c.capability, passed: false, skipped: 'would spend the calling key' });
        continue;
      }
      const headers: Record<string, string> = { ...(opts.headers ?? {}) };
      if (c.trigger) headers['sandbox-trigger'] = c.trigger;
      // Cases that must be anonymous ask the transport to drop the key (the exec bridge honours it; dropping authority
      // is always safe).
      if (c.auth === 'none') headers['x-vcs-anonymous'] = '1';
      const a = (await client.request(c.method, c.path, c.input, { ...opts, headers })) as {
        type?: string;
        value?: Record<string, unknown>;
      };
      results.push({ id: c.id, capability: c.capability, ...verdict(c, a) });
    }
  }
  const ran = results.filter((r) => !r.skipped);
  return {
    digest: suite.digest,
    passed: ran.filter((r) => r.passed).length,
    failed: ran.filter((r) => !r.passed).length,
    skipped: results.length - ran.length,
    results,
  };
}

function verdict(
  c: SuiteCase,
  a: { type?: string; value?: Record<string, unknown> },
): { passed: boolean; why?: string } {
  if (a?.type !== c.expect.kind) return { passed: false, why: `kind ${a?.type}, expected ${c.expect.kind}` };
  if (c.expect.code && a.value?.code !== c.expect.code)
    return { passed: false, why: `code ${String(a.value?.code)}, expected ${c.expect.code}` };
  const missing = (c.expect.valueSchema?.required ?? []).filter((k) => !(a.value && k in a.value));
  if (missing.length) return { passed: false, why: `value lacks ${missing.join(', ')}` };
  return { passed: true };
}
