import { afterAll, describe, expect, it } from 'vitest';
import { consumeEventBatches, enc, dec, MemoryBus, NatsBus, type Bus } from '@vcs/platform';
import { distributedEnv } from './support/harness.ts';

/**
 * What a handler has seen, as a signal: `until(cond)` resolves when `cond` holds, looked at each time a handler calls
 * `saw()`, so a test waits on the batches it expects, not on a timer (a batch that never comes fails by time-out).
 */
function signal() {
  let waiters: { cond: () => boolean; resolve: () => void }[] = [];
  return {
    saw() {
      const ready = waiters.filter((w) => w.cond());
      waiters = waiters.filter((w) => !ready.includes(w));
      for (const w of ready) w.resolve();
    },
    until: (cond: () => boolean) =>
      cond() ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ cond, resolve })),
  };
}

/** The buses a consumer runs on: the embedded one always, NATS JetStream where it is given. */
const buses: [string, () => Promise<Bus>][] = [['memory', async () => new MemoryBus()]];
const env = distributedEnv();
const opened: NatsBus[] = [];
if (env) {
  buses.push([
    'nats',
    async () => {
      const b = await NatsBus.connect(
        env.NATS_URL,
        'batches-test',
        `tb${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`,
      );
      opened.push(b);
      return b;
    },
  ]);
}
afterAll(async () => {
  for (const b of opened) {
    await b.deleteStream();
    await b.drain();
  }
});

describe.each(buses)('consumeEventBatches (%s)', (_name, makeBus) => {
  it(
    'hands over what arrived together as one batch, in stream order, each event once',
    { timeout: 20_000 },
    async () => {
      const bus = await makeBus();
      const batches: number[][] = [];
      const arrived = signal();
      let release!: () => void;
      const gate = new Promise<void>((r) => {
        release = r;
      });
      const sub = await consumeEventBatches(bus, { durable: 'order', filter: 'evt.>' }, async (batch) => {
        batches.push(batch.map((d) => Number(dec.decode(d.data))));
        arrived.saw();
        await gate; // the first batch is slow: everything published meanwhile must come as the next batch
      });
      for (let i = 0; i < 40; i++) await bus.publishEvent('evt.T.x.v1', enc.encode(String(i)), `m${i}`);
      await arrived.until(() => batches.length >= 1);
      release();
      await arrived.until(() => batches.flat().length >= 40);
      expect(batches.flat()).toEqual([...Array(40).keys()]);
      expect(batches.length).toBeLessThan(40);
      expect(Math.max(...batches.map((b) => b.length))).toBeGreaterThan(1);
      await sub.stop();
    },
  );

  it('redelivers every event of a batch whose handler throws', { timeout: 20_000 }, async () => {
    const bus = await makeBus();
    const handled: string[] = [];
    const arrived = signal();
    let failOnce = true;
    const sub = await consumeEventBatches(bus, { durable: 'retry', filter: 'evt.>' }, async (batch) => {
      if (failOnce) {
        failOnce = false;
        throw new Error('store down');
      }
      for (const d of batch) handled.push(dec.decode(d.data));
      arrived.saw();
    });
    for (const x of ['a', 'b', 'c']) await bus.publishEvent('evt.T.y.v1', enc.encode(x), `r-${x}`);
    // The failed batch comes back after its nak's delay (1 s): the wait is on the redelivery, which takes that long.
    await arrived.until(() => handled.length >= 3);
    expect([...new Set(handled)].sort()).toEqual(['a', 'b', 'c']);
    await sub.stop();
  });

  // JetStream's durables outlive a process; the memory bus's consumers live and die with theirs.
  it.runIf(_name === 'nats')(
    'a consumer that replaces others starts where they had all acknowledged, and removes them',
    async () => {
      const bus = await makeBus();
      const arrived = signal();
      const seen = (_name: string) => {
        const got: number[] = [];
        return {
          got,
          handle: async (b: { data: Uint8Array }[]) => {
            got.push(...b.map((d) => Number(dec.decode(d.data))));
            arrived.saw();
          },
        };
      };
      const [a, b] = [seen('a'), seen('b')];
      const subA = await consumeEventBatches(bus, { durable: 'old-a', filter: 'evt.>' }, a.handle);
      const subB = await consumeEventBatches(bus, { durable: 'old-b', filter: 'evt.>' }, b.handle);
      for (let i = 0; i < 5; i++) await bus.publishEvent('evt.T.x.v1', enc.encode(String(i)), `c${i}`);
      await arrived.until(() => a.got.length === 5 && b.got.length === 5);
      await subB.stop();
      for (let i = 5; i < 8; i++) await bus.publishEvent('evt.T.x.v1', enc.encode(String(i)), `c${i}`);
      await arrived.until(() => a.got.length === 8);
      await subA.stop();
      // old-b stopped at 4: the merged consumer begins at 5, so nothing old-b missed is lost, and 0–4 are not replayed.
      const merged = seen('merged');
      const subM = await consumeEventBatches(
        bus,
        { durable: 'merged', filter: 'evt.>', continues: ['old-a', 'old-b'] },
        merged.handle,
      );
      await bus.publishEvent('evt.T.x.v1', enc.encode('8'), 'c8');
      await arrived.until(() => merged.got.includes(8));
      expect(merged.got).toEqual([5, 6, 7, 8]);
      await subM.stop();
      const jsm = await (bus as NatsBus).consumerNames();
      expect(jsm).toEqual(['merged']);
    },
    20_000,
  );
});
