import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@vcs/platform';
import { call, mintKey, startHarness, type Harness } from './support/harness.ts';

const VIN = '1HGCM82633A004352';

/** A logger whose lines the test reads back. */
function capturedLogger() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { log: createLogger('test', 'trace', sink), lines };
}

describe('no secret in logs, rows or errors; a request id in every log line of a call (embedded)', () => {
  let h: Harness;
  const cap = capturedLogger();
  const secrets: string[] = [];
  beforeAll(async () => {
    h = await startHarness('embedded', { log: cap.log });
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('writes each top-level key once per line (Elasticsearch refuses documents with a key twice)', async () => {
    await call(h.baseUrl, 'GET', `/signings/status?vin=${VIN}`);
    expect(cap.lines.length).toBeGreaterThan(0);
    for (const line of cap.lines) {
      // Top-level keys only: strip nested objects, then every "key": must be new on the line.
      let flat = line.slice(1, -1);
      for (let prev = ''; prev !== flat;) {
        prev = flat;
        flat = flat.replace(/\{[^{}]*\}/g, '{}').replace(/\[[^[\]]*\]/g, '[]');
      }
      const keys = [...flat.matchAll(/(?:^|,)"((?:[^"\\]|\\.)*)":/g)].map((m) => m[1]);
      expect(keys.length, line).toBe(new Set(keys).size);
    }
  });

  it('redacts keys and secrets at every path a log line might carry them', () => {
    const { log, lines } = capturedLogger();
    const key = 'vcs_test_abcdefghij_' + 'x'.repeat(43);
    log.info(
      {
        key,
        secretOnce: key,
        req: { headers: { authorization: `Bearer ${key}`, 'x-api-key': key } },
        value: { secretOnce: key, key },
      },
      'line',
    );
    expect(lines.join('\n')).not.toContain(key);
    expect(lines.join('\n')).toContain('[redacted]');
  });

  it('runs every key-bearing call, then finds no secret in logs, the key tables, events or error texts', async () => {
    const { key } = await mintKey(h.baseUrl);
    secrets.push(key);
    const calls = [
      await call(h.baseUrl, 'GET', '/keys/me', { key }),
      await call(h.baseUrl, 'GET', `/signings/status?vin=${VIN}`, { headers: { 'x-api-key': key } }),
      await call(h.baseUrl, 'POST', '/api-keys/scope', { key, body: { bogus: key } }), // an error that must not echo it
    ];
    const minted = await call(h.baseUrl, 'POST', '/api-keys/mint', { key, body: {} });
    const created = await call(h.baseUrl, 'POST', '/api-keys/create', { key, body: {} });
    const rotated = await call(h.baseUrl, 'POST', '/api-keys/rotate', { key, body: {} });
    secrets.push(minted.json.value.secretOnce, created.json.value.secretOnce, rotated.json.value.secretOnce);
    const bad = await call(h.baseUrl, 'POST', '/api-keys/scope', { key: key.slice(0, -3) + 'zzz', body: {} });
    expect(bad.status).toBe(401);
    for (const r of [...calls, bad]) for (const s of secrets) expect(r.text).not.toContain(s);

    const logs = cap.lines.join('\n');
    expect(logs.length).toBeGreaterThan(0);
    const dump = JSON.stringify([
      await h.sql('select * from api_keys'),
      await h.sql('select * from api_key_events'),
      await h.sql('select * from outbox_events'),
      await h.sql('select * from accounts'),
    ]);
    for (const s of secrets) {
      expect(s).toMatch(/^vcs_test_/);
      expect(logs).not.toContain(s);
      expect(dump).not.toContain(s);
      // Not even the secret part alone: everything after `vcs_test_<lookup>_` (it may itself contain `_`).
      expect(dump).not.toContain(s.split('_').slice(3).join('_'));
    }
    expect(dump).toContain(key.split('_').slice(0, 3).join('_')); // the visible prefix is stored, and only it
  });

  it('puts the response request id in the gateway log and the pillar log of the call', async () => {
    const r = await call(h.baseUrl, 'GET', `/signings/status?vin=${VIN}`);
    const rid = r.headers.get('x-request-id')!;
    expect(rid).toMatch(/^req_/);
    const mine = cap.lines.map((l) => JSON.parse(l)).filter((l) => l.reqId === rid || l.requestId === rid);
    expect(mine.some((l) => l.component === 'gateway' && l.reqId === rid)).toBe(true); // fastify's request logger names it reqId
    expect(mine.some((l) => l.requestId === rid && /services/.test(l.component))).toBe(true);
  });
});
