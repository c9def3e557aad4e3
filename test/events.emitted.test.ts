import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capabilities, eventEnvelope, type Capability, type EventEnvelope } from '@vcs/contract';
import { createLogger, dec } from '@vcs/platform';
import { startEmbedded } from '@vcs/embedded';
import { mintKey, waitFor } from './support/harness.ts';
import { callThrough, sampleInput, type WalkContext } from './support/capabilityCalls.ts';

/** What one successful call must publish: its `run` and `success` events, plus exactly one of its `outcome` events. */
function expectedOf(c: Capability) {
  return {
    always: c.events.filter((e) => e.when === 'run' || e.when === 'success').map((e) => e.type).sort(),
    oneOf: c.events.filter((e) => e.when === 'outcome').map((e) => e.type),
  };
}

// Generated from the catalog: every capability is called once through its gate, then the stream is read back.
describe('events published on the bus, per capability', () => {
  let svc: Awaited<ReturnType<typeof startEmbedded>>;
  let baseUrl: string;
  const seen: EventEnvelope[] = [];
  const answered = new Map<string, string>();
  let consumer: { stop(): Promise<void> };

  beforeAll(async () => {
    svc = await startEmbedded({ pgliteDir: 'memory://', log: createLogger('test', 'silent') });
    baseUrl = await svc.app.listen({ port: 0, host: '127.0.0.1' });
    consumer = await svc.infra.bus.consumeEvents({ durable: 'test', filter: 'evt.>' }, async (d) => {
      seen.push(eventEnvelope.parse(JSON.parse(dec.decode(d.data))));
      d.ack();
    });
    const ctx: WalkContext = {};
    const shared = (await mintKey(baseUrl)).key;
    const ordered = [...capabilities].sort((a, b) => Number(b.name === 'poa.generate') - Number(a.name === 'poa.generate'));
    for (const c of ordered) {
      // apiKey capabilities get a key of their own, so rotating or revoking it does not lock the rest out.
      const key = c.noun === 'apiKey' ? (await mintKey(baseUrl)).key : shared;
      const r = await callThrough(baseUrl, c, sampleInput(c, ctx), key);
      answered.set(c.name, r.answer?.type ?? `HTTP ${r.status}`);
      if (c.name === 'poa.generate') ctx.documentId = r.answer.value.id;
    }
    const wanted = capabilities.filter((c) => answered.get(c.name) === 'OK')
      .reduce((n, c) => n + expectedOf(c).always.length + (expectedOf(c).oneOf.length ? 1 : 0), 0);
    await waitFor(async () => seen.filter((e) => e.capability && answered.get(e.capability) === 'OK').length >= wanted, 20_000);
  }, 120_000);
  afterAll(async () => { await consumer?.stop(); await svc?.stop(); });

  it.each(capabilities.map((c) => [c.name, c] as const))('%s publishes its declared events and only those', (name, c) => {
    if (answered.get(name) !== 'OK') {
      // Only the keys issue's rotate/revoke/scope may still refuse; no events follow a refusal.
      expect(['apiKey.rotate', 'apiKey.revoke', 'apiKey.scope']).toContain(name);
      return;
    }
    const mine = seen.filter((e) => e.capability === name);
    const { always, oneOf } = expectedOf(c);
    const outcome = mine.map((e) => e.type).filter((t) => oneOf.includes(t as never));
    expect(mine.map((e) => e.type).filter((t) => !oneOf.includes(t as never)).sort()).toEqual(always);
    expect(outcome.length).toBe(oneOf.length ? 1 : 0);
    for (const e of mine) expect(e).toMatchObject({ capability: name, simulated: true, account: expect.stringMatching(/^acct_/) });
  });
});
