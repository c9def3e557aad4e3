import Ajv2020Module from 'ajv/dist/2020.js';
import { mintKey } from './harness.ts';

// The acceptance suite, run the way any outsider would: fetch /suite.json, call each case over HTTP.
const Ajv2020 = (Ajv2020Module as any).default ?? Ajv2020Module;

export interface CaseResult {
  id: string;
  capability: string;
  passed: boolean;
  why?: string;
  status: number;
}

export async function runSuite(baseUrl: string) {
  const suite = await (await fetch(`${baseUrl}/suite.json`)).json();
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
  const results: CaseResult[] = [];
  for (const cap of suite.capabilities) {
    for (const c of cap.cases) results.push(await runCase(baseUrl, ajv, c));
  }
  const byCapability = new Map<string, { digest: string; passed: boolean }>();
  for (const cap of suite.capabilities) {
    byCapability.set(cap.capability, {
      digest: cap.digest,
      passed: results.filter((r) => r.capability === cap.capability).every((r) => r.passed),
    });
  }
  return { suite, results, byCapability };
}

async function runCase(baseUrl: string, ajv: any, c: any): Promise<CaseResult> {
  const headers: Record<string, string> = {};
  // A fresh key per case: some cases (rotate, revoke) spend the key they are called with.
  if (c.auth === 'key') headers.authorization = `Bearer ${(await mintKey(baseUrl)).key}`;
  if (c.trigger) headers['sandbox-trigger'] = c.trigger;
  let url = baseUrl + c.path;
  let body: string | undefined;
  if (c.method === 'GET') {
    const qs = new URLSearchParams(Object.entries(c.input).map(([k, v]) => [k, String(v)])).toString();
    if (qs) url += `?${qs}`;
  } else {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(c.input);
  }
  const r = await fetch(url, { method: c.method, headers, body });
  const text = await r.text();
  const fail = (why: string): CaseResult => ({
    id: c.id,
    capability: c.capability,
    passed: false,
    why,
    status: r.status,
  });
  let a: any;
  try {
    a = JSON.parse(text);
  } catch {
    return fail(`not JSON: ${text.slice(0, 80)}`);
  }
  if (r.status !== c.expect.status)
    return fail(`status ${r.status}, expected ${c.expect.status} (${a?.value?.code ?? a?.type})`);
  // An OFFER case checks the 402 only (the offer's body is the money suites' to check).
  if (c.expect.kind === 'OFFER') return { id: c.id, capability: c.capability, passed: true, status: r.status };
  if (a.type !== c.expect.kind) return fail(`kind ${a.type}, expected ${c.expect.kind}`);
  if (c.expect.code && a.value?.code !== c.expect.code) return fail(`code ${a.value?.code}, expected ${c.expect.code}`);
  if (c.expect.valueSchema && !ajv.validate(c.expect.valueSchema, a.value))
    return fail(`value does not match its schema: ${ajv.errorsText()}`);
  return { id: c.id, capability: c.capability, passed: true, status: r.status };
}
