import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, serversFor, startHarness, waitFor, type Harness } from './support/harness.ts';

const VIN = '1HGCM82633A004352';

describe.runIf(serversFor('faults suite'))('faults (distributed: needs NATS_URL, DATABASE_URL, REDIS_URL)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('distributed', { busTimeoutMs: 1500 });
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('answers 503 BLOCKED for a stopped pillar within the time-out while others answer, and recovers', async () => {
    await h.kill!('services-pillar');
    const t0 = Date.now();
    const down = await call(h.baseUrl, 'GET', `/signings/status?vin=${VIN}`);
    expect(Date.now() - t0).toBeLessThan(1500 + 1000);
    expect(down.status).toBe(503);
    expect(down.json).toMatchObject({ type: 'BLOCKED', value: { code: 'pillar-unavailable', pillar: 'services' } });
    const other = await call(h.baseUrl, 'GET', `/mcos/status?vin=${VIN}`);
    expect(other.status).toBe(200);
    await h.start!('services-pillar');
    await waitFor(async () => (await call(h.baseUrl, 'GET', `/signings/status?vin=${VIN}`)).status === 200, 30_000);
  });

  it('answers a VIN decoded before from the gateway while the data pillar is down; an unseen VIN is 503', async () => {
    const before = await call(h.baseUrl, 'GET', `/decode/${VIN}`);
    expect(before.status).toBe(200);
    await h.kill!('data');
    try {
      const again = await call(h.baseUrl, 'GET', `/decode/${VIN}`);
      expect([again.status, again.text]).toEqual([200, before.text]);
      const unseen = await call(h.baseUrl, 'GET', '/decode/KM8K2CAB4PU001140');
      expect(unseen.status).toBe(503);
      expect(unseen.json.value).toMatchObject({ code: 'pillar-unavailable', pillar: 'data' });
    } finally {
      await h.start!('data');
    }
    // A refusal is not kept: the same VIN is asked of the pillar again once it is back.
    await waitFor(async () => (await call(h.baseUrl, 'GET', '/decode/KM8K2CAB4PU001140')).status === 200, 30_000);
  });
});
