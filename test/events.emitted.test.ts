import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  capabilities,
  eventDataSchema,
  eventEnvelope,
  problemsOf,
  type Capability,
  type EventEnvelope,
} from '@vcs/contract';
import { createLogger, dec } from '@vcs/platform';
import { startEmbedded } from '@vcs/embedded';
import { call, mintKey, waitFor } from './support/harness.ts';
import { callThrough, sampleInput, type WalkContext } from './support/capabilityCalls.ts';

/** What one successful call must publish: its `run` and `success` events, plus exactly one of its `outcome` events. */
function expectedOf(c: Capability) {
  return {
    always: c.events
      .filter((e) => e.when === 'run' || e.when === 'success')
      .map((e) => e.type)
      .sort(),
    oneOf: c.events.filter((e) => e.when === 'outcome').map((e) => e.type),
  };
}

// Generated from the catalog: every capability is called once through its gate, then the stream is read back.
/** The spec's status strings for a VIN or account with nothing on file. */
const NOTHING_ON_FILE =
  /"status":"(no-document-on-file|nothing-to-revoke|no-total-loss-on-file|no-endpoint-recorded|no-delivery-recorded|no-deliveries-recorded|no-subscription-recorded)"/;

describe('events published on the bus, per capability', () => {
  let svc: Awaited<ReturnType<typeof startEmbedded>>;
  let baseUrl: string;
  const seen: EventEnvelope[] = [];
  const answered = new Map<string, string>();
  const nothingOnFile = new Set<string>();
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
    const ordered = [...capabilities].sort(
      (a, b) => Number(b.name === 'poa.generate') - Number(a.name === 'poa.generate'),
    );
    for (const c of ordered) {
      // apiKey capabilities get a key of their own, so rotating or revoking it does not lock the rest out.
      const key = c.noun === 'apiKey' ? (await mintKey(baseUrl)).key : shared;
      const r = await callThrough(baseUrl, c, sampleInput(c, ctx), key);
      answered.set(c.name, r.answer?.type ?? `HTTP ${r.status}`);
      if (NOTHING_ON_FILE.test(JSON.stringify(r.answer?.value ?? {}))) nothingOnFile.add(c.name);
      if (c.name === 'poa.generate') ctx.documentId = r.answer.value.id;
    }
    // A deal step's capability runs as a durable execution, which tells of its end with Execution.finished.
    const deal = await call(baseUrl, 'POST', '/buy/deals', {
      key: shared,
      body: { vin: '1HGCM82633A004352', buyer: { name: 'Ada Buyer', zip: '94103' } },
    });
    await call(baseUrl, 'POST', `/buy/deals/${deal.json.value.dealId}/advance`, { key: shared });
    await waitFor(async () => seen.some((e) => e.type === 'Execution.finished@1'), 20_000);
    // Each capability's own events are in once all is relayed and handled (the gate's Intent.*/Handoff.* events name a
    // capability too, so a total count could be reached while one capability's event was still on its way).
    const own = (name: string) =>
      seen.filter((e) => e.capability === name && !/^(Intent|Handoff|Execution)\./.test(e.type)).length;
    const waiting = capabilities.filter((c) => answered.get(c.name) === 'OK' && !nothingOnFile.has(c.name));
    await svc.settled();
    const short = waiting.filter(
      (c) => own(c.name) < expectedOf(c).always.length + (expectedOf(c).oneOf.length ? 1 : 0),
    );
    expect(short.map((c) => c.name)).toEqual([]);
  }, 120_000);
  afterAll(async () => {
    await consumer?.stop();
    await svc?.stop();
  });

  it.each(capabilities.map((c) => [c.name, c] as const))(
    '%s publishes its declared events and only those',
    (name, c) => {
      if (answered.get(name) !== 'OK') {
        expect.fail(`${name} answered ${answered.get(name)}`);
      }
      if (nothingOnFile.has(name)) {
        // The spec's "nothing on file" answers report that nothing happened: no event follows them.
        expect(seen.filter((e) => e.capability === name && !/^(Intent|Handoff|Execution)\./.test(e.type))).toEqual([]);
        return;
      }
      // Intent.* and Handoff.* are the gate's own bookkeeping (the offer settled, the handoff completed), not the capability's.
      const mine = seen.filter((e) => e.capability === name && !/^(Intent|Handoff|Execution)\./.test(e.type));
      const { always, oneOf } = expectedOf(c);
      const outcome = mine.map((e) => e.type).filter((t) => oneOf.includes(t as never));
      expect(
        mine
          .map((e) => e.type)
          .filter((t) => !oneOf.includes(t as never))
          .sort(),
      ).toEqual(always);
      expect(outcome.length).toBe(oneOf.length ? 1 : 0);
      for (const e of mine)
        expect(e).toMatchObject({ capability: name, simulated: true, account: expect.stringMatching(/^acct_/) });
    },
  );

  it("every event published (the capabilities' and the platform's: Intent, Handoff, Execution, Deal) matches its declared data schema", () => {
    const types = new Set<string>();
    for (const e of seen) {
      const schema = eventDataSchema(e.type, e.capability);
      expect(schema, `${e.type} is declared`).toBeDefined();
      const r = schema!.safeParse(e.data);
      expect(r.success ? [] : problemsOf(r.error.issues), `${e.type} from ${e.capability}`).toEqual([]);
      types.add(e.type.split('.')[0]!);
    }
    expect([...types]).toEqual(expect.arrayContaining(['Intent', 'Handoff', 'Execution', 'Deal']));
  });
});
