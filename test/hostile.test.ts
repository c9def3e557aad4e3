import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { blockedCodes, capabilities, type Capability } from '@vcs/contract';
import { LIMITS } from '../services/gateway/src/app.ts';
import { startHarness, type Harness } from './support/harness.ts';
import { rawRequest, type RawAnswer } from './support/raw-http.ts';

/**
 * Hostile input, generated: every catalog route and the platform routes get wrong types, missing and
 * extra members, huge and deep JSON, malformed JSON, wrong content types, odd Unicode and NUL bytes,
 * oversize headers and query strings. Every answer must be a typed 4xx (or a normal answer when the
 * generator happens to produce valid input) and never a 5xx; the process must keep answering.
 */
const VIN = '1HGCM82633A004352';
const RUNS = Number(process.env.HOSTILE_RUNS ?? 100);
const platformRoutes = [
  ['POST', '/keys'],
  ['GET', '/healthz'],
  ['GET', '/readyz'],
  ['GET', '/metrics'],
] as const;

function expectTyped(r: RawAnswer, what: string) {
  if (r.status >= 500) throw new Error(`${what} → ${r.status} ${r.body.slice(0, 300)}`);
  if (r.status >= 400) {
    // An OFFER (402) is a typed answer too: input that parses (the JSON parser drops __proto__) meets the offer gate.
    if (r.status === 402 && r.json?.type === 'OFFER' && r.json?.value?.code === 'payment-required') return;
    if (r.json?.type !== 'BLOCKED' || typeof r.json?.value?.code !== 'string' || !(r.json.value.code in blockedCodes)) {
      throw new Error(`${what} → ${r.status} without a typed BLOCKED envelope: ${r.body.slice(0, 300)}`);
    }
    expect(typeof r.json.value.message).toBe('string');
  }
}

const capArb = fc.constantFrom(...capabilities);
/** Text a hostile caller might send: lone surrogates, RTL marks, NULs, emoji, control characters. */
const oddText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '\u0000',
    `${VIN}\u0000`,
    '\u202e' + VIN,
    '\ud800',
    'Ｖ'.repeat(17),
    '😀'.repeat(17),
    ' ',
    '%00',
    '../../etc/passwd',
    '{"$ne":null}',
    `'; drop table accounts; --`,
    VIN.toLowerCase() + '\t',
  ),
);
const wrongTypes = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 3 }),
  oddText,
);
const contentTypes = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  '',
  'application/json; charset=latin1',
  'APPLICATION/JSON',
  '*/*',
);

/** A body: the capability's fields with wrong types, some dropped, some extra members. */
function bodyArb(c: Capability) {
  const fields = Object.keys((c.request as any).shape ?? { vin: 1 });
  return fc
    .record({
      drop: fc.subarray(fields),
      wrong: fc.dictionary(fc.constantFrom(...(fields.length ? fields : ['vin'])), wrongTypes, { maxKeys: 4 }),
      extra: fc.dictionary(fc.string({ unit: 'binary', maxLength: 12 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 3 }),
    })
    .map(({ drop, wrong, extra }) => {
      const base: Record<string, unknown> = { vin: VIN };
      for (const f of fields) if (!drop.includes(f)) base[f] = f === 'vin' ? VIN : 'x';
      return { ...extra, ...base, ...wrong };
    });
}

function pathOf(c: Capability) {
  return c.path.replace(/:(\w+)/g, 'x');
}
/** Percent-encode every byte (lone surrogates included, which encodeURIComponent refuses). */
const enc = (s: string) => [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

describe('hostile input (embedded)', { timeout: 60_000 }, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('embedded');
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('answers generated bodies and query strings with a typed 4xx, never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(capArb, fc.gen(), async (c, g) => {
        const body = g(() => bodyArb(c));
        const key = g(() =>
          fc.option(
            fc.oneof(
              fc.constant('vcs_sk_test_nope'),
              oddText.map((s) => s.replace(/[\r\n\u0000]/g, '')),
            ),
            { nil: undefined },
          ),
        );
        const trigger = g(() =>
          fc.option(fc.constantFrom('fail', 'blocked', 'empty', 'nonsense', '\u00ff'), { nil: undefined }),
        );
        const headers: Record<string, string> = {};
        if (key !== undefined) headers.authorization = `Bearer ${key}`;
        if (trigger !== undefined) headers['sandbox-trigger'] = trigger;
        let r: RawAnswer;
        if (c.method === 'GET') {
          const qs = Object.entries(body)
            .map(([k, v]) => `${enc(k)}=${enc(typeof v === 'string' ? v : (JSON.stringify(v) ?? ''))}`)
            .join('&');
          r = await rawRequest(h.baseUrl, 'GET', `${pathOf(c)}?${qs}`, headers);
        } else {
          headers['content-type'] = g(() => contentTypes);
          r = await rawRequest(h.baseUrl, c.method, pathOf(c), headers, JSON.stringify(body));
        }
        expectTyped(r, `${c.method} ${c.path}`);
      }),
      { numRuns: RUNS * 3 },
    );
  });

  it('answers malformed, deep and odd JSON with a typed 4xx', async () => {
    const posts = capabilities.filter((c) => c.method === 'POST');
    const deep = fc.integer({ min: LIMITS.jsonDepth, max: 20_000 }).map((n) => '['.repeat(n) + ']'.repeat(n));
    const deepObj = fc
      .integer({ min: LIMITS.jsonDepth, max: 5_000 })
      .map((n) => '{"a":'.repeat(n) + '1' + '}'.repeat(n));
    const malformed = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 200 }),
      fc.constantFrom(
        '{',
        '{"vin":',
        '[1,2',
        '{"vin":"\u0000"}',
        'null',
        '"str"',
        '1e999999',
        '{"__proto__":{"admin":true}}',
        '{"constructor":{"prototype":{}}}',
        '\ufeff{}',
        'true',
      ),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...posts), fc.oneof(deep, deepObj, malformed), async (c, text) => {
        const r = await rawRequest(h.baseUrl, 'POST', pathOf(c), { 'content-type': 'application/json' }, text);
        expectTyped(r, `POST ${c.path} ${text.slice(0, 40)}`);
        if (text.startsWith('[['.repeat(LIMITS.jsonDepth / 2 + 1))) expect(r.json.value.code).toBe('malformed-json');
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it('answers odd paths, NUL bytes and raw Unicode in the request line with a typed 4xx', async () => {
    const segment = fc.oneof(
      oddText.map(enc),
      fc.constantFrom('%00', '%ff', '%', '..', '%2e%2e', '\u0000', 'é', '😀', '\ud83d', ' ', '\t'),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...capabilities.map(pathOf), ...platformRoutes.map((p) => p[1])),
        segment,
        fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'BREW'),
        async (path, seg, method) => {
          for (const target of [`${path}/${seg}`, `${path}?vin=${seg}`, `/${seg}`]) {
            const r = await rawRequest(h.baseUrl, method, Buffer.from(target, 'utf8'), {});
            expectTyped(r, `${method} ${JSON.stringify(target)}`);
          }
        },
      ),
      { numRuns: RUNS },
    );
  });

  // The id routes: a generated segment in the id's place, with a key so the request reaches the pillar behind it.
  const idRoutes = [
    ['GET', '/intents/:id'],
    ['POST', '/intents/:id/settle'],
    ['GET', '/handoffs/:id'],
    ['POST', '/handoffs/:id/complete'],
    ['GET', '/buy/deals/:id'],
    ['POST', '/buy/deals/:id/advance'],
  ] as const;
  it('answers odd ids on the intent, handoff and deal routes with a typed 4xx', async () => {
    const key = ((await (await fetch(`${h.baseUrl}/keys`, { method: 'POST' })).json()) as { key: string }).key;
    const id = fc.oneof(
      oddText.map(enc),
      fc.constantFrom('%00', '%E2%82%AC', '%25zz', 'pi_%00', 'deal_%0a', 'ho_' + 'a'.repeat(300)),
      fc.string({ unit: 'binary', maxLength: 30 }).map(enc),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...idRoutes), id, async ([method, route], seg) => {
        const r = await rawRequest(
          h.baseUrl,
          method,
          route.replace(':id', seg),
          { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          method === 'POST' ? '{}' : undefined,
        );
        expectTyped(r, `${method} ${route} ${seg}`);
      }),
      { numRuns: RUNS },
    );
  });

  // What an outside fuzzer found, kept as a fixed corpus so these inputs are tried on every run.
  it.each([
    ['GET', '/intents/%00', 404, 'intent-not-found'],
    ['GET', '/handoffs/%00', 404, 'handoff-not-found'],
    ['GET', '/buy/deals/%00', 404, 'deal-not-found'],
    ['POST', '/buy/deals/%00/advance', 404, 'deal-not-found'],
    ['POST', '/handoffs/%00/complete', 404, 'handoff-not-found'],
    ['POST', '/intents/%E2%82%AC/settle', 404, 'intent-not-found'],
    ['GET', '/decode/%25zz', 400, 'invalid-vin'],
    ['GET', '/%25zz', 404, 'not-found'],
    ['GET', '/signings/%25zz', 404, 'not-found'],
    ['GET', `/decode/${'A'.repeat(250)}`, 404, 'not-found'],
    ['GET', `/intents/pi_${'a'.repeat(250)}`, 404, 'not-found'],
  ] as const)('%s %s → %i %s', async (method, path, status, code) => {
    const key = ((await (await fetch(`${h.baseUrl}/keys`, { method: 'POST' })).json()) as { key: string }).key;
    const r = await rawRequest(
      h.baseUrl,
      method,
      path,
      { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      method === 'POST' ? '{"outcome":"completed","credential":"notary"}' : undefined,
    );
    expectTyped(r, `${method} ${path}`);
    expect([r.status, r.json.value.code]).toEqual([status, code]);
  });

  it('answers GET /keys with 405 and the method that mints', async () => {
    const r = await rawRequest(h.baseUrl, 'GET', '/keys');
    expect(r.status).toBe(405);
    expect(r.headers.allow).toBe('POST');
    expect(r.json.value).toMatchObject({ code: 'method-not-allowed', mint: { method: 'POST', path: '/keys' } });
  });

  it('names an unknown query parameter as its own field, and refuses a key in the query string with a pointer to the header', async () => {
    const r = await rawRequest(h.baseUrl, 'GET', `/signings/status?vin=${VIN}&vinn=x`);
    expect(r.status).toBe(400);
    expect(r.json.value.problems).toEqual([
      { field: 'vinn', in: 'query', message: expect.stringContaining('"vinn" is not a parameter') },
    ]);
    const k = await rawRequest(h.baseUrl, 'GET', `/signings/status?vin=${VIN}&key=vcs_sk_test_x`);
    expect(k.status).toBe(400);
    expect(k.json.value.message).toMatch(/not accepted in the query string.*Authorization: Bearer/);
    expect(k.json.value.problems).toEqual([{ field: 'key', in: 'query', message: expect.any(String) }]);
  });

  it('answers oversize headers, oversize query strings and oversize bodies with a typed 4xx', async () => {
    await fc.assert(
      fc.asyncProperty(capArb, fc.integer({ min: LIMITS.headerBytes, max: LIMITS.headerBytes * 8 }), async (c, n) => {
        const hdr = await rawRequest(h.baseUrl, c.method, pathOf(c), { 'x-junk': 'a'.repeat(n) });
        expectTyped(hdr, 'oversize header');
        expect(hdr.status).toBe(431);
        expect(hdr.json.value.code).toBe('headers-too-large');
        const qs = await rawRequest(h.baseUrl, 'GET', `${pathOf(c)}?vin=${'A'.repeat(n)}`, {});
        expectTyped(qs, 'oversize query string');
        const many = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`x-h${i}`, 'v'.repeat(n / 200)]));
        expectTyped(await rawRequest(h.baseUrl, c.method, pathOf(c), many), 'many headers');
      }),
      { numRuns: 8 },
    );
    const big = await rawRequest(
      h.baseUrl,
      'POST',
      '/deals/open',
      { 'content-type': 'application/json' },
      JSON.stringify({ vin: 'x'.repeat(LIMITS.bodyBytes + 10) }),
    );
    expectTyped(big, 'oversize body');
    expect(big.json.value.code).toBe('payload-too-large');
    const nulHeader = await rawRequest(h.baseUrl, 'GET', `/signings/status?vin=${VIN}`, {
      'x-api-key': Buffer.from([0x61, 0x00, 0x62]),
    });
    expectTyped(nulHeader, 'NUL in a header value');
  });

  it('is still alive and answering after all of the above', async () => {
    const alive = await rawRequest(h.baseUrl, 'GET', '/healthz');
    expect(alive.status).toBe(200);
    const ok = await rawRequest(h.baseUrl, 'GET', `/signings/status?vin=${VIN}`);
    expect(ok.status).toBe(200);
    expect(ok.json.type).toBe('OK');
  });
});
