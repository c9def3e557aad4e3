import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capabilities } from '@vcs/contract';
import {
  NatsBus, createLogger, createMemoryKv, createPgDb, migrate, startPillar, systemClock, unframeReply,
  type CallContext, type Db, type Stoppable,
} from '@vcs/platform';
import { allPillars } from '@vcs/embedded';
import { dispatch } from '../services/gateway/src/dispatch.ts';
import { distributedEnv, dropStores, freshStores } from './support/harness.ts';

const VIN = '1HGCM82633A004352';
const status = capabilities.find((c) => c.name === 'signing.status')!;
const ctx: CallContext = { requestId: 'request_proto', account: null, keyId: null, environment: 'sandbox', trigger: null, settled: false };
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
    await migrate(db);
    pillar = await startPillar(servicesPillar, { bus, db, kv: createMemoryKv(), clock: systemClock }, createLogger('test', 'silent'));
  });
  afterAll(async () => {
    await pillar?.stop();
    await bus?.drain();
    await db?.close();
    if (stores) await dropStores(stores);
  });

  it('frames the answer for a caller that asks, and answers with headers for one that does not', async () => {
    const plain = await bus.request(status.subject, encode({ input: { vin: VIN }, ctx }), { timeoutMs: 3000 });
    expect(plain.headers).toMatchObject({ status: '200', kind: 'OK' });
    expect(plain.headers['served-by']).toMatch(/^services-pillar@.+\/\d+$/);
    expect(JSON.parse(Buffer.from(plain.data).toString())).toMatchObject({ type: 'OK', value: { vin: VIN } });

    const framed = await bus.request(status.subject, encode({ input: { vin: VIN }, ctx, reply: 'framed' }), { timeoutMs: 3000 });
    expect(framed.headers.status).toBeUndefined();
    const meta = unframeReply(framed.data);
    expect(meta).toMatchObject({ status: 200, kind: 'OK', servedBy: plain.headers['served-by'] });
    expect(Buffer.from(meta!.body).equals(Buffer.from(plain.data))).toBe(true); // the same answer, byte for byte
  });

  it('frames refusals with their status too', async () => {
    const r = await bus.request(status.subject, encode({ input: { vin: 'NOT-A-VIN' }, ctx, reply: 'framed' }), { timeoutMs: 3000 });
    const meta = unframeReply(r.data)!;
    expect(meta).toMatchObject({ status: 400, kind: 'BLOCKED' });
    expect(JSON.parse(Buffer.from(meta.body).toString())).toMatchObject({ type: 'BLOCKED', value: { code: 'invalid-input' } });
  });

  it('the gateway reads a current pillar, a pillar of an earlier version, and refuses an unreadable reply with 503 BLOCKED', async () => {
    const viaGateway = await dispatch(bus, status.subject, 'services', { vin: VIN }, ctx, 3000);
    expect(viaGateway).toMatchObject({ status: 200, kind: 'OK' });
    expect(JSON.parse(Buffer.from(viaGateway.body as Uint8Array).toString())).toMatchObject({ type: 'OK', value: { vin: VIN } });

    const answer = JSON.stringify({ type: 'OK', answers: 'Test@1', value: { x: 1 } });
    const earlier = bus.serve('cap.test.earlier', 'test', async () => ({ data: Buffer.from(answer), headers: { status: '201', kind: 'OK', 'served-by': 'test@0.0.1/7' } }));
    const unreadable = bus.serve('cap.test.unreadable', 'test', async () => ({ data: Buffer.from('not an answer') }));
    try {
      const old = await dispatch(bus, 'cap.test.earlier', 'test', {}, ctx, 3000);
      expect(old).toMatchObject({ status: 201, kind: 'OK', servedBy: 'test@0.0.1/7' });
      expect(Buffer.from(old.body as Uint8Array).toString()).toBe(answer);
      const bad = await dispatch(bus, 'cap.test.unreadable', 'test', {}, ctx, 3000);
      expect(bad).toMatchObject({ status: 503, kind: 'BLOCKED', body: { type: 'BLOCKED', value: { code: 'pillar-unavailable' } } });
    } finally {
      earlier.stop();
      unreadable.stop();
    }
  });
});
