import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { call as rawCall, mintKey, modes, startHarness, waitFor, type Harness } from './support/harness.ts';

// register, subscribe, emit… are offer-gated and take effect when settled: Accept-Price settles each in one round trip.
const call: typeof rawCall = (base, method, path, opts = {}) =>
  rawCall(
    base,
    method,
    path,
    method === 'POST' ? { ...opts, headers: { 'accept-price': '1000.00 USD', ...(opts.headers ?? {}) } } : opts,
  );
import { startReceiver } from './support/receiver.ts';

// Local receivers live on 127.0.0.1, and retries are compressed; both processes of both modes read these.
process.env.WEBHOOK_ALLOW_PRIVATE_TARGETS = 'true';
process.env.WEBHOOK_RETRY_SCHEDULE_MS = '0,50,100,150,200,200,200,200,200,200,200,200';
process.env.WEBHOOK_POLL_MS = '50';
process.env.WEBHOOK_TIMEOUT_MS = '2000';

const VIN = '1HGCM82633A004352';

async function wire(h: Harness, url: string, eventTypes: string[]) {
  const { key } = await mintKey(h.baseUrl);
  const reg = await call(h.baseUrl, 'POST', '/webhooks/register', {
    key,
    body: { vin: VIN, url, description: 'test receiver' },
  });
  expect(reg.status).toBe(200);
  const { id, secretOnce } = reg.json.value.registration;
  expect(secretOnce).toMatch(/^whsec_/);
  const sub = await call(h.baseUrl, 'POST', '/webhooks/subscribe', {
    key,
    body: { vin: VIN, endpointId: id, eventTypes },
  });
  expect(sub.status).toBe(200);
  expect(sub.json.value.subscription).toMatchObject({ status: 'subscribed', endpointId: id });
  return { key, endpointId: id as string, secret: secretOnce as string };
}

describe.each(modes())('webhook delivery (%s)', (mode) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(mode);
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  });

  it("delivers a capability's events, signed, verified by the standardwebhooks package", async () => {
    const rx = await startReceiver();
    try {
      const { key, secret, endpointId } = await wire(h, rx.url, ['Signing.*']);
      const q = await call(h.baseUrl, 'POST', '/signings/quote', { key, body: { vin: VIN } });
      expect(q.status).toBe(200);
      await h.settled();
      const wh = new Webhook(secret);
      const types = rx.received.map((r) => {
        const evt = wh.verify(r.body, r.headers as Record<string, string>) as any;
        expect(evt.id).toBe(r.id);
        expect(evt).toMatchObject({ capability: 'signing.quote', vin: VIN, simulated: true });
        return evt.type;
      });
      expect(types.sort()).toEqual(['Signing.quoteRequested@1', 'Signing.quoted@1']);
      expect(() =>
        new Webhook(`whsec_${Buffer.from('wrong-secret-wrong-secret').toString('base64')}`).verify(
          rx.received[0]!.body,
          rx.received[0]!.headers as any,
        ),
      ).toThrow();
      // The log reads the real records.
      const log = await call(h.baseUrl, 'GET', `/webhooks/delivery-log?endpointId=${endpointId}`, { key });
      expect(log.json.value.log.status).toBe('deliveries-recorded');
      expect(log.json.value.log.deliveries.map((d: any) => d.status)).toEqual(['delivered', 'delivered']);
      expect(log.json.value.log.deliveries[0].attempts[0]).toMatchObject({ statusCode: 204, outcome: 'http-204' });
      // A test event reaches the endpoint even though it subscribed to Signing.* only.
      await call(h.baseUrl, 'POST', '/webhooks/emit', { key, body: { endpointId } });
      await h.settled();
      expect(rx.received.map((r) => JSON.parse(r.body).type)).toContain('Webhook.emitted@1');
    } finally {
      await rx.close();
    }
  });

  it("delivers the event's bytes as emitted, byte for byte, stored once however many endpoints take it", async () => {
    const a = await startReceiver();
    const b = await startReceiver();
    try {
      const { key } = await wire(h, a.url, ['Signing.quoted']);
      const reg = await call(h.baseUrl, 'POST', '/webhooks/register', { key, body: { url: b.url } });
      await call(h.baseUrl, 'POST', '/webhooks/subscribe', {
        key,
        body: { endpointId: reg.json.value.registration.id, eventTypes: ['Signing.quoted'] },
      });
      await call(h.baseUrl, 'POST', '/signings/quote', { key, body: { vin: VIN } });
      await h.settled();
      expect([a.received.length, b.received.length]).toEqual([1, 1]);
      const id = a.received[0]!.id;
      expect(b.received[0]!.id).toBe(id);
      // The text the producer wrote into the outbox is the body each endpoint got (and signed).
      const [emitted] = await h.sql('select payload from outbox_events where id = $1', [id]);
      expect(typeof emitted.payload).toBe('string');
      expect(Buffer.from(a.received[0]!.body)).toEqual(Buffer.from(emitted.payload));
      expect(Buffer.from(b.received[0]!.body)).toEqual(Buffer.from(emitted.payload));
      // One copy of the event; its two deliveries carry its id only.
      expect(await h.sql('select count(*)::int as n from webhook_events where id = $1', [id])).toEqual([{ n: 1 }]);
      expect(
        await h.sql(
          'select count(*)::int as n, count(payload)::int as copies from webhook_deliveries where event_id = $1',
          [id],
        ),
      ).toEqual([{ n: 2, copies: 0 }]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('signs with both secrets during a rotation grace period', async () => {
    const rx = await startReceiver();
    try {
      const { key, secret, endpointId } = await wire(h, rx.url, ['Signing.quoted']);
      const rot = await call(h.baseUrl, 'POST', '/webhooks/register', { key, body: { endpointId } });
      expect(rot.json.value.registration.status).toBe('rotated');
      const fresh = rot.json.value.registration.secretOnce;
      await call(h.baseUrl, 'POST', '/signings/quote', { key, body: { vin: VIN } });
      await h.settled();
      expect(rx.received).toHaveLength(1);
      const r = rx.received[0]!;
      expect(String(r.headers['webhook-signature']).split(' ')).toHaveLength(2);
      new Webhook(secret).verify(r.body, r.headers as any);
      new Webhook(fresh).verify(r.body, r.headers as any);
    } finally {
      await rx.close();
    }
  });

  it('a receiver failing half its requests still gets every event; duplicates only share a webhook-id', async () => {
    const rx = await startReceiver((n) => (n % 2 === 0 ? 500 : 200));
    try {
      const { key } = await wire(h, rx.url, ['Signing.*']);
      for (let i = 0; i < 6; i++)
        expect((await call(h.baseUrl, 'POST', '/signings/fee', { key, body: { vin: VIN } })).status).toBe(200);
      await waitFor(
        async () => new Set(rx.received.filter((r) => r.status === 200).map((r) => r.id)).size === 12,
        30_000,
      );
      const bodies = new Map<string, string>();
      for (const r of rx.received) {
        if (bodies.has(r.id)) expect(r.body).toBe(bodies.get(r.id));
        bodies.set(r.id, r.body);
      }
      expect(bodies.size).toBe(12);
    } finally {
      await rx.close();
    }
  });

  it('honours Retry-After on 429 and records every attempt', async () => {
    const rx = await startReceiver((n) => (n === 0 ? { status: 429, headers: { 'retry-after': '1' } } : 204));
    try {
      const { key, endpointId } = await wire(h, rx.url, ['Signing.quoted']);
      await call(h.baseUrl, 'POST', '/signings/quote', { key, body: { vin: VIN } });
      // The retry waits out Retry-After (1 s of real time: the receiver measures it): a poll, on time itself.
      await waitFor(async () => rx.received.length >= 2);
      expect(rx.received[1]!.at - rx.received[0]!.at).toBeGreaterThanOrEqual(900);
      expect(rx.received[1]!.id).toBe(rx.received[0]!.id);
      await h.settled(); // the 204's attempt recorded
      const log = await call(h.baseUrl, 'GET', `/webhooks/delivery-log?endpointId=${endpointId}`, { key });
      expect(log.json.value.log.deliveries[0].status).toBe('delivered');
      expect(log.json.value.log.deliveries[0].attempts.map((a: any) => a.statusCode)).toEqual([429, 204]);
    } finally {
      await rx.close();
    }
  });

  it('disables an endpoint that answers 410 and says so with Webhook.failed@1', async () => {
    const gone = await startReceiver(() => 410);
    const watcher = await startReceiver();
    try {
      const { key, endpointId } = await wire(h, gone.url, ['Signing.quoted']);
      const reg = await call(h.baseUrl, 'POST', '/webhooks/register', { key, body: { url: watcher.url } });
      await call(h.baseUrl, 'POST', '/webhooks/subscribe', {
        key,
        body: { endpointId: reg.json.value.registration.id, eventTypes: ['Webhook.failed'] },
      });
      await call(h.baseUrl, 'POST', '/signings/quote', { key, body: { vin: VIN } });
      // The 410 writes Webhook.failed, which is relayed and delivered in turn: settled goes round until all is quiet.
      await h.settled();
      expect(watcher.received).toHaveLength(1);
      expect(JSON.parse(watcher.received[0]!.body).data).toMatchObject({
        reason: 'endpoint-gone',
        endpointId,
        endpointDisabled: true,
      });
      const read = await call(h.baseUrl, 'GET', `/webhooks/read?endpointId=${endpointId}`);
      expect(read.json.value.endpoint.status).toBe('no-endpoint-recorded'); // anonymous callers see only the sandbox
      const mine = await call(h.baseUrl, 'GET', `/webhooks/read?endpointId=${endpointId}`, { key });
      expect(mine.json.value.endpoint).toMatchObject({ status: 'disabled', id: endpointId });
    } finally {
      await gone.close();
      await watcher.close();
    }
  });

  it('answers the sandbox simulation, deterministically, for accounts with nothing recorded', async () => {
    const a = await call(h.baseUrl, 'GET', `/webhooks/status?vin=${VIN}`);
    const b = await call(h.baseUrl, 'GET', `/webhooks/status?vin=${VIN}`);
    expect(a.json.value).toEqual(b.json.value);
    expect(a.json.value.wire.endpoint.status).toBe('no-endpoint-recorded');
    const { key } = await mintKey(h.baseUrl);
    expect((await call(h.baseUrl, 'GET', '/webhooks/delivery-log', { key })).json.value.log.status).toBe(
      'no-deliveries-recorded',
    );
    expect((await call(h.baseUrl, 'GET', '/webhooks/retry-state')).json.value.retryState.status).toBe(
      'no-delivery-recorded',
    );
    expect(
      (await call(h.baseUrl, 'POST', '/webhooks/unsubscribe', { key, body: {} })).json.value.subscription.status,
    ).toBe('no-subscription-recorded');
    const reg = await call(h.baseUrl, 'POST', '/webhooks/register', { key, body: {} });
    expect(reg.json.value.registration).toEqual({ status: 'registered', id: expect.stringMatching(/^ep_/) });
  });

  it.runIf(mode === 'distributed')(
    'loses nothing when the delivery worker is killed mid-run',
    async () => {
      const rx = await startReceiver();
      try {
        const { key } = await wire(h, rx.url, ['Signing.feeCharged']);
        for (let i = 0; i < 5; i++) await call(h.baseUrl, 'POST', '/signings/fee', { key, body: { vin: VIN } });
        await h.kill!('services-pillar');
        await h.start!('services-pillar');
        await waitFor(async () => (await fetch(`${h.baseUrl}/signings/status`)).status === 200, 30_000);
        for (let i = 0; i < 5; i++) await call(h.baseUrl, 'POST', '/signings/fee', { key, body: { vin: VIN } });
        await waitFor(async () => new Set(rx.received.map((r) => r.id)).size === 10, 30_000);
      } finally {
        await rx.close();
      }
    },
    60_000,
  );
});
