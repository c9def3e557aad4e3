import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capabilities } from '@vcs/contract';
import {
  BusError,
  MemoryBus,
  NatsBus,
  call,
  createLogger,
  framedReply,
  createMemoryKv,
  createPgDb,
  migrate,
  startPillar,
  systemClock,
  unframeReply,
  type Bus,
  type CallContext,
  type Db,
  type Stoppable,
} from '@vcs/platform';
import { allMigrations, allPillars } from '@vcs/embedded';
import { dispatch } from '../services/gateway/src/dispatch.ts';
import { distributedEnv, dropStores, freshStores } from './support/harness.ts';

const VIN = '1HGCM82633A004352';
const status = capabilities.find((c) => c.name === 'signing.status')!;
const ctx: CallContext = {
  requestId: 'request_proto',
  account: null,
  keyId: null,
  environment: 'sandbox',
  trigger: null,
  settled: false,
};
const servicesPillar = allPillars.find((p) => p.pillar === 'services')!;
const encode = (body: unknown) => Buffer.from(JSON.stringify(body));

/** The pillar reply on the bus, between gateways and pillars of the same or of different versions. */
describe.runIf(distributedEnv())('pillar reply protocol (real NATS and Postgres)', () => {
  let stores: Record<string, string>;
  let bus: NatsBus;
  let db: Db;
  let pillar: Stoppable;
  beforeAll(async () => {
    stores = await freshStores();
    bus = await NatsBus.connect(stores.NATS_URL!, 'protocol-test', stores.NATS_NAMESPACE);
    db = createPgDb(stores.DATABASE_URL!);
    await migrate(db, allMigrations);
    pillar = await startPillar(
      servicesPillar,
      { bus, db, kv: createMemoryKv(), clock: systemClock, mode: 'distributed' },
      createLogger('test', 'silent'),
    );
  });
  afterAll(async () => {
    await pillar?.stop();
    await bus?.drain();
    await db?.close();
    if (stores) await dropStores(stores);
  });

  it('frames every answer: status, kind and replica in one line, then the answer', async () => {
    const r = await bus.request(status.subject, encode({ input: { vin: VIN }, ctx }), { timeoutMs: 3000 });
    expect(r.headers.status).toBeUndefined();
    const meta = unframeReply(r.data)!;
    expect(meta).toMatchObject({ status: 200, kind: 'OK' });
    expect(meta.servedBy).toMatch(/^services-pillar@.+\/\d+$/);
    expect(JSON.parse(Buffer.from(meta.body).toString())).toMatchObject({ type: 'OK', value: { vin: VIN } });
  });

  it('frames refusals with their status too', async () => {
    const r = await bus.request(status.subject, encode({ input: { vin: 'NOT-A-VIN' }, ctx }), { timeoutMs: 3000 });
    const meta = unframeReply(r.data)!;
    expect(meta).toMatchObject({ status: 400, kind: 'BLOCKED' });
    expect(JSON.parse(Buffer.from(meta.body).toString())).toMatchObject({
      type: 'BLOCKED',
      value: { code: 'invalid-input' },
    });
  });

  it('the one client reads a pillar, and answers 503 BLOCKED for an unreadable reply or no replica at all', async () => {
    const viaGateway = await dispatch(bus, status, { vin: VIN }, ctx, 3000);
    expect(viaGateway).toMatchObject({ status: 200, kind: 'OK' });
    expect(JSON.parse(Buffer.from(viaGateway.body as Uint8Array).toString())).toMatchObject({
      type: 'OK',
      value: { vin: VIN },
    });

    const unreadable = bus.serve('cap.test.unreadable', 'test', async () => ({ data: Buffer.from('not an answer') }));
    try {
      const bad = await call(
        bus,
        'cap.test.unreadable',
        'test',
        { input: {}, ctx },
        { timeoutMs: 3000, idempotent: true },
      );
      expect(bad).toMatchObject({
        status: 503,
        kind: 'BLOCKED',
        unavailable: 'unreadable',
        body: { type: 'BLOCKED', value: { code: 'pillar-unavailable' } },
      });
    } finally {
      unreadable.stop();
    }
    const began = performance.now();
    const none = await call(bus, 'cap.test.nobody', 'test', { input: {}, ctx }, { timeoutMs: 1000, idempotent: false });
    expect(none).toMatchObject({
      status: 503,
      unavailable: 'no-responders',
      body: { value: { code: 'pillar-unavailable', reason: 'no-responders' } },
    });
    // It waited for a replica through its time-out, not longer.
    expect(performance.now() - began).toBeGreaterThanOrEqual(600);
    expect(performance.now() - began).toBeLessThan(2500);
  });

  it('a write sent while no replica is subscribed waits for one (it did not run) and is answered once, by it', async () => {
    let runs = 0;
    let replica: { stop(): void } | undefined;
    const late = setTimeout(() => {
      replica = bus.serve('cap.test.late', 'test', async () => {
        runs++;
        return { data: framedReply({ status: 200, kind: 'OK', servedBy: 'late@1/1' }, '{"type":"OK"}') };
      });
    }, 400);
    try {
      const r = await call(bus, 'cap.test.late', 'test', { input: {}, ctx }, { timeoutMs: 3000, idempotent: false });
      expect(r).toMatchObject({ status: 200, kind: 'OK', servedBy: 'late@1/1' });
      expect(runs).toBe(1);
    } finally {
      clearTimeout(late);
      replica?.stop();
    }
  });
});

describe('framed replies', () => {
  it('split the metadata line off a view of the answer, and refuse anything else', () => {
    const framed = framedReply({ status: 402, kind: 'OFFER', servedBy: 'commerce@1.0.0/42' }, '{"type":"OFFER"}');
    const meta = unframeReply(framed)!;
    expect(meta).toMatchObject({ status: 402, kind: 'OFFER', servedBy: 'commerce@1.0.0/42' });
    expect(Buffer.from(meta.body).toString()).toBe('{"type":"OFFER"}');
    expect(meta.body.buffer).toBe(framed.buffer); // no copy of the answer
    expect(
      unframeReply(framedReply({ status: 200, kind: 'OK', servedBy: 'c@1/2', replayed: true }, '{}')),
    ).toMatchObject({ status: 200, replayed: true });
    for (const bad of [
      '{"type":"OK"}',
      '200 OK\n{}',
      '200OKx\n{}',
      'abc OK x\n{}',
      '99 OK x\n{}',
      '600 OK x\n{}',
      '200 OK x again\n{}',
      '200 OK x replayed y\n{}',
      `200 OK ${'x'.repeat(300)}\n{}`,
    ]) {
      expect(unframeReply(Buffer.from(bad)), bad).toBeNull();
    }
  });
});

/**
 * A request not answered in time times out (never hangs, never answers twice), its late answer is dropped, and
 * the bus keeps answering afterwards.
 */
async function timesOutThenAnswers(bus: Bus) {
  const silent = bus.serve(
    'cap.test.silent',
    'test',
    (m) => new Promise((r) => setTimeout(() => r({ data: m.data }), 500)),
  );
  const echo = bus.serve('cap.test.echo', 'test', async (m) => ({ data: m.data }));
  try {
    for (const timeoutMs of [120, 300]) {
      const t0 = Date.now();
      const err = await bus.request('cap.test.silent', Buffer.from('x'), { timeoutMs }).then(
        () => null,
        (e) => e,
      );
      const took = Date.now() - t0;
      expect(err).toBeInstanceOf(BusError);
      expect((err as BusError).code).toBe('timeout');
      expect(took).toBeGreaterThanOrEqual(timeoutMs - 5);
      expect(took).toBeLessThan(timeoutMs + 200);
    }
    // Many at once, some answered and some not: each settles once, the right way.
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        bus.request(i % 2 ? 'cap.test.echo' : 'cap.test.silent', Buffer.from(String(i)), { timeoutMs: 150 }).then(
          (m) => Buffer.from(m.data).toString(),
          (e: BusError) => e.code,
        ),
      ),
    );
    results.forEach((r, i) => expect(r).toBe(i % 2 ? String(i) : 'timeout'));
    const after = await bus.request('cap.test.echo', Buffer.from('again'), { timeoutMs: 1000 });
    expect(Buffer.from(after.data).toString()).toBe('again');
  } finally {
    silent.stop();
    echo.stop();
  }
}

describe('bus time-outs', () => {
  it('in-process bus (embedded mode)', async () => {
    const bus = new MemoryBus();
    try {
      await timesOutThenAnswers(bus);
    } finally {
      await bus.drain();
    }
  });
  it.runIf(distributedEnv())('NATS', async () => {
    const stores = await freshStores();
    const bus = await NatsBus.connect(stores.NATS_URL!, 'timeout-test', stores.NATS_NAMESPACE);
    try {
      await timesOutThenAnswers(bus);
    } finally {
      await bus.drain();
      await dropStores(stores);
    }
  });
});
