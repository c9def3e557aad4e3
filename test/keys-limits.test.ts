import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisKv } from '@vcs/platform';
import { call, mintKey, modes, startHarness, waitFor, type Harness } from './support/harness.ts';

const VIN = '1HGCM82633A004352';
const LIMITS = { sandbox: 6, anonymous: 30, mint: 40, live: 6 };

/** Rate limits and idempotency; in the distributed mode across TWO gateway processes sharing Redis. */
describe.each(modes())('rate limits and idempotency across gateways (%s)', (mode) => {
  let h: Harness;
  let a: string;
  let b: string;
  beforeAll(async () => {
    h = await startHarness(mode, { rateLimits: LIMITS });
    a = h.baseUrl;
    b = mode === 'distributed' ? await h.startGateway!() : h.baseUrl;
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('limits each key, whichever gateway it calls, with RateLimit headers and a 429 BLOCKED answer', async () => {
    const { key } = await mintKey(a);
    const path = `/signings/status?vin=${VIN}`;
    for (let i = 0; i < LIMITS.sandbox; i++) {
      const r = await call(i % 2 ? b : a, 'GET', path, { key });
      expect(r.status).toBe(200);
      expect(r.headers.get('ratelimit-limit')).toBe(String(LIMITS.sandbox));
      expect(r.headers.get('ratelimit-remaining')).toBe(String(LIMITS.sandbox - i - 1));
      expect(r.headers.get('ratelimit-policy')).toBe(`${LIMITS.sandbox};w=60`);
    }
    const over = await call(b, 'GET', path, { key });
    expect(over.status).toBe(429);
    expect(over.json).toMatchObject({ type: 'BLOCKED', value: { code: 'rate-limited', limit: LIMITS.sandbox } });
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(over.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(over.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
    // Another key has its own budget.
    const other = await mintKey(b);
    expect((await call(a, 'GET', path, { key: other.key })).status).toBe(200);
  });

  it('refuses a revoked key at once on the other gateway, though it had the key cached', async () => {
    const { key } = await mintKey(a);
    const path = `/api-keys/scope`;
    expect((await call(b, 'POST', path, { key, body: {} })).status).toBe(200); // b now caches the row
    expect((await call(a, 'POST', '/api-keys/revoke', { key, body: {} })).status).toBe(200);
    const r = await call(b, 'POST', path, { key, body: {} });
    expect([r.status, r.json.value.code]).toEqual([401, 'key-revoked']);
  });

  it('replays the first answer for the same Idempotency-Key and body, on any gateway; refuses a different body with 422', async () => {
    const { key } = await mintKey(b);
    const idem = { 'idempotency-key': 'idem-mint-1' };
    const first = await call(a, 'POST', '/api-keys/mint', { key, body: {}, headers: idem });
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const replay = await call(b, 'POST', '/api-keys/mint', { key, body: {}, headers: idem });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.json.value.id).toBe(first.json.value.id); // the call did not run again: no second key
    expect(replay.json.value.secretOnce).not.toBe(first.json.value.secretOnce); // a secret is shown once, never replayed
    expect(replay.json.value.secretOnce).toBe('<shown once; not replayed>');

    const scoped = { 'idempotency-key': 'idem-scope-1' };
    const s1 = await call(a, 'POST', '/api-keys/scope', {
      key,
      body: { scopes: ['read'], mandateBinding: 'm1' },
      headers: scoped,
    });
    const s2 = await call(b, 'POST', '/api-keys/scope', {
      key,
      body: { mandateBinding: 'm1', scopes: ['read'] },
      headers: scoped,
    });
    expect(s2.headers.get('idempotent-replayed')).toBe('true');
    expect(s2.text).toBe(s1.text);
    const reused = await call(b, 'POST', '/api-keys/scope', {
      key,
      body: { scopes: ['read'], mandateBinding: 'm2' },
      headers: scoped,
    });
    expect([reused.status, reused.json.value.code]).toEqual([422, 'idempotency-key-reused']);
    // Scoped per account: another account may use the same Idempotency-Key for its own call.
    const stranger = await mintKey(a);
    const own = await call(a, 'POST', '/api-keys/scope', { key: stranger.key, body: {}, headers: scoped });
    expect([own.status, own.headers.get('idempotent-replayed')]).toEqual([200, null]);
  });

  it('answers 409 while the first request with the key is still running, and runs the call once', async () => {
    const { key } = await mintKey(a);
    const headers = { 'idempotency-key': 'idem-race' };
    const all = await Promise.all(
      Array.from({ length: 5 }, (_, i) => call(i % 2 ? a : b, 'POST', '/api-keys/mint', { key, body: {}, headers })),
    );
    const ran = all.filter((r) => r.status === 200 && !r.headers.get('idempotent-replayed'));
    expect(ran).toHaveLength(1);
    for (const r of all.filter((x) => x !== ran[0])) {
      if (r.status === 409) expect(r.json.value.code).toBe('idempotency-in-flight');
      else expect([r.status, r.headers.get('idempotent-replayed')]).toEqual([200, 'true']);
    }
  });

  it.runIf(mode === 'distributed')('sees an in-flight claim left in Redis by another gateway (409)', async () => {
    const { key, account } = await mintKey(a);
    const kv = createRedisKv(h.env!.REDIS_URL!, h.env!.REDIS_PREFIX);
    await waitFor(() => kv.ping(), 5000, 20);
    const body = {};
    const fp = createHash('sha256').update(`POST /api-keys/mint\n{}`).digest('hex');
    await kv.set(
      `idem:acct:${account}:${createHash('sha256').update('idem-held').digest('hex')}`,
      JSON.stringify({ state: 'running', fp }),
      60_000,
    );
    await kv.close();
    const r = await call(b, 'POST', '/api-keys/mint', { key, body, headers: { 'idempotency-key': 'idem-held' } });
    expect([r.status, r.json.value.code, r.headers.get('retry-after')]).toEqual([409, 'idempotency-in-flight', '1']);
  });
  // Last: it spends this address's anonymous and minting budgets.
  it('limits anonymous calls and minting per client address, across gateways', async () => {
    for (const [path, method] of [
      [`/signings/status?vin=${VIN}`, 'GET'],
      ['/keys', 'POST'],
    ] as const) {
      const first = await call(a, method, path);
      expect(first.status).toBe(200);
      let left = Number(first.headers.get('ratelimit-remaining'));
      let i = 0;
      while (left > 0) {
        const r = await call(i++ % 2 ? a : b, method, path);
        expect(r.status).toBe(200);
        left = Number(r.headers.get('ratelimit-remaining'));
      }
      const over = await call(b, method, path);
      expect([path, over.status, over.json.value.code]).toEqual([path, 429, 'rate-limited']);
      expect(over.headers.get('retry-after')).toBeTruthy();
    }
  });
});

describe.each(modes())('behind a trusted proxy (%s)', (mode) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(mode, { rateLimits: LIMITS, env: { TRUST_PROXY: '127.0.0.1' } });
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('gives each forwarded client its own anonymous budget', async () => {
    const path = `/signings/status?vin=${VIN}`;
    const as = (ip: string) => call(h.baseUrl, 'GET', path, { headers: { 'x-forwarded-for': ip } });
    for (let i = 0; i < LIMITS.anonymous; i++) expect((await as('203.0.113.1')).status).toBe(200);
    expect((await as('203.0.113.1')).status).toBe(429);
    expect((await as('203.0.113.2')).status).toBe(200);
  });
});

describe.each(modes())('client addresses and health (%s)', (mode) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(mode, { rateLimits: LIMITS });
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('never limits /healthz, /readyz or /metrics: load balancers and scrapers poll from one address', async () => {
    for (let i = 0; i < LIMITS.anonymous + 5; i++) {
      for (const p of ['/healthz', '/readyz', '/metrics'])
        expect((await call(h.baseUrl, 'GET', p)).status, `${p} #${i}`).toBe(200);
    }
    // Anonymous calls still have their budget: health did not spend it.
    expect(
      (await call(h.baseUrl, 'GET', `/signings/status?vin=${VIN}`, { headers: { 'x-forwarded-for': '203.0.113.9' } }))
        .status,
    ).toBe(200);
  });

  it('ignores X-Forwarded-For without TRUST_PROXY: a caller cannot pick its address', async () => {
    let last = 0;
    for (let i = 0; i < LIMITS.anonymous + 1; i++)
      last = (
        await call(h.baseUrl, 'GET', `/mcos/status?vin=${VIN}`, { headers: { 'x-forwarded-for': `198.51.100.${i}` } })
      ).status;
    expect(last).toBe(429);
  });
});
