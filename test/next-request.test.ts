/**
 * Every BLOCKED and OFFER answer an agent can meet names the next request to make: `value.next` with a method and
 * a path, and the same request in the message text (docs/decisions.md). Each case drives its code for real.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anyAnswer, blockedValue } from '@vcs/contract';
import { KEY_CACHE_MS } from '../services/gateway/src/keyCache.ts';
import { call, ManualClock, mintKey, startHarness, type Harness } from './support/harness.ts';

const VIN = '1HGCM82633A004352';

describe('the next request of every refusal and offer', () => {
  let h: Harness;
  const clock = new ManualClock(new Date('2026-01-15T12:00:00.000Z'));
  beforeAll(async () => {
    h = await startHarness('embedded', { clock, env: { KEY_ROTATION_GRACE_SECONDS: '1' } });
  });
  afterAll(async () => {
    await h?.stop();
  });

  const post = (path: string, key?: string, body: unknown = {}, headers?: Record<string, string>) =>
    call(h.baseUrl, 'POST', path, { key, body, headers });
  /** The answer is the kind and code expected, valid as an envelope, and names `method path` as data and in words. */
  const expectNext = (r: { status: number; json: any }, code: string, method: 'GET' | 'POST', path: string) => {
    const a = anyAnswer.parse(r.json);
    expect(
      a.type === 'OFFER' ? 'payment-required' : (a.value as { code: string }).code,
      JSON.stringify(r.json.value),
    ).toBe(code);
    if (a.type === 'BLOCKED') blockedValue.parse(a.value);
    expect(r.json.value.next).toEqual({ method, path });
    expect(r.json.value.message).toContain(`${method} ${path}`);
  };

  it('key refusals name POST /keys (or the rotation of the successor)', async () => {
    expectNext(await post('/api-keys/scope'), 'key-required', 'POST', '/keys');
    expectNext(await post('/api-keys/scope', 'not-a-key'), 'key-unknown', 'POST', '/keys');
    expectNext(await call(h.baseUrl, 'GET', '/keys/me', { key: 'not-a-key' }), 'key-unknown', 'POST', '/keys');
    expectNext(
      await call(h.baseUrl, 'POST', '/buy/deals', { body: { vin: VIN, buyer: { name: 'B', zip: '94103' } } }),
      'key-required',
      'POST',
      '/keys',
    );

    const revoked = (await mintKey(h.baseUrl)).key;
    await post('/api-keys/revoke', revoked);
    expectNext(await post('/api-keys/scope', revoked), 'key-revoked', 'POST', '/keys');

    const expiring = (await mintKey(h.baseUrl)).key;
    await h.sql(`update api_keys set expires_at = '2000-01-01T00:00:00Z' where prefix = $1`, [
      expiring.split('_').slice(0, 3).join('_'),
    ]);
    clock.advance(KEY_CACHE_MS + 1);
    expectNext(await post('/api-keys/scope', expiring), 'key-expired', 'POST', '/keys');

    const old = (await mintKey(h.baseUrl)).key;
    expect((await post('/api-keys/rotate', old)).status).toBe(200);
    // Within its grace the old key still works, but it cannot be rotated again: rotate the successor instead.
    expectNext(await post('/api-keys/rotate', old), 'forbidden', 'POST', '/api-keys/rotate');
    clock.advance(86_400_000);
    const late = await post('/api-keys/scope', old);
    expectNext(late, 'key-superseded', 'POST', '/keys');
    expect(late.json.value.message).toMatch(/successor.*POST \/api-keys\/rotate/);
  });

  it('a scoped-away key names POST /api-keys/mint; a delegated call without a mandate names itself, to send again', async () => {
    const { key } = await mintKey(h.baseUrl);
    expect((await post('/api-keys/scope', key, { scopes: ['read'] })).status).toBe(200);
    clock.advance(KEY_CACHE_MS + 1);
    expectNext(await post('/signings/schedule', key, { vin: VIN }), 'forbidden', 'POST', '/api-keys/mint');

    const full = (await mintKey(h.baseUrl)).key;
    expectNext(
      await post('/poas/generate', full, { vin: VIN, state: 'CA' }, { 'delegated-for': 'acct_principal' }),
      'mandate-required',
      'POST',
      '/poas/generate',
    );
  });

  it('input, trigger and route refusals name the request to send again, or the catalog', async () => {
    const { key } = await mintKey(h.baseUrl);
    expectNext(await post('/signings/quote', key, { vin: VIN, nope: 1 }), 'invalid-input', 'POST', '/signings/quote');
    expectNext(
      await call(h.baseUrl, 'GET', `/signings/status?vin=${VIN}`, { headers: { 'sandbox-trigger': 'blocked' } }),
      'sandbox-blocked',
      'GET',
      '/signings/status',
    );
    expectNext(
      await post('/signings/quote', key, { vin: VIN }, { 'sandbox-trigger': 'fail' }),
      'trigger-not-honoured',
      'POST',
      '/signings/quote',
    );
    expectNext(await call(h.baseUrl, 'GET', '/no/such/route'), 'not-found', 'GET', '/catalog');
    expectNext(await call(h.baseUrl, 'GET', '/catalog/nope'), 'not-found', 'GET', '/catalog');
    const idem = { 'idempotency-key': 'next-request-test' };
    await post('/signings/schedule', key, { vin: VIN }, idem);
    expectNext(
      await post('/signings/schedule', key, { vin: '1HGCM82633A004353' }, idem),
      'idempotency-key-reused',
      'POST',
      '/signings/schedule',
    );
  });

  it('an offer names its settlement; a declined one names the call for a new offer; a human step names its poll', async () => {
    const { key } = await mintKey(h.baseUrl);
    const offer = await post('/signings/quote', key, { vin: VIN });
    expect(offer.status).toBe(402);
    const settle = offer.json.value.settle.path as string;
    expectNext(offer, 'payment-required', 'POST', settle);
    expectNext(
      await post(settle, key, {}, { 'sandbox-trigger': 'offer-declined' }),
      'offer-declined',
      'POST',
      '/signings/quote',
    );

    const human = await post('/poas/notarize', key, { documentId: 'doc_3f2a9c1e7b4d' });
    expect(human.status).toBe(403);
    expectNext(human, 'NEEDS_HUMAN', 'GET', human.json.value.handoff.poll.path);
  });

  it('deal refusals name the deal request to make next: open one, or advance again after a failed step', async () => {
    const { key } = await mintKey(h.baseUrl);
    expectNext(await call(h.baseUrl, 'GET', '/buy/deals/deal_none', { key }), 'deal-not-found', 'POST', '/buy/deals');
    const id = (await post('/buy/deals', key, { vin: VIN, buyer: { name: 'B', zip: '94103' } })).json.value
      .dealId as string;
    const failed = await post(`/buy/deals/${id}/advance`, key, {}, { 'sandbox-trigger': 'blocked' });
    expectNext(failed, 'sandbox-blocked', 'POST', `/buy/deals/${id}/advance`);
    expect(failed.json.value.message).toContain('STEP_FAILED');
  });
});
