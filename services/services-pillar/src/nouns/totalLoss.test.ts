import { describe, expect, it } from 'vitest';
import { expectedCheckDigit, totalLoss } from '@vcs/contract';
import type { HandlerTools } from '@vcs/platform';
import { SANDBOX_DEFAULT_VIN, thresholdPctFor, vehicleFacts } from '@vcs/sandbox';
import { totalLossHandlers } from './totalLoss.ts';

const tools = (trigger: string | null = null) =>
  ({ ctx: { environment: 'sandbox', trigger } }) as unknown as HandlerTools;
const cents = (m: { amount: string }) => Math.round(Number(m.amount) * 100);

/** Valid VINs (check digit computed) with serials counting up: a deterministic spread of sandbox vehicles. */
function sampleVins(n: number): string[] {
  return Array.from({ length: n }, (_, i) => {
    const draft = `1FTFW1E5${'0'}KF${String(100000 + i).slice(-6)}`;
    return draft.slice(0, 8) + expectedCheckDigit(draft) + draft.slice(9);
  });
}
const vins = sampleVins(200);

async function answers(vin: string, trigger: string | null = null) {
  const value = async (r: Promise<any>) => (await r).value;
  return {
    determine: await value(totalLossHandlers.determine({ vin }, tools(trigger))),
    ownerRetain: await value(totalLossHandlers.ownerRetain({ vin }, tools())),
    settlement: await value(totalLossHandlers.settlement({ vin }, tools())),
  };
}

describe('totalLoss arithmetic', () => {
  it('answers the default VIN as the spec shows: repairable, threshold 0.75, damageRatio = repairCost / acv', async () => {
    const a = await answers(SANDBOX_DEFAULT_VIN);
    expect(a.determine).toMatchObject({ thresholdRatio: 0.75, totalLoss: false, salvageRouteRequired: false });
    expect(a.determine.damageRatio).toBeCloseTo(cents(a.determine.repairCost) / cents(a.determine.acv), 4);
    const acv = ((await totalLossHandlers.acv({}, tools())) as any).value;
    expect(acv.vin).toBe(SANDBOX_DEFAULT_VIN);
    expect([acv.acv, a.ownerRetain.acv, a.settlement.acv]).toEqual([a.determine.acv, a.determine.acv, a.determine.acv]);
  });

  it.each(vins.slice(0, 60))(
    'agrees with itself for %s: one ACV, real ratios, settlement and net settlement sums',
    async (vin) => {
      const { determine: d, ownerRetain: o, settlement: s } = await answers(vin);
      const f = vehicleFacts(vin);
      expect(o.acv).toEqual(d.acv);
      expect(s.acv).toEqual(d.acv);
      expect(cents(d.acv)).toBe(f.acvCents);
      expect(d.damageRatio).toBeCloseTo(cents(d.repairCost) / cents(d.acv), 4);
      expect(d.thresholdRatio).toBe(thresholdPctFor(f.jurisdiction) / 100);
      // Compared in integer cents so a ratio at the threshold is decided exactly.
      expect(d.totalLoss).toBe(cents(d.repairCost) * 100 >= Math.round(d.thresholdRatio * 100) * cents(d.acv));
      expect(cents(s.settlementAmount)).toBe(cents(s.acv) + cents(s.salesTaxReimbursement) - cents(s.deductible));
      expect(cents(o.netSettlement)).toBe(cents(o.acv) - cents(o.ownerRetainedSalvageValue) - f.deductibleCents);
      expect([o.fsmState, s.fsmState]).toEqual(['TotalLossConfirmed', 'TotalLossConfirmed']);
      for (const m of [d.acv, d.repairCost, o.netSettlement, s.settlementAmount])
        expect(m.amount).toMatch(/^\d+\.\d{2}$/);
    },
  );

  it("applies each jurisdiction's own threshold, and both outcomes occur", async () => {
    const byState = new Map<string, number>();
    const outcomes = new Set<boolean>();
    for (const vin of vins) {
      const d = (await answers(vin)).determine;
      byState.set(vehicleFacts(vin).jurisdiction, d.thresholdRatio);
      outcomes.add(d.totalLoss);
    }
    expect(byState.get('TX')).toBe(1);
    expect(byState.get('FL')).toBe(0.8);
    expect(byState.get('NY')).toBe(0.75);
    expect(byState.get('CA')).toBe(0.75); // total-loss-formula state: the default
    expect(outcomes).toEqual(new Set([true, false]));
  });

  it('knows the real fixed thresholds and defaults to 0.75 elsewhere', () => {
    expect([
      thresholdPctFor('TX'),
      thresholdPctFor('FL'),
      thresholdPctFor('NY'),
      thresholdPctFor('IA'),
      thresholdPctFor('OK'),
      thresholdPctFor('CO'),
    ]).toEqual([100, 80, 75, 50, 60, 100]);
    expect(thresholdPctFor('CA')).toBe(75);
    expect(thresholdPctFor('ZZ')).toBe(75);
  });

  it('forces a total loss under the total-loss trigger and picks the outcome event', async () => {
    const r = (await totalLossHandlers.determine({ vin: SANDBOX_DEFAULT_VIN }, tools('total-loss'))) as any;
    expect(r.value).toMatchObject({ totalLoss: true, salvageRouteRequired: true });
    expect(r.events).toEqual(['TotalLoss.confirmed@1']);
    const plain = (await totalLossHandlers.determine({ vin: SANDBOX_DEFAULT_VIN }, tools())) as any;
    expect(plain.events).toEqual(['TotalLoss.repairableDetermined@1']);
    expect(totalLoss.capabilities.determine.triggers.map((t) => t.name)).toContain('total-loss');
  });

  it('answers no-total-loss-on-file, with no event, for a VIN with nothing on file', async () => {
    const none = vins.find((v) => !vehicleFacts(v).onFile)!;
    expect(none).toBeDefined();
    const r = (await totalLossHandlers.valuation({ vin: none }, tools())) as any;
    expect(r.value.totalLoss.status).toBe('no-total-loss-on-file');
    expect(r.events).toEqual([]);
    const forced = (await totalLossHandlers.salvage({ vin: SANDBOX_DEFAULT_VIN }, tools('nothing-on-file'))) as any;
    expect(forced.value.totalLoss.status).toBe('no-total-loss-on-file');
  });
});
