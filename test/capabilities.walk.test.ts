import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerSchema, capabilities, type Capability } from '@vcs/contract';
import { call, mintKey, modes, startHarness, type Harness } from './support/harness.ts';
import { callThrough, sampleInput, type WalkContext } from './support/capabilityCalls.ts';

/**
 * Capabilities whose answer differs per call by design: they create a new record (a fresh id or timestamp),
 * or they answer about the calling key, and each apiKey call here uses a fresh key.
 */
const differsEachCall = new Set([
  'deal.open',
  'apiKey.create',
  'apiKey.mint',
  'apiKey.rotate',
  'apiKey.revoke',
  'apiKey.scope',
]);

// poa.notarize needs the id poa.generate answered, so generate runs first; otherwise catalog order.
const ordered: Capability[] = [...capabilities].sort(
  (a, b) => Number(b.name === 'poa.generate') - Number(a.name === 'poa.generate'),
);

describe.each(modes())('every catalog capability over HTTP (%s)', (mode) => {
  let h: Harness;
  let key: string;
  const ctx: WalkContext = {};
  beforeAll(async () => {
    h = await startHarness(mode);
    key = (await mintKey(h.baseUrl)).key;
  }, 90_000);
  afterAll(async () => {
    await h?.stop();
  });

  it.each(ordered.map((c) => [c.name, c] as const))('%s answers its catalog shape, the same twice', async (name, c) => {
    // Each apiKey capability gets its own key, so rotating or revoking one does not lock the walk out.
    const callerKey = c.noun === 'apiKey' ? (await mintKey(h.baseUrl)).key : key;
    const input = sampleInput(c, ctx);
    const first = await callThrough(h.baseUrl, c, input, callerKey);
    expect({
      name,
      status: first.status,
      type: first.answer?.type,
      value: first.answer?.type === 'OK' ? undefined : first.answer?.value,
    }).toEqual({ name, status: 200, type: 'OK', value: undefined });
    const parsed = answerSchema(c.value).safeParse(first.answer);
    expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
    expect(first.answer.answers).toBe(c.answer);
    expect(first.answer.evidence).toEqual(first.answer.value);
    expect(first.answer.events).toEqual([]);
    expect(first.answer.provenance).toMatchObject({ simulated: true, environment: 'sandbox' });
    if (name === 'poa.generate') ctx.documentId = first.answer.value.id;
    if (differsEachCall.has(name)) return;
    const second = await callThrough(h.baseUrl, c, input, c.noun === 'apiKey' ? (await mintKey(h.baseUrl)).key : key);
    expect(second.answer?.value).toEqual(first.answer.value);
  });

  it('one VIN has one ACV in totalLoss acv, determine, ownerRetain and settlement; determine is repairable at 0.75', async () => {
    const value = async (path: string, body?: unknown) => {
      const c = capabilities.find((x) => x.path === path.split('?')[0])!;
      const r = await callThrough(
        h.baseUrl,
        c,
        (body ?? Object.fromEntries(new URLSearchParams(path.split('?')[1] ?? ''))) as Record<string, unknown>,
        key,
      );
      expect(r.status).toBe(200);
      return r.answer.value;
    };
    const vin = '1HGCM82633A004352';
    const acv = await value('/total-loss/acv', {});
    const determine = await value(`/total-loss/determine?vin=${vin}`);
    const retain = await value('/total-loss/owner-retain', { vin });
    const settlement = await value('/total-loss/settlement', { vin });
    expect(acv.vin).toBe(vin);
    expect([determine.acv, retain.acv, settlement.acv]).toEqual([acv.acv, acv.acv, acv.acv]);
    expect(determine).toMatchObject({ thresholdRatio: 0.75, totalLoss: false });
    const cents = (m: { amount: string }) => Math.round(Number(m.amount) * 100);
    expect(determine.damageRatio).toBeCloseTo(cents(determine.repairCost) / cents(determine.acv), 4);
    expect(cents(settlement.settlementAmount)).toBe(
      cents(settlement.acv) + cents(settlement.salesTaxReimbursement) - cents(settlement.deductible),
    );
    expect(cents(retain.netSettlement)).toBe(
      cents(retain.acv) - cents(retain.ownerRetainedSalvageValue) - cents(settlement.deductible),
    );
    // The total-loss trigger forces the other outcome.
    const forced = await call(h.baseUrl, 'GET', `/total-loss/determine?vin=${vin}`, {
      key,
      headers: { 'sandbox-trigger': 'total-loss' },
    });
    expect(forced.json.value).toMatchObject({ totalLoss: true, salvageRouteRequired: true, acv: acv.acv });
  });
});
