import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

/** A bus whose publishes fail while `down`, as NATS being unreachable. */
class FlakyBus extends MemoryBus {
  down = false;
  override async publishEvent(subject: string, data: Uint8Array, msgId: string) {
    if (this.down) throw new Error('nats unreachable');
    return super.publishEvent(subject, data, msgId);
  }
}

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
    const relay = new OutboxRelay(db, bus, createLogger('test', 'silent'), 20).start();
    bus.down = true;
    const written = await db.tx((q) =>
      writeEvents(
        q,
        [1, 2, 3].map(() => ({
          type: 'Signing.quoted@1',
          occurredAt: new Date().toISOString(),
          account: 'acct_x',
          capability: 'signing.quote',
          vin: null,
          data: {},
          simulated: true,
        })),
      ),
    );
    // A relay while the bus is down fails, and leaves the rows where they are.
    await expect(relay.flush()).rejects.toThrow('nats unreachable');
    expect(seen).toEqual([]);
    expect(await relay.pending()).toBe(3);
    // Waiting on the relay while the bus is down waits with the rows; once it is back, one flush relays them all.
    let idle = false;
    const relayed = relay.onIdle().then(() => (idle = true));
    await expect(relay.flush()).rejects.toThrow('nats unreachable');
    expect(idle).toBe(false);
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
