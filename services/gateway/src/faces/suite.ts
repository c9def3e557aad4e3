import { createHash } from 'node:crypto';
import { canonicalJson, capabilities, catalogDigest, jsonSchemaOf, type Capability } from '@vcs/contract';
import { sampleInput } from './sample.ts';

/** One case of the acceptance suite: call `method path` with `input` (and trigger), expect this answer. */
export interface SuiteCase {
  id: string;
  capability: string;
  method: 'GET' | 'POST';
  path: string;
  /** `key`: send a freshly minted key; `none`: call anonymously. */
  auth: 'key' | 'none';
  input: Record<string, unknown>;
  trigger: string | null;
  expect: {
    kind: 'OK' | 'EMPTY' | 'BLOCKED' | 'OFFER';
    status: number;
    code?: string;
    valueSchema?: Record<string, unknown>;
  };
}

const sha = (v: unknown) => 'sha256:' + createHash('sha256').update(canonicalJson(v)).digest('hex');

/** The cases every capability must pass to be live; all derived from its catalog entry. */
export function casesOf(c: Capability): SuiteCase[] {
  const request = jsonSchemaOf(c.request, 'input');
  const input = sampleInput(request);
  const base = { capability: c.name, method: c.method, path: c.path, input, trigger: null };
  const cases: SuiteCase[] = [];
  const auth = c.gate === 'none' ? 'none' : 'key';
  if (c.gate === 'offer') cases.push({ ...base, id: `${c.name}:offer`, auth, expect: { kind: 'OFFER', status: 402 } });
  else if (c.gate === 'human')
    cases.push({ ...base, id: `${c.name}:human`, auth, expect: { kind: 'BLOCKED', status: 403, code: 'NEEDS_HUMAN' } });
  else {
    cases.push({
      ...base,
      id: `${c.name}:ok`,
      auth,
      expect: { kind: 'OK', status: 200, valueSchema: jsonSchemaOf(c.value, 'output') },
    });
    cases.push({
      ...base,
      id: `${c.name}:trigger-empty`,
      auth,
      trigger: 'empty',
      expect: { kind: 'EMPTY', status: 200 },
    });
    cases.push({
      ...base,
      id: `${c.name}:trigger-blocked`,
      auth,
      trigger: 'blocked',
      expect: { kind: 'BLOCKED', status: 422, code: 'sandbox-blocked' },
    });
  }
  if (c.gate === 'key')
    cases.push({
      ...base,
      id: `${c.name}:key-required`,
      auth: 'none',
      expect: { kind: 'BLOCKED', status: 401, code: 'key-required' },
    });
  if ((request.properties as Record<string, unknown> | undefined)?.vin) {
    cases.push({
      ...base,
      id: `${c.name}:invalid-vin`,
      auth,
      input: { ...input, vin: '1HGCM82643A004352' },
      expect: { kind: 'BLOCKED', status: 400, code: 'invalid-input' },
    });
  }
  return cases;
}

/** The digest of one capability's cases: a verdict recorded against it stays valid until the cases change. */
export const casesDigest = (cases: SuiteCase[]) => sha(cases);

let memo: ReturnType<typeof build> | undefined;
function build() {
  const body = {
    suite: 'vcs-acceptance',
    version: 1,
    catalogDigest: catalogDigest(),
    rules:
      'A capability is live only when every one of its cases passes: ' +
      'same answer kind, same HTTP status, same BLOCKED code, ' +
      'and an OK value valid against valueSchema (JSON Schema 2020-12). OFFER cases check the 402 only.',
    capabilities: capabilities.map((c) => {
      const cases = casesOf(c);
      return { capability: c.name, digest: casesDigest(cases), cases };
    }),
  };
  return { ...body, digest: sha(body) };
}

/** The whole suite, pinned by the sha256 of its canonical JSON (the document minus its own digest). */
export function suite() {
  memo ??= build();
  return memo;
}
