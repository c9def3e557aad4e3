import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerSchema, capabilityByName } from '@vcs/contract';
import { call, modes, startHarness, type Harness } from './support/harness.ts';

const VIN = '1HGCM82633A004352';

describe.each(modes())('foundation (%s)', (mode) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(mode);
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('answers signing.status with the spec envelope, valid against the catalog schema', async () => {
    const r = await call(h.baseUrl, 'GET', `/signings/status?vin=${VIN}`);
    expect(r.status).toBe(200);
    const schema = answerSchema(capabilityByName('signing.status')!.value);
    const a = schema.parse(r.json);
    expect(a.type).toBe('OK');
    expect(r.json.answers).toBe('SigningStatus@1');
    expect(r.json.value.vin).toBe(VIN);
    expect(r.json.evidence).toEqual(r.json.value);
    expect(r.json.provenance).toEqual({
      simulated: true,
      environment: 'sandbox',
      source: expect.stringMatching(/^services-pillar@/),
    });
    expect(r.json.events).toEqual([]);
    expect(r.json.meter.charged).toBe('0.00');
  });

  it('reaches the data pillar (mco.status) and normalises a lower-case VIN', async () => {
    const r = await call(h.baseUrl, 'GET', `/mcos/status?vin=${VIN.toLowerCase()}`);
    expect(r.status).toBe(200);
    expect(r.json.value.vin).toBe(VIN);
    expect(r.json.provenance.source).toMatch(/^data@/);
  });

  it('reaches the commerce pillar (POST /keys) and the workflows pillar (deal.open)', async () => {
    const k = await call(h.baseUrl, 'POST', '/keys');
    expect(k.status).toBe(200);
    expect(k.json).toMatchObject({ type: 'OK', environment: 'sandbox', account: expect.stringMatching(/^acct_/) });
    const d = await call(h.baseUrl, 'POST', '/deals/open', { key: k.json.key, body: { workflow: 'buy', vin: VIN } });
    expect(d.status).toBe(200);
    expect(d.json.value).toMatchObject({ state: 'OPENED', dealId: expect.stringMatching(/^deal_/) });
    expect(d.json.provenance.source).toMatch(/^workflows@/);
  });

  it('answers bad input with a 400 BLOCKED listing each problem by field', async () => {
    const r = await call(h.baseUrl, 'GET', '/signings/status?vin=1HGCM82633A00435&extra=1');
    expect(r.status).toBe(400);
    expect(r.json.type).toBe('BLOCKED');
    expect(r.json.value.code).toBe('invalid-input');
    const fields = r.json.value.problems.map((p: any) => p.field);
    expect(fields).toContain('vin');
    expect(r.json.value.problems.some((p: any) => /unrecognized|extra/i.test(p.message) || p.field === '(body)')).toBe(
      true,
    );
  });

  it('answers unknown routes 404, malformed JSON 400 and oversize bodies 413, all typed', async () => {
    const nf = await call(h.baseUrl, 'GET', '/no/such/route');
    expect(nf.status).toBe(404);
    expect(nf.json.value.code).toBe('not-found');
    const bad = await fetch(`${h.baseUrl}/signings/quote`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"vin":',
    });
    expect(bad.status).toBe(400);
    expect((await bad.json()).value.code).toBe('malformed-json');
    const big = await fetch(`${h.baseUrl}/signings/quote`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ vin: 'x'.repeat(2_000_000) }),
    });
    expect(big.status).toBe(413);
    expect((await big.json()).value.code).toBe('payload-too-large');
  });

  it('answers browsers from any origin (CORS) and refuses non-JSON bodies with a typed 415', async () => {
    const pre = await fetch(`${h.baseUrl}/signings/quote`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://agent.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type',
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-headers')).toMatch(/authorization/);
    const get = await call(h.baseUrl, 'GET', `/signings/status?vin=${VIN}`, {
      headers: { origin: 'https://agent.example' },
    });
    expect(get.headers.get('access-control-expose-headers')).toMatch(/payment-required/);
    const text = await fetch(`${h.baseUrl}/signings/quote`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'vin',
    });
    expect(text.status).toBe(415);
    expect((await text.json()).value.code).toBe('unsupported-media-type');
  });

  it('reports health, readiness and Prometheus metrics, queue depths included', async () => {
    expect((await call(h.baseUrl, 'GET', '/healthz')).status).toBe(200);
    const ready = await call(h.baseUrl, 'GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.json.failed).toEqual([]);
    await call(h.baseUrl, 'GET', `/signings/status?vin=${VIN}`);
    const m = await call(h.baseUrl, 'GET', '/metrics');
    expect(m.status).toBe(200);
    expect(m.text).toMatch(/vcs_requests_total\{[^}]*capability="signing.status"[^}]*\} \d+/);
    expect(m.text).toMatch(/^vcs_outbox_unpublished \d+$/m);
    expect(m.text).toMatch(/^vcs_webhook_pending \d+$/m);
  });

  it('carries the request id it was given, or a new one, on every response', async () => {
    const given = await call(h.baseUrl, 'GET', `/signings/status?vin=${VIN}`, {
      headers: { 'x-request-id': 'req_test_123' },
    });
    expect(given.headers.get('x-request-id')).toBe('req_test_123');
    const fresh = await call(h.baseUrl, 'GET', '/nope');
    expect(fresh.headers.get('x-request-id')).toMatch(/^req_/);
  });
});
