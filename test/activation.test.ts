import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, mintKey, modes, startHarness, type Harness } from './support/harness.ts';

describe.each(modes())('going live: connections and the activation queue (%s)', (mode) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(mode);
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  });

  it('takes a credential, never returns it, and ranks the queue from demand with each factor shown', async () => {
    const a = await mintKey(h.baseUrl);
    const b = await mintKey(h.baseUrl);
    expect(
      (await call(h.baseUrl, 'POST', '/connections', { body: { kind: 'dealer-system', system: 'x', credential: 'y' } }))
        .status,
    ).toBe(401);
    const bad = await call(h.baseUrl, 'POST', '/connections', { key: a.key, body: { kind: 'fax', system: 'x' } });
    expect(bad.status).toBe(400);
    expect(bad.json.value.code).toBe('invalid-input');
    const sa = await call(h.baseUrl, 'POST', '/connections', {
      key: a.key,
      body: { kind: 'dealer-system', system: 'dealertrack', credential: 'super-secret-a', nouns: ['signing'] },
    });
    expect(sa.status).toBe(200);
    expect(sa.text).not.toContain('super-secret-a');
    const sb = await call(h.baseUrl, 'POST', '/connections', {
      key: b.key,
      body: { kind: 'consumer-account', system: 'carfax', credential: 'super-secret-b', nouns: ['mco'] },
    });
    expect(sb.json.value).toMatchObject({ status: 'queued', id: expect.stringMatching(/^conn_/) });
    // Two accounts call signing: the dealertrack connection (signing) rises above carfax (mco).
    await call(h.baseUrl, 'POST', '/signings/quote', {
      key: a.key,
      body: {},
      headers: { 'accept-price': '100.00 USD' },
    });
    await call(h.baseUrl, 'POST', '/signings/quote', {
      key: b.key,
      body: {},
      headers: { 'accept-price': '100.00 USD' },
    });
    await h.settled(); // demand is counted from the events
    const q = await call(h.baseUrl, 'GET', '/activation-queue', { key: b.key });
    expect(q.json.value.entries.find((e: any) => e.id === sa.json.value.id)).toMatchObject({
      place: 1,
      factors: { demand: 2 },
    });
    expect(q.text).not.toContain('super-secret');
    expect(q.json.value.mine).toEqual([{ id: sb.json.value.id, place: 2 }]);
    expect(q.json.value.entries[0]).toMatchObject({
      place: 1,
      system: 'dealertrack',
      mine: false,
      factors: { demand: 2, sameSystem: 0 },
    });
  });
});
