import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, mintKey, modes, startHarness, type Harness } from './support/harness.ts';

const URL_ = 'http://93.184.216.34/hook';
const MASK = '<shown once; not replayed>';

describe.each(modes())('a webhook signing secret is shown once (%s)', (mode) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(mode);
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('the settling answer carries it; later settles, GET /intents/{id} and an Idempotency-Key replay do not', async () => {
    const { key } = await mintKey(h.baseUrl);
    const offer = await call(h.baseUrl, 'POST', '/webhooks/register', { key, body: { url: URL_ } });
    expect(offer.status).toBe(402);
    const settlePath = offer.json.value.settle.path as string;
    const first = await call(h.baseUrl, 'POST', settlePath, { key });
    expect(first.status).toBe(200);
    const secret = first.json.value.registration.secretOnce as string;
    expect(secret).toMatch(/^whsec_/);

    const again = await call(h.baseUrl, 'POST', settlePath, { key });
    expect(again.json.value.registration.secretOnce).toBe(MASK);
    const read = await call(h.baseUrl, 'GET', `/intents/${offer.json.value.intent.id}`, { key });
    expect(read.status).toBe(200);
    expect(read.text).not.toContain(secret);
    expect(read.json.value.answer.value.registration.secretOnce).toBe(MASK);

    // One round trip with Accept-Price and an Idempotency-Key: the replay keeps the shape, not the secret.
    const headers = { 'accept-price': '1000.00 USD', 'idempotency-key': `reg-${Date.now()}` };
    const paid = await call(h.baseUrl, 'POST', '/webhooks/register', { key, body: { url: URL_ }, headers });
    const fresh = paid.json.value.registration.secretOnce as string;
    expect(fresh).toMatch(/^whsec_/);
    const replay = await call(h.baseUrl, 'POST', '/webhooks/register', { key, body: { url: URL_ }, headers });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).not.toContain(fresh);
    expect(replay.json.value.registration.secretOnce).toBe(MASK);
  });
});
