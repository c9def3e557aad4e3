import { SANDBOX_DEFAULT_VIN, Seeded, centsToDecimal, stableId } from './index.ts';
import { thresholdPctFor } from './stateThresholds.ts';

/** The jurisdictions the sandbox titles vehicles in (the same list and seed the mco Title uses). */
export const SANDBOX_JURISDICTIONS = ['CA', 'TX', 'FL', 'NY', 'WA', 'IL'] as const;

/** State sales-tax rates in basis points (state-level rate; a total-loss settlement reimburses it on the ACV). */
const SALES_TAX_BPS: Record<string, number> = { CA: 725, TX: 625, FL: 600, NY: 400, WA: 650, IL: 625 };

/** Money in the spec's object form, from integer cents. */
export function money(cents: number) {
  return { amount: centsToDecimal(cents), currency: 'USD' };
}

/** Ratio of two cent amounts, rounded to four decimals for display; comparisons use the integers. */
export function ratio(numCents: number, denCents: number): number {
  return Math.round((numCents / denCents) * 10_000) / 10_000;
}

/**
 * The facts the sandbox holds about one VIN, shared by every noun that speaks of them, so one VIN has
 * one ACV, one repair estimate and one jurisdiction everywhere. All money is integer cents.
 */
export interface VehicleFacts {
  vin: string;
  jurisdiction: string;
  /** Whether the VIN has records on file (documents, inspections, a total-loss claim). */
  onFile: boolean;
  marketValueCents: number;
  priorDamageOffsetCents: number;
  /** Actual cash value: market value less the prior-damage offset. */
  acvCents: number;
  repairCostCents: number;
  thresholdPct: number;
  /** damageRatio ≥ thresholdRatio, compared exactly in integers. */
  totalLoss: boolean;
  salesTaxReimbursementCents: number;
  deductibleCents: number;
  ownerRetainedSalvageValueCents: number;
  settlementAmountCents: number;
  ownerRetainNetSettlementCents: number;
  condition: string;
  totalLossId: string;
}

export function vehicleFacts(vin: string): VehicleFacts {
  const jurisdiction = new Seeded(vin, 'mco').pick(SANDBOX_JURISDICTIONS);
  const s = new Seeded(vin, 'vehicle-facts');
  const isDefault = vin === SANDBOX_DEFAULT_VIN;
  // About one VIN in eight has nothing on file; the default VIN always has its records.
  const onFile = isDefault || s.next() >= 0.125;
  const marketValueCents = s.int(90, 340) * 10_000;
  const priorDamageOffsetCents = s.int(0, 8) * 25_000;
  const acvCents = marketValueCents - priorDamageOffsetCents;
  // The default VIN is repairable (as the spec's sandbox answer shows): its repairs stay under 75% of ACV.
  const repairPct = isDefault ? 42 : s.int(20, 115);
  const repairCostCents = Math.round((acvCents * repairPct) / 100 / 100) * 100 + s.int(0, 99);
  const thresholdPct = thresholdPctFor(jurisdiction);
  const totalLoss = repairCostCents * 100 >= thresholdPct * acvCents;
  const salesTaxReimbursementCents = Math.round((acvCents * (SALES_TAX_BPS[jurisdiction] ?? 0)) / 10_000);
  const deductibleCents = s.pick([250, 500, 1000]) * 100;
  const ownerRetainedSalvageValueCents = Math.round((acvCents * s.int(15, 30)) / 100);
  return {
    vin,
    jurisdiction,
    onFile,
    marketValueCents,
    priorDamageOffsetCents,
    acvCents,
    repairCostCents,
    thresholdPct,
    totalLoss,
    salesTaxReimbursementCents,
    deductibleCents,
    ownerRetainedSalvageValueCents,
    settlementAmountCents: acvCents + salesTaxReimbursementCents - deductibleCents,
    ownerRetainNetSettlementCents: acvCents - ownerRetainedSalvageValueCents - deductibleCents,
    condition: s.pick(['good', 'fair', 'clean', 'rough']),
    totalLossId: stableId('tl_', vin, 'totalLoss'),
  };
}
