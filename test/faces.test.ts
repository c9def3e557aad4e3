import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validate, compileErrors } from '@readme/openapi-parser';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { capabilities, nouns, namedNouns, priceShort, VIN_PATTERN } from '@vcs/contract';
import { call, mintKey, modes, startHarness, type Harness } from './support/harness.ts';
import { rawRequest } from './support/raw-http.ts';

const VIN = '1HGCM82633A004352';

describe.each(modes())('keyless faces and discovery (%s)', (mode) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(mode);
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('decodes a VIN offline: real year/make/model, simulated values said so; lower case accepted', async () => {
    const r = await call(h.baseUrl, 'GET', `/decode/${VIN.toLowerCase()}`);
    expect(r.status).toBe(200);
    expect(r.json.type).toBe('OK');
    expect(r.json.decode).toMatchObject({
      vin: VIN,
      year: 2003,
      make: 'Honda',
      model: 'Accord',
      priceCurrency: 'USD',
      retailValue: expect.stringMatching(/^\d+\.\d{2}$/),
      msrp: expect.stringMatching(/^\d+\.\d{2}$/),
    });
    expect(r.json.decode.odometer).toMatchObject({ simulated: true, unit: 'mi' });
    expect(r.json.provenance).toMatchObject({
      environment: 'sandbox',
      simulated: true,
      simulatedFields: expect.arrayContaining(['msrp', 'odometer']),
    });
    const kona = await call(h.baseUrl, 'GET', '/decode/KM8K2CAB4PU001140');
    expect(kona.json.decode).toMatchObject({ year: 2023, make: 'Hyundai', model: 'Kona' });
  });

  it('names the VIN rule a bad VIN breaks (400 invalid-vin)', async () => {
    const cd = await call(h.baseUrl, 'GET', '/decode/1HGCM82643A004352');
    expect(cd.status).toBe(400);
    expect(cd.json.value).toMatchObject({ code: 'invalid-vin', rule: 'check-digit', expected: '3' });
    expect((await call(h.baseUrl, 'GET', '/decode/1HGCM8263')).json.value.rule).toBe('length');
    expect((await call(h.baseUrl, 'GET', '/decode/1HGCM82633A0O4352')).json.value.rule).toBe('forbidden-character');
  });

  it('decodes from NHTSA vPIC in the data pillar: named facts, their source, and what is simulated', async () => {
    const r = await call(h.baseUrl, 'GET', `/decode/${VIN}`);
    expect(r.status).toBe(200);
    expect(r.json.decode).toMatchObject({
      vin: VIN,
      year: 2003,
      make: 'Honda',
      model: 'Accord',
      trim: { name: 'EX-V6' },
      body: { class: 'Coupe', doors: 2 },
      engine: { cylinders: 6, configuration: 'V-Shaped', model: 'J30A4' },
      fuel: { primary: 'Gasoline' },
      odometer: { simulated: true },
    });
    expect(r.json.provenance).toMatchObject({
      source: expect.stringMatching(/NHTSA vPIC/),
      simulatedFields: ['retailValue', 'msrp', 'odometer'],
    });
    expect(r.json.provenance.real).toEqual(expect.arrayContaining(['year', 'make', 'model', 'trim', 'body', 'engine']));
  });

  it('keyed vehicle.decode answers the same decode', async () => {
    const { key } = await mintKey(h.baseUrl);
    const keyed = await call(h.baseUrl, 'GET', `/vehicles/decode?vin=${VIN}`, { key });
    const keyless = await call(h.baseUrl, 'GET', `/decode/${VIN}`);
    expect(keyed.status).toBe(200);
    expect(keyed.json.value.decode).toEqual(keyless.json.decode);
  });

  it('the record holds posted facts and deals, with links, in JSON, Markdown and HTML', async () => {
    const { key } = await mintKey(h.baseUrl);
    await call(h.baseUrl, 'GET', `/signings/status?vin=${VIN}`);
    const deal = await call(h.baseUrl, 'POST', '/deals/open', { key, body: { workflow: 'buy', vin: VIN } });
    const r = await call(h.baseUrl, 'GET', `/${VIN}`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/application\/json/);
    expect(r.json.nouns.signing.facts.map((f: any) => f.capability)).toContain('signing.status');
    expect(r.json.deals.map((d: any) => d.id)).toContain(deal.json.value.dealId);
    expect(r.json.links).toMatchObject({
      deal: expect.stringMatching(/^\/buy\/deals\/deal_/),
      listing: `/decode/${VIN}`,
      nouns: expect.objectContaining({ signing: `/signings/${VIN}` }),
    });
    expect(JSON.stringify(r.json)).not.toMatch(/acct_/);
    const md = await call(h.baseUrl, 'GET', `/${VIN}`, { headers: { accept: 'text/markdown' } });
    expect(md.headers.get('content-type')).toMatch(/text\/markdown/);
    expect(md.text).toMatch(/^# 2003 Honda Accord/);
    expect(md.text).toContain('## signing');
    const html = await call(h.baseUrl, 'GET', `/${VIN}`, {
      headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
    });
    expect(html.headers.get('content-type')).toMatch(/text\/html/);
    expect(html.text).toContain('<title>2003 Honda Accord — VIN 1HGCM82633A004352</title>');
    expect(html.text).not.toMatch(/<script/i);
  });

  it('the root route does not shadow static routes and answers non-VINs with a typed 404', async () => {
    expect((await call(h.baseUrl, 'GET', '/catalog')).status).toBe(200);
    const nf = await call(h.baseUrl, 'GET', '/not-a-vin');
    expect(nf.status).toBe(404);
    expect(nf.json.value.code).toBe('not-found');
    expect((await call(h.baseUrl, 'GET', '/1HGCM82643A004352')).json.value.code).toBe('invalid-vin');
  });

  it('GET / answers the front door to an agent, the catalog to a program and a page to a browser, each with Link and Vary', async () => {
    const llms = (await call(h.baseUrl, 'GET', '/llms.txt')).text;
    const describedBy = (r: { headers: Headers }) => [r.headers.get('link'), r.headers.get('vary')];
    const LINK = ['</llms.txt>; rel="describedby"', 'Accept'];
    // Anything, Markdown, text, text of any kind, a browser's fetch default: the /llms.txt text.
    for (const [accept, type] of [
      ['*/*', 'text/markdown'],
      ['text/markdown', 'text/markdown'],
      ['text/plain', 'text/plain'],
      ['text/*', 'text/markdown'],
      ['text/plain, */*;q=0.1', 'text/plain'],
    ]) {
      const r = await call(h.baseUrl, 'GET', '/', { headers: { accept: accept! } });
      expect([r.status, r.headers.get('content-type')], accept).toEqual([200, `${type}; charset=utf-8`]);
      expect(r.text, accept).toBe(llms);
      expect(describedBy(r), accept).toEqual(LINK);
    }
    // No Accept at all (fetch always sends one, so the request is written by hand).
    const bare = await rawRequest(h.baseUrl, 'GET', '/');
    expect([bare.status, bare.headers['content-type'], bare.body]).toEqual([200, 'text/markdown; charset=utf-8', llms]);
    expect([bare.headers.link, bare.headers.vary]).toEqual(LINK);
    // An explicit JSON ask: the whole catalog; a browser: the catalog's page, which links the reference and the door.
    for (const accept of ['application/json', 'application/json, text/plain, */*']) {
      const r = await call(h.baseUrl, 'GET', '/', { headers: { accept } });
      expect(
        r.json.nouns.map((n: any) => n.noun),
        accept,
      ).toEqual(nouns.map((n) => n.noun));
      expect(describedBy(r)).toEqual(LINK);
    }
    const page = await call(h.baseUrl, 'GET', '/', {
      headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' },
    });
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.text).toContain('href="/catalog/signing"');
    expect(page.text).toContain('href="/docs"');
    expect(page.text).toContain('href="/llms.txt"');
    expect(describedBy(page)).toEqual(LINK);
    // A revalidation (304) and a HEAD say the same; the two text formats of one text are told apart by ETag.
    const plain = await fetch(`${h.baseUrl}/`, { headers: { accept: 'text/plain' } });
    const md = await fetch(`${h.baseUrl}/`, { headers: { accept: 'text/markdown' } });
    expect(plain.headers.get('etag')).not.toBe(md.headers.get('etag'));
    const again = await fetch(`${h.baseUrl}/`, {
      headers: { accept: 'text/markdown', 'if-none-match': md.headers.get('etag')! },
    });
    expect(again.status).toBe(304);
    expect(describedBy(again)).toEqual(LINK);
    const head = await fetch(`${h.baseUrl}/`, { method: 'HEAD', headers: { accept: 'application/json' } });
    expect([head.status, head.headers.get('content-type')]).toEqual([200, 'application/json; charset=utf-8']);
    expect(describedBy(head)).toEqual(LINK);
  });

  it('serves /docs and the Swagger UI files it loads from this origin, cached by version; any other file is a typed 404', async () => {
    const page = await call(h.baseUrl, 'GET', '/docs');
    expect([page.status, page.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
    const loaded = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(loaded).toEqual(
      expect.arrayContaining(['/docs/swagger-ui-bundle.js', '/docs/swagger-ui.css', '/openapi.json']),
    );
    expect(loaded.filter((u) => !u.startsWith('/'))).toEqual([]);
    for (const [file, type] of [
      ['swagger-ui-bundle.js', 'text/javascript'],
      ['swagger-ui.css', 'text/css'],
    ]) {
      const r = await fetch(`${h.baseUrl}/docs/${file}`);
      expect([r.status, r.headers.get('content-type')], file).toEqual([200, `${type}; charset=utf-8`]);
      expect((await r.arrayBuffer()).byteLength, file).toBeGreaterThan(100_000);
      const etag = r.headers.get('etag')!;
      expect(etag).toMatch(/^"swagger-ui-dist@\d+\.\d+\.\d+\//);
      expect((await fetch(`${h.baseUrl}/docs/${file}`, { headers: { 'if-none-match': etag } })).status).toBe(304);
    }
    const missing = await call(h.baseUrl, 'GET', '/docs/package.json');
    expect([missing.status, missing.json.value.code, missing.json.value.next]).toEqual([
      404,
      'not-found',
      { method: 'GET', path: '/docs' },
    ]);
  });

  it('every noun answers at its door landing and VIN lens; capability routes win over the lens', async () => {
    for (const n of nouns) {
      const landing = await call(h.baseUrl, 'GET', `/${n.door}`);
      expect(landing.status, n.door).toBe(200);
      expect(landing.json.capabilities.length).toBe(Object.keys(n.capabilities).length);
      const lens = await call(h.baseUrl, 'GET', `/${n.door}/${VIN}`, { headers: { accept: 'text/markdown' } });
      expect(lens.status, n.door).toBe(200);
      expect(lens.text).toContain(`# ${n.noun} for VIN ${VIN}`);
    }
    const st = await call(h.baseUrl, 'GET', `/signings/status?vin=${VIN}`);
    expect(st.json.answers).toBe('SigningStatus@1');
    expect((await call(h.baseUrl, 'GET', '/signings/nonsense')).status).toBe(404);
  });

  it('publishes the catalog with anchors, named nouns and Markdown at .md', async () => {
    const c = await call(h.baseUrl, 'GET', '/catalog');
    expect(c.json.nouns.map((n: any) => n.noun)).toEqual(nouns.map((n) => n.noun));
    expect(c.json.namedNouns).toHaveLength(namedNouns.length);
    expect(c.json.namedNouns[0].operations).toBe('operations not published yet');
    const html = await call(h.baseUrl, 'GET', '/catalog/signing', { headers: { accept: 'text/html' } });
    expect(html.text).toContain('<section id="status">');
    const md = await call(h.baseUrl, 'GET', '/catalog/signing.md');
    expect(md.headers.get('content-type')).toMatch(/text\/markdown/);
    expect(md.text).toContain('## signing.quote');
    expect((await call(h.baseUrl, 'GET', '/catalog.md')).text).toMatch(/^# Vehicle Capability Service/);
    expect((await call(h.baseUrl, 'GET', '/catalog/signing.status')).status).toBe(404); // sandbox: no page of its own
    for (const n of c.json.nouns)
      for (const cap of n.capabilities.filter((x: any) => x.mode === 'live')) {
        const page = await call(h.baseUrl, 'GET', cap.page, { headers: { accept: 'text/html' } });
        expect(page.status, cap.page).toBe(200);
        expect(page.text).toContain(`<title>${cap.name} — capability</title>`);
      }
    expect((await call(h.baseUrl, 'GET', '/catalog/nosuch')).status).toBe(404);
  });

  it('serves a valid OpenAPI 3.1 of live operations only', async () => {
    const r = await call(h.baseUrl, 'GET', '/openapi.json');
    expect(r.json.openapi).toBe('3.1.0');
    const result = await validate(structuredClone(r.json));
    if (!result.valid) throw new Error(compileErrors(result));
    const ops = Object.values(r.json.paths).flatMap((p: any) => Object.values(p).map((o: any) => o.operationId));
    const live = new Set(
      (await call(h.baseUrl, 'GET', '/catalog')).json.nouns.flatMap((n: any) =>
        n.capabilities.filter((c: any) => c.mode === 'live').map((c: any) => c.name),
      ),
    );
    for (const c of capabilities) expect(ops.includes(c.name), c.name).toBe(live.has(c.name));
    expect(ops).toEqual(expect.arrayContaining(['keys.mint', 'decode.get', 'record.get']));
  });

  it("passes redocly's recommended ruleset with no error (OpenAPI knows every keyword; extensions are x- names)", async () => {
    const text = (await call(h.baseUrl, 'GET', '/openapi.json')).text;
    const problems = await lintFromString({ source: text, config: await createConfig({ extends: ['recommended'] }) });
    const errors = problems.filter((p) => p.severity === 'error');
    expect(errors.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)).toEqual([]);
    // The check can fail: a keyword OpenAPI does not know is an error of its `struct` rule.
    const secretOnce = JSON.stringify(JSON.parse(text)).replace('"x-secret":true', '"secret":true');
    const marked = await lintFromString({
      source: secretOnce,
      config: await createConfig({ extends: ['recommended'] }),
    });
    expect(marked.filter((p) => p.severity === 'error').map((p) => p.ruleId)).toEqual(['struct']);
  });

  it("states the VIN's rule wherever a VIN is taken, and the service accepts what it allows", async () => {
    const oas = (await call(h.baseUrl, 'GET', '/openapi.json')).json;
    const vins = Object.entries(oas.paths).flatMap(([path, item]: [string, any]) =>
      Object.values(item).flatMap((o: any) => [
        ...(o.parameters ?? []).filter((p: any) => p.name === 'vin').map((p: any) => [path, p.schema]),
        ...Object.entries(o.requestBody?.content?.['application/json']?.schema?.properties ?? {})
          .filter(([k]) => k === 'vin')
          .map(([, s]) => [path, s]),
      ]),
    );
    expect(vins.map(([path]) => path)).toEqual(expect.arrayContaining(['/decode/{vin}', '/{vin}', '/buy/deals']));
    for (const [path, schema] of vins) expect(schema, path).toMatchObject({ pattern: VIN_PATTERN, minLength: 17 });
    // Values the pattern allows, in either case and padded, are served (their check digits are right).
    for (const v of [VIN.toLowerCase(), ` ${VIN}\t`]) {
      expect((await call(h.baseUrl, 'GET', `/decode/${encodeURIComponent(v)}`)).status, v).toBe(200);
      expect((await call(h.baseUrl, 'GET', `/${encodeURIComponent(v)}`)).status, v).toBe(200);
    }
  });

  it('serves agents.json naming /catalog first, with flows over /openapi.json operations', async () => {
    const r = await call(h.baseUrl, 'GET', '/.well-known/agents.json');
    expect(r.json.agentsJson).toBe('0.1.0');
    expect(r.json.info.description).toContain('/catalog');
    expect(r.json.firstRead).toBe(`${h.baseUrl}/catalog`);
    expect(r.json.sources[0].path).toBe(`${h.baseUrl}/openapi.json`);
    const oas = (await call(h.baseUrl, 'GET', '/openapi.json')).json;
    const ops = new Set(Object.values(oas.paths).flatMap((p: any) => Object.values(p).map((o: any) => o.operationId)));
    expect(r.json.flows.map((f: any) => f.id)).toContain('mint-a-key-then-call');
    for (const f of r.json.flows) for (const a of f.actions) expect(ops.has(a.operationId), a.operationId).toBe(true);
  });

  it('serves llms.txt in the llms.txt format: how to pay and mint, every capability in a line, a page per noun; under 8 KB', async () => {
    const r = await call(h.baseUrl, 'GET', '/llms.txt');
    const lines = r.text.split('\n');
    expect(lines[0]).toBe('# Vehicle Capability Service');
    expect(lines.find((l) => l.startsWith('> '))).toBeTruthy();
    expect(r.text.length).toBeLessThanOrEqual(8 * 1024);
    expect(r.text).toMatch(/\[Mint a key\]\(\/keys\): `POST \/keys`/);
    expect(r.text).toContain('Authorization: Bearer');
    for (const s of ['PAYMENT-REQUIRED', 'PAYMENT-SIGNATURE', 'x402/payment']) expect(r.text).toContain(s);
    for (const link of ['/docs', '/openapi.json', '/catalog', '/catalog/triggers.md'])
      expect(r.text).toContain(`](${link})`);
    // Every capability in one line under its noun's page link: method, route, and its price where it has one.
    for (const n of nouns) {
      const from = lines.indexOf(`### [${n.noun}](/catalog/${n.noun}.md)`);
      expect(from, n.noun).toBeGreaterThan(0);
      const section = lines.slice(from + 1, from + 1 + Object.keys(n.capabilities).length);
      for (const c of capabilities.filter((x) => x.noun === n.noun)) {
        const line = section.find((l) => l.startsWith(`- ${c.method} ${c.path} `));
        expect(line, c.name).toBeTruthy();
        if (c.price.model === 'free') expect(line, c.name).toMatch(/ (free|key)$/);
        else expect(line!.endsWith(priceShort(c.price)), c.name).toBe(true);
      }
    }
    expect(lines.filter((l) => /^- (GET|POST) \//.test(l))).toHaveLength(capabilities.length);
    const triggers = await call(h.baseUrl, 'GET', '/catalog/triggers.md');
    expect(triggers.status).toBe(200);
    for (const c of capabilities) expect(triggers.text).toContain(`${c.name} (${c.method} ${c.path}): `);
    const full = await call(h.baseUrl, 'GET', '/llms-full.txt');
    for (const c of capabilities) expect(full.text).toContain(`## ${c.name}`);
  });

  it('caches every discovery document by ETag: a matching If-None-Match answers 304', async () => {
    for (const path of [
      '/catalog',
      '/catalog.md',
      '/catalog/signing',
      '/suite.json',
      '/openapi.json',
      '/.well-known/agents.json',
      '/llms.txt',
      '/signings',
      `/${VIN}`,
    ]) {
      const r = await fetch(h.baseUrl + path);
      const etag = r.headers.get('etag');
      expect(etag, path).toBeTruthy();
      expect(r.headers.get('cache-control'), path).toBeTruthy();
      const again = await fetch(h.baseUrl + path, { headers: { 'if-none-match': etag! } });
      expect(again.status, path).toBe(304);
    }
    const s = await fetch(h.baseUrl + '/suite.json');
    expect(s.headers.get('etag')).toBe(`"${(await s.json()).digest}"`);
  });
});
