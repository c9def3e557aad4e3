import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capabilities, opList } from '@vcs/contract';
import { call, mintKey, startHarness, type Harness } from './support/harness.ts';

/**
 * What a request must be before anything runs: a method its path is served with (405 with Allow names the others;
 * a path nothing serves is 404), and for a POST a JSON object or no body. Gateway-only, so the embedded mode says it.
 */
const VIN = '1HGCM82633A004352';
const other = (m: string) => (m === 'GET' ? 'POST' : 'GET');
const ID_OF: Record<string, string> = { intentId: 'pi_x', handoffId: 'ho_x', dealId: 'deal_x' };

describe('the method and the body a request must have', () => {
  let h: Harness;
  let key: string;
  beforeAll(async () => {
    h = await startHarness('embedded');
    key = (await mintKey(h.baseUrl)).key;
  });
  afterAll(async () => {
    await h?.stop();
  });

  const expect405 = async (method: string, path: string, allowed: string) => {
    const r = await call(h.baseUrl, method, path, { key });
    expect(r.status, `${method} ${path}`).toBe(405);
    const allow = r.headers.get('allow')!.split(', ');
    expect(allow, `${method} ${path}`).toContain(allowed);
    expect(allow).not.toContain(method);
    expect(r.json.value).toMatchObject({ code: 'method-not-allowed', allow });
    expect(r.json.value.message).toContain(allow.join(', '));
  };

  it('answers 405 with Allow for the wrong method on every capability and every platform route', async () => {
    for (const c of capabilities) await expect405(other(c.method), c.path, c.method);
    for (const o of opList.filter((x) => x.route)) {
      const path = o.route!.path.replace(/\{(\w+)\}/g, (_, p: string) => ID_OF[p]!);
      if (o.route!.method === 'POST' && path === '/keys') continue; // GET /keys has its own 405, below
      await expect405(other(o.route!.method), path, o.route!.method);
    }
  });

  it('names the methods of the paths a newcomer meets, and those a door lens or the record would take', async () => {
    await expect405('POST', '/signings/status', 'GET');
    await expect405('GET', '/api-keys/mint', 'POST');
    await expect405('GET', '/api-keys/rotate', 'POST');
    await expect405('DELETE', `/${VIN}`, 'GET');
    await expect405('PUT', `/decode/${VIN}`, 'GET');
    await expect405('PUT', '/intents/not-an-intent', 'GET'); // an id's path is known whatever the id holds
    // A VIN that breaks a rule on a GET path is that rule's 400, not a 405 naming HEAD (GET's twin).
    const bad = await call(h.baseUrl, 'GET', '/1HGCM82643A004352');
    expect([bad.status, bad.json.value.code, bad.headers.get('allow')]).toEqual([400, 'invalid-vin', null]);
    const keys = await call(h.baseUrl, 'GET', '/keys');
    expect([keys.status, keys.headers.get('allow')]).toEqual([405, 'POST']);
    expect(keys.json.value).toMatchObject({ code: 'method-not-allowed', mint: { method: 'POST', path: '/keys' } });
  });

  it('keeps unknown paths 404, whatever the method', async () => {
    for (const [method, path] of [
      ['POST', '/nonsense'],
      ['GET', '/nonsense'],
      ['DELETE', '/signings/nonsense'],
      ['GET', '/signings/nonsense'],
      ['POST', '/buy/deals/nope/nope'],
    ]) {
      const r = await call(h.baseUrl, method!, path!);
      expect([r.status, r.json.value.code, r.headers.get('allow')], `${method} ${path}`).toEqual([
        404,
        'not-found',
        null,
      ]);
    }
  });

  it('refuses a POST body that is JSON but not an object (null like 5, true, [] and a string), naming what to send', async () => {
    const sent = async (path: string, body: string) => {
      const r = await fetch(h.baseUrl + path, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body,
      });
      return { status: r.status, json: (await r.json()) as any };
    };
    for (const path of ['/api-keys/mint', '/api-keys/rotate', '/keys', '/buy/deals'])
      for (const body of ['null', '5', 'true', '[]', '"x"']) {
        const r = await sent(path, body);
        expect([r.status, r.json.value.code], `${path} ${body}`).toEqual([400, 'invalid-input']);
        expect(r.json.value.message, `${path} ${body}`).toMatch(/must be a JSON object.*Send \{\}/);
      }
    // An object, or no body at all, is input.
    expect((await sent('/api-keys/mint', '{}')).status).toBe(200);
    expect((await call(h.baseUrl, 'POST', '/api-keys/mint', { key })).status).toBe(200);
    expect((await call(h.baseUrl, 'POST', '/keys')).status).toBe(200);
  });
});
