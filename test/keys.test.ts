import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerSchema, capabilityByName } from '@vcs/contract';
import { KEY_CACHE_MS } from '../services/gateway/src/keyCache.ts';
import { call, ManualClock, mintKey, modes, startHarness, waitFor, type Harness } from './support/harness.ts';

const VIN = '1HGCM82633A004352';
const keyed = (path: string, key: string, body: unknown = {}) => ({ path, key, body });

describe.each(modes())('keys and accounts (%s)', (mode) => {
  let h: Harness;
  const clock = new ManualClock(new Date('2026-01-15T12:00:00.000Z'));
  // Embedded: a clock the test moves. Distributed: a one-second grace the test waits out.
  beforeAll(async () => {
    h = await startHarness(mode, { clock, env: { KEY_ROTATION_GRACE_SECONDS: '1' } });
  });
  afterAll(async () => {
    await h?.stop();
  });

  const expireGrace = async () => {
    if (mode === 'embedded') clock.advance(86_400_000 + 1000);
    else await new Promise((r) => setTimeout(r, 1200));
  };
  const post = (path: string, key?: string, body: unknown = {}) => call(h.baseUrl, 'POST', path, { key, body });

  it('mints an anonymous sandbox key with exactly the spec answer, and never the same key twice', async () => {
    const a = await call(h.baseUrl, 'POST', '/keys');
    expect(a.status).toBe(200);
    expect(Object.keys(a.json).sort()).toEqual(['account', 'environment', 'key', 'links', 'type']);
    expect(a.json).toMatchObject({
      type: 'OK',
      environment: 'sandbox',
      account: expect.stringMatching(/^acct_/),
      key: expect.stringMatching(/^vcs_test_/),
    });
    expect(Object.keys(a.json.links).sort()).toEqual(['agents_json', 'docs', 'pricing']);
    const b = await mintKey(h.baseUrl);
    expect(b.key).not.toBe(a.json.key);
    expect(b.account).not.toBe(a.json.account);
  });

  it('introspects the calling key with GET /keys/me (Bearer or X-Api-Key), never showing the secret', async () => {
    const { key, account } = await mintKey(h.baseUrl);
    const me = await call(h.baseUrl, 'GET', '/keys/me', { key });
    expect(me.status).toBe(200);
    expect(me.json).toMatchObject({
      type: 'OK',
      id: expect.stringMatching(/^key_|^apikey_|_/),
      prefix: key.split('_').slice(0, 3).join('_'),
      account,
      environment: 'sandbox',
      trustTier: 'anonymous',
      scopes: ['read', 'act'],
      mandateBinding: 'none',
      status: 'active',
      lastRotatedAt: null,
      expiresAt: null,
      usage: { calls: 0, charged: '0.00', byCapability: {} },
    });
    expect(me.text).not.toContain(key);
    const viaHeader = await call(h.baseUrl, 'GET', '/keys/me', { headers: { 'x-api-key': key } });
    expect(viaHeader.status).toBe(200);
    expect(viaHeader.json.id).toBe(me.json.id);
    const anon = await call(h.baseUrl, 'GET', '/keys/me');
    expect(anon.status).toBe(401);
    expect(anon.json.value.code).toBe('key-required');
  });

  it('meters every call per account and capability, and fills the answer meter block', async () => {
    const { key } = await mintKey(h.baseUrl);
    for (let i = 0; i < 3; i++) {
      const r = await call(h.baseUrl, 'GET', `/signings/status?vin=${VIN}`, { key });
      expect(r.json.meter).toEqual({ charged: '0.00', posted: true });
    }
    await post('/api-keys/scope', key);
    await waitFor(async () => (await call(h.baseUrl, 'GET', '/keys/me', { key })).json.usage.calls === 4, 5000);
    const me = await call(h.baseUrl, 'GET', '/keys/me', { key });
    expect(me.json.usage).toEqual({
      calls: 4,
      settlements: 0,
      charged: '0.00',
      byCapability: {
        'signing.status': { calls: 3, settlements: 0, charged: '0.00' },
        'apiKey.scope': { calls: 1, settlements: 0, charged: '0.00' },
      },
    });
  });

  it('answers every gate outcome: required, unknown, malformed, revoked, superseded, expired; free faces never lock out', async () => {
    const scope = '/api-keys/scope';
    const none = await post(scope);
    expect([none.status, none.json.value.code]).toEqual([401, 'key-required']);
    expect(none.json.value.mint).toEqual({ method: 'POST', path: '/keys' });
    const malformed = await post(scope, 'not-a-key');
    expect([malformed.status, malformed.json.value.code]).toEqual([401, 'key-unknown']);
    const { key } = await mintKey(h.baseUrl);
    const forged = key.slice(0, -4) + (key.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    const unknown = await post(scope, forged);
    expect([unknown.status, unknown.json.value.code]).toEqual([401, 'key-unknown']);
    expect(unknown.text).not.toContain(forged);

    const expiring = await mintKey(h.baseUrl);
    await h.sql(`update api_keys set expires_at = '2000-01-01T00:00:00Z' where prefix = $1`, [
      expiring.key.split('_').slice(0, 3).join('_'),
    ]);
    // The gateway's 5 s key cache: the embedded test moves the gateway's clock past it; distributed processes run on real time.
    if (mode === 'embedded') clock.advance(KEY_CACHE_MS + 1);
    await waitFor(async () => (await post(scope, expiring.key)).status === 401, mode === 'embedded' ? 500 : 7000);
    expect((await post(scope, expiring.key)).json.value.code).toBe('key-expired');

    // gate none: same answer with no key, a valid key or a bad key; the bad key only earns a warning header
    const free = `/signings/status?vin=${VIN}`;
    const [a, b, c] = await Promise.all([
      call(h.baseUrl, 'GET', free),
      call(h.baseUrl, 'GET', free, { key }),
      call(h.baseUrl, 'GET', free, { key: forged }),
    ]);
    expect([a.status, b.status, c.status]).toEqual([200, 200, 200]);
    expect(b.json.value).toEqual(a.json.value);
    expect(c.json.value).toEqual(a.json.value);
    expect(c.headers.get('warning')).toContain('key-unknown');
    expect(a.headers.get('warning')).toBeNull();
  });

  it('revokes the calling key at once, with its event and history', async () => {
    const { key } = await mintKey(h.baseUrl);
    expect((await post('/api-keys/scope', key)).status).toBe(200); // caches the row in the gateway
    const r = await post('/api-keys/revoke', key);
    expect(r.status).toBe(200);
    answerSchema(capabilityByName('apiKey.revoke')!.value).parse(r.json);
    expect(r.json.value.status).toBe('revoked');
    const after = await post('/api-keys/scope', key);
    expect([after.status, after.json.value.code]).toEqual([401, 'key-revoked']);
    const history = await h.sql('select type from api_key_events where key_id = $1 order by seq', [r.json.value.id]);
    expect(history.map((e) => e.type)).toEqual(['ApiKey.minted@1', 'ApiKey.scoped@1', 'ApiKey.revoked@1']);
    const outbox = await h.sql(
      `select type from outbox_events where type like 'ApiKey.%' and payload::jsonb->'data'->>'id' = $1`,
      [r.json.value.id],
    );
    expect(outbox.map((e) => e.type)).toEqual(['ApiKey.revoked@1']);
  });

  it('rotates: the successor works at once with its secret shown once, the old key works through the grace period, then is refused', async () => {
    const { key: old, account } = await mintKey(h.baseUrl);
    const r = await post('/api-keys/rotate', old);
    expect(r.status).toBe(200);
    answerSchema(capabilityByName('apiKey.rotate')!.value).parse(r.json);
    const next = r.json.value.secretOnce as string;
    expect(next).toMatch(/^vcs_test_/);
    expect(r.json.value).toMatchObject({ owner: account, status: 'active', lastRotatedAt: expect.any(String) });
    expect((await post('/api-keys/scope', old)).status).toBe(200); // within grace
    const oldMe = await call(h.baseUrl, 'GET', '/keys/me', { key: old });
    expect(oldMe.json).toMatchObject({
      status: 'superseded',
      supersededBy: r.json.value.id,
      graceUntil: expect.any(String),
    });
    expect((await call(h.baseUrl, 'GET', '/keys/me', { key: next })).json).toMatchObject({
      id: r.json.value.id,
      account,
      status: 'active',
    });
    const again = await post('/api-keys/rotate', old);
    expect([again.status, again.json.value.code]).toEqual([403, 'forbidden']);
    await expireGrace();
    const late = await post('/api-keys/scope', old);
    expect([late.status, late.json.value.code]).toEqual([401, 'key-superseded']);
    expect((await post('/api-keys/scope', next)).status).toBe(200);
    const types = (
      await h.sql(`select type from outbox_events where type like 'ApiKey.%' and account_id = $1 order by seq`, [
        account,
      ])
    ).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['ApiKey.minted@1', 'ApiKey.rotated@1']));
  });

  it('mints and creates more keys on the same account; each secret appears once', async () => {
    const { key, account } = await mintKey(h.baseUrl);
    const m = await post('/api-keys/mint', key);
    expect(m.status).toBe(200);
    expect(m.json.value).toMatchObject({
      owner: account,
      status: 'active',
      secretOnce: expect.stringMatching(/^vcs_test_/),
    });
    const c = await post('/api-keys/create', key);
    expect(c.status).toBe(200);
    answerSchema(capabilityByName('apiKey.create')!.value).parse(c.json);
    expect(c.json.value).toMatchObject({ subject: account, status: 'active', scopes: ['read', 'act'] });
    for (const k of [m.json.value.secretOnce, c.json.value.secretOnce]) {
      expect((await call(h.baseUrl, 'GET', '/keys/me', { key: k })).json.account).toBe(account);
    }
  });

  it('scopes: an empty body keeps the scopes; scopes only narrow; a mandate binding is set', async () => {
    const { key } = await mintKey(h.baseUrl);
    const same = await post('/api-keys/scope', key);
    expect(same.json.value).toMatchObject({ scopes: ['read', 'act'], mandateBinding: 'none', status: 'scoped' });
    const narrow = await post('/api-keys/scope', key, { scopes: ['read'], mandateBinding: 'mandate_abc' });
    expect(narrow.status).toBe(200);
    answerSchema(capabilityByName('apiKey.scope')!.value).parse(narrow.json);
    expect(narrow.json.value).toMatchObject({ scopes: ['read'], mandateBinding: 'mandate_abc' });
    const widen = await post('/api-keys/scope', key, { scopes: ['read', 'act'] });
    expect([widen.status, widen.json.value.code]).toEqual([403, 'forbidden']);
    const bad = await post('/api-keys/scope', key, { scopes: ['admin'] });
    expect([bad.status, bad.json.value.code]).toEqual([400, 'invalid-input']);
    expect((await call(h.baseUrl, 'GET', '/keys/me', { key })).json).toMatchObject({
      scopes: ['read'],
      mandateBinding: 'mandate_abc',
    });
    // A read-only key still reads, but may not act (deal.open declares an event, so it acts).
    await waitFor(async () => (await post('/deals/open', key, { workflow: 'buy', vin: VIN })).status === 403, 7000);
    const act = await post('/deals/open', key, { workflow: 'buy', vin: VIN });
    expect(act.json.value).toMatchObject({ code: 'forbidden', needed: 'act', capability: 'deal.open' });
    expect((await call(h.baseUrl, 'GET', `/signings/status?vin=${VIN}`, { key })).status).toBe(200);
  });

  it("never lets one account see, rotate, scope or revoke another account's key", async () => {
    const a = await mintKey(h.baseUrl);
    const b = await mintKey(h.baseUrl);
    const bMe = (await call(h.baseUrl, 'GET', '/keys/me', { key: b.key })).json;
    // The verbs take no key id: naming another key in the body is refused as invalid input.
    for (const verb of ['rotate', 'revoke', 'mint', 'create']) {
      const r = await post(`/api-keys/${verb}`, a.key, { apiKey: bMe.id });
      expect([verb, r.status, r.json.value.code]).toEqual([verb, 400, 'invalid-input']);
    }
    expect((await post('/api-keys/revoke', a.key)).status).toBe(200);
    const bAfter = await call(h.baseUrl, 'GET', '/keys/me', { key: b.key });
    expect(bAfter.json).toMatchObject({ account: b.account, status: 'active', scopes: ['read', 'act'] });
    expect(bAfter.text).not.toContain(a.account);
  });
});
