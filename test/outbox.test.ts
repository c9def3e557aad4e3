import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createLogger,
  createPgliteDb,
  type Db,
  enc,
  migrate,
  MemoryBus,
  platformMigrations,
  OutboxRelay,
  writeEvents,
  type EventDelivery,
} from '@vcs/platform';
import { bothStores } from './support/stores.ts';

/** A bus whose publishes fail while `down`, as NATS being unreachable. */
class FlakyBus extends MemoryBus {
  down = false;
  override async publishEvent(subject: string, data: Uint8Array, msgId: string) {
    if (this.down) throw new Error('nats unreachable');
    return super.publishEvent(subject, data, msgId);
  }
}

const events = (n: number) =>
  Array.from({ length: n }, () => ({
    type: 'Signing.quoted@1',
    occurredAt: new Date().toISOString(),
    account: 'acct_x',
    capability: 'signing.quote',
    vin: null,
    data: {},
    simulated: true,
  }));

describe('outbox relay', () => {
  let db: Db;
  beforeAll(async () => {
    db = await createPgliteDb('memory://');
    await migrate(db, [platformMigrations]);
  });
  afterAll(async () => {
    await db?.close();
  });

  it('keeps events written while the bus is down and delivers each once when it is back', async () => {
    const bus = new FlakyBus();
    const seen: string[] = [];
    await bus.consumeEvents({ durable: 't', filter: 'evt.>' }, async (d: EventDelivery) => {
      seen.push(JSON.parse(new TextDecoder().decode(d.data)).id);
      d.ack();
    });
    const relay = new OutboxRelay(db, bus, createLogger('test', 'silent'), 20);
    bus.down = true;
    const written = await db.tx((q) => writeEvents(q, events(3)));
    // A relay while the bus is down fails, and leaves the rows where they are. (Its ticks start after: one that
    // claimed the rows first would leave this flush nothing to fail on.)
    await expect(relay.flush()).rejects.toThrow('nats unreachable');
    expect(seen).toEqual([]);
    expect(await relay.pending()).toBe(3);
    relay.start();
    // Waiting on the relay while the bus is down waits with the rows (the flush it begins fails, and so do the
    // ticks'); once it is back, a flush relays them all. A failed flush gives its claimed rows back at once: were
    // they kept until the claim ran out (30 s), the wait below would outlast the test.
    let idle = false;
    const relayed = relay.onIdle().then(() => (idle = true));
    await new Promise((r) => setTimeout(r, 100));
    expect(idle).toBe(false);
    expect(await relay.pending()).toBe(3);
    bus.down = false;
    await relayed;
    await bus.onIdle();
    expect(seen).toEqual(written.map((e) => e.id));
    expect(await relay.pending()).toBe(0);
    // A republish of the same rows (a crash after publish, before marking) is dropped by the msg id.
    for (const e of written) await bus.publishEvent('evt.Signing.quoted.v1', enc.encode(JSON.stringify(e)), e.id);
    await bus.onIdle();
    expect(seen).toHaveLength(3);
    await relay.stop();
  });
});

/** A bus that counts each event id it is asked to publish, and can hold publishes until let go. */
class CountingBus extends MemoryBus {
  published = new Map<string, number>();
  held: (() => void)[] = [];
  hold = false;
  override async publishEvent(subject: string, data: Uint8Array, msgId: string) {
    this.published.set(msgId, (this.published.get(msgId) ?? 0) + 1);
    if (this.hold) await new Promise<void>((r) => this.held.push(r));
    return super.publishEvent(subject, data, msgId);
  }
}

describe.each(bothStores())('outbox relays on one store (%s)', (_kind, open) => {
  let db: Db;
  beforeEach(async () => {
    db = await open();
    await migrate(db, [platformMigrations]);
  });
  afterEach(() => db.close());

  it('publish each row once between them, flushing at the same time', async () => {
    const written = await db.tx((q) => writeEvents(q, events(250)));
    const bus = new CountingBus();
    const log = createLogger('test', 'silent');
    const relays = [new OutboxRelay(db, bus, log), new OutboxRelay(db, bus, log), new OutboxRelay(db, bus, log)];
    // Small batches, all at once: each relay claims while the others are publishing theirs.
    const relayed = await Promise.all(relays.map((r) => r.flush(20)));
    expect(relayed.reduce((a, n) => a + n, 0)).toBe(250);
    expect(relayed.filter((n) => n > 0).length).toBeGreaterThan(1);
    expect([...bus.published.keys()].sort()).toEqual(written.map((e) => e.id).sort());
    expect([...bus.published.values()].every((n) => n === 1)).toBe(true);
    expect(await relays[0]!.pending()).toBe(0);
  });

  it('take over the rows of a relay that stalled once its claim has run out, and not before', async () => {
    const written = await db.tx((q) => writeEvents(q, events(3)));
    const bus = new CountingBus();
    const log = createLogger('test', 'silent');
    const [stalled, other] = [new OutboxRelay(db, bus, log), new OutboxRelay(db, bus, log)];
    bus.hold = true;
    const first = stalled.flush();
    await expect.poll(() => bus.held.length).toBe(3);
    bus.hold = false;
    // Claimed: the other relay finds nothing to take.
    expect(await other.flush()).toBe(0);
    // The claim runs out (as if its relay were paused past it): the other relay publishes the rows and marks them.
    await db.query(`update outbox_events set claimed_until = now() - interval '1 second'`);
    expect(await other.flush()).toBe(3);
    expect(await other.pending()).toBe(0);
    // The stalled relay wakes and publishes too: the stream drops those copies by id (MemoryBus as JetStream).
    for (const go of bus.held) go();
    expect(await first).toBe(3);
    expect(written.map((e) => bus.published.get(e.id))).toEqual([2, 2, 2]);
  });

  it('the embedded relay (alone on its store) marks a batch with its next read, and a crash republishes it', async () => {
    const bus = new CountingBus();
    const log = createLogger('test', 'silent');
    const relay = new OutboxRelay(db, bus, log, 250, true);
    const first = await db.tx((q) => writeEvents(q, events(3)));
    // As a commit kicks it: published, the mark left to its next statement.
    expect(await relay.flush(100, false, false)).toBe(3);
    expect(await relay.pending()).toBe(3);
    const second = await db.tx((q) => writeEvents(q, events(2)));
    // The next read marks the first batch and leaves it out: only the new rows go out.
    expect(await relay.flush(100, true, false)).toBe(2);
    expect(await relay.pending()).toBe(2);
    expect([...first, ...second].map((e) => bus.published.get(e.id))).toEqual([1, 1, 1, 1, 1]);
    // A crash before the mark: the process restarted has a new relay, which publishes those rows again (the stream
    // drops them by id), and marks them when it is asked to settle.
    const restarted = new OutboxRelay(db, bus, log, 250, true);
    expect(await restarted.flush()).toBe(2);
    expect(await restarted.pending()).toBe(0);
    expect([...first, ...second].map((e) => bus.published.get(e.id))).toEqual([1, 1, 1, 2, 2]);
    // Waited on, a relay marks what it publishes before it answers.
    const third = await db.tx((q) => writeEvents(q, events(1)));
    restarted.start();
    await restarted.onIdle();
    expect(await restarted.pending()).toBe(0);
    expect(bus.published.get(third[0]!.id)).toBe(1);
    await restarted.stop();
  });

  it('relays the commits made within its window together: one read for all of them, not one each', async () => {
    const bus = new CountingBus();
    const reads: string[] = [];
    const query = db.query.bind(db);
    const counted = Object.create(db) as Db;
    counted.query = ((sql: string, params?: unknown[]) => {
      if (/from outbox_events where published_at is null/.test(sql) && !/limit 1$/.test(sql)) reads.push(sql);
      return query(sql, params);
    }) as Db['query'];
    // Sole, its ticks a minute apart: only its kicks relay; a window of 100 ms.
    const relay = new OutboxRelay(counted, bus, createLogger('test', 'silent'), 60_000, true, 100);
    const written = [];
    for (let i = 0; i < 3; i++) {
      written.push(...(await db.tx((q) => writeEvents(q, events(1)))));
      relay.kickSoon(); // as the runner does after each commit
    }
    expect(bus.published.size).toBe(0);
    await expect.poll(() => bus.published.size, { timeout: 2_000 }).toBe(3);
    expect(reads).toHaveLength(1);
    expect(written.map((e) => bus.published.get(e.id))).toEqual([1, 1, 1]);
    await relay.stop();
  });
});
