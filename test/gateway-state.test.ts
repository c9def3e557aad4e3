import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@vcs/platform';
import { startEmbedded } from '@vcs/embedded';
import { call, mintKey } from './support/harness.ts';

// The gateway identifies a request once (req.caller) and keeps no request or instance state in
// module-level maps; buildApp owns it.
const GATEWAY = join(import.meta.dirname, '..', 'services', 'gateway', 'src');
const sources = (dir: string): string[] =>
  readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') && !p.endsWith('.test.ts') ? [p] : [];
  });

describe('gateway request state', () => {
  let svc: Awaited<ReturnType<typeof startEmbedded>>;
  let baseUrl: string;
  const lookups: string[] = [];
  beforeAll(async () => {
    svc = await startEmbedded({ pgliteDir: 'memory://', log: createLogger('test', 'silent') });
    baseUrl = await svc.app.listen({ port: 0, host: '127.0.0.1' });
    const request = svc.infra.bus.request.bind(svc.infra.bus);
    svc.infra.bus.request = (subject, data, opts) => {
      if (subject.endsWith('keys.lookup')) lookups.push(subject);
      return request(subject, data, opts);
    };
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
  });

  it('keeps no module-level WeakMap (request state is a request decoration, instance state belongs to buildApp)', () => {
    const found = sources(GATEWAY).filter((f) => /new WeakMap\b/.test(readFileSync(f, 'utf8')));
    expect(found).toEqual([]);
  });

  it('identifies a keyed request once, however many hooks and the route read the caller', async () => {
    const { key } = await mintKey(baseUrl);
    lookups.length = 0;
    // Rate limit, scope check, idempotency, the route (an offer gate settling) and the meter all read req.caller.
    const r = await call(baseUrl, 'POST', '/signings/quote', {
      key,
      body: { vin: '1HGCM82633A004352' },
      headers: { 'idempotency-key': `once-${Date.now()}`, 'accept-price': '1000.00 USD' },
    });
    expect(r.status).toBe(200);
    expect(lookups).toHaveLength(1);
  });

  it('refuses a bad key with the same wording on a capability and on a platform operation (one request context)', async () => {
    const bad = 'vcs_sk_test_' + 'q'.repeat(43);
    const cap = await call(baseUrl, 'POST', '/api-keys/scope', { key: bad, body: {} });
    const op = await call(baseUrl, 'POST', '/buy/deals', {
      key: bad,
      body: { vin: '1HGCM82633A004352', buyer: { name: 'A', zip: '94103' } },
    });
    expect(cap.json.value.code).toBe(op.json.value.code);
    expect(cap.json.value.message).toBe(op.json.value.message);
    const anonCap = await call(baseUrl, 'POST', '/api-keys/scope', { body: {} });
    const anonOp = await call(baseUrl, 'POST', '/buy/deals', {
      body: { vin: '1HGCM82633A004352', buyer: { name: 'A', zip: '94103' } },
    });
    expect([anonCap.json.value.code, anonOp.json.value.code]).toEqual(['key-required', 'key-required']);
    expect(anonCap.json.value.message.replace('apiKey.scope', 'X')).toBe(
      anonOp.json.value.message.replace('deals.create', 'X'),
    );
  });
});
