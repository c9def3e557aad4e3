import type { Bus, ConsumeOptions, EventDelivery } from '../bus/types.ts';

/**
 * Consume events in batches: what arrives while a batch is being handled is handled together next, so a consumer
 * under load runs one statement per batch instead of one per event. Batches run one at a time, in stream order;
 * every event of a batch is acked once its handler resolves, or naked (redelivered) if it throws. Handlers must
 * be idempotent per event, as every consumer of an at-least-once stream already is.
 */
export async function consumeEventBatches(
  bus: Bus,
  opts: ConsumeOptions & { maxBatch?: number },
  handle: (batch: EventDelivery[]) => Promise<void>,
): Promise<{ stop(): Promise<void> }> {
  const max = opts.maxBatch ?? 100;
  const pending: EventDelivery[] = [];
  let draining: Promise<void> | undefined;
  const drain = async () => {
    while (pending.length) {
      const batch = pending.splice(0, max);
      try {
        await handle(batch);
        for (const d of batch) d.ack();
      } catch {
        for (const d of batch) d.nak(1000);
      }
    }
    draining = undefined;
  };
  // The bus hands over the next event as soon as this returns; the batch forms while the previous one runs.
  const sub = await bus.consumeEvents(opts, async (d) => {
    pending.push(d);
    draining ??= new Promise<void>((r) => setImmediate(r)).then(drain);
  });
  return {
    async stop() {
      await sub.stop();
      await draining;
    },
  };
}
