import type { totalLoss } from '@vcs/contract';
import { ok, type HandlerTools, type NounHandlers } from '@vcs/platform';
import { money, ratio, sandboxDate, stableId, vehicleFacts } from '@vcs/sandbox';
import { triggerOf, vinOf } from './sandboxInput.ts';

// Every figure comes from vehicleFacts(vin): one VIN has one ACV in acv, determine, ownerRetain and settlement.
const base = (vin: string) => ({ vin, noun: 'totalLoss', asOf: sandboxDate() });
const ref = (vin: string, kind: string) => stableId('tl_', vin, `totalLoss|${kind}`);

/** A `{totalLoss: {status}}` answer; with nothing on file (VIN facts or trigger) it says so and emits nothing. */
function statusAnswer(input: object, tools: HandlerTools, status: (vin: string) => string) {
  const vin = vinOf(input);
  if (!vehicleFacts(vin).onFile || triggerOf(tools) === 'nothing-on-file') {
    return ok({ ...base(vin), totalLoss: { status: 'no-total-loss-on-file' } }, { events: [] });
  }
  return ok({ ...base(vin), totalLoss: { status: status(vin) } });
}

export const totalLossHandlers: NounHandlers<typeof totalLoss> = {
  async acv(input) {
    const f = vehicleFacts(vinOf(input));
    return ok({
      ...base(f.vin),
      acvRef: ref(f.vin, 'acv'),
      acv: money(f.acvCents),
      basis: 'comparable-vehicles',
      priorDamageOffset: money(f.priorDamageOffsetCents),
      condition: f.condition,
    });
  },
  async determine(input, tools) {
    const f = vehicleFacts(vinOf(input));
    const isTotal = f.totalLoss || triggerOf(tools) === 'total-loss';
    return ok(
      {
        ...base(f.vin),
        determinationRef: ref(f.vin, 'determination'),
        acv: money(f.acvCents),
        repairCost: money(f.repairCostCents),
        thresholdRatio: f.thresholdPct / 100,
        damageRatio: ratio(f.repairCostCents, f.acvCents),
        totalLoss: isTotal,
        salvageRouteRequired: isTotal,
      },
      { events: [isTotal ? 'TotalLoss.confirmed@1' : 'TotalLoss.repairableDetermined@1'] },
    );
  },
  async ownerRetain(input) {
    const f = vehicleFacts(vinOf(input));
    return ok({
      ...base(f.vin),
      retentionRef: ref(f.vin, 'retention'),
      fsmState: 'TotalLossConfirmed',
      acv: money(f.acvCents),
      ownerRetainedSalvageValue: money(f.ownerRetainedSalvageValueCents),
      netSettlement: money(f.ownerRetainNetSettlementCents),
      salvageBrandRequired: true,
      brandApplied: 'salvage',
      rebuildInspectionRequired: true,
    });
  },
  async settlement(input) {
    const f = vehicleFacts(vinOf(input));
    return ok({
      ...base(f.vin),
      settlementRef: ref(f.vin, 'settlement'),
      fsmState: 'TotalLossConfirmed',
      acv: money(f.acvCents),
      salesTaxReimbursement: money(f.salesTaxReimbursementCents),
      deductible: money(f.deductibleCents),
      settlementAmount: money(f.settlementAmountCents),
      salvageRetainedByCarrier: true,
    });
  },
  taxRefund: async (input, tools) => statusAnswer(input, tools, () => 'tax-refund-filed'),
  negativeEquityCoordinate: async (input, tools) => statusAnswer(input, tools, () => 'negative-equity-coordinated'),
  payoffCoordinate: async (input, tools) => statusAnswer(input, tools, () => 'payoff-coordinated'),
  priorDamageOffset: async (input, tools) =>
    statusAnswer(input, tools, (vin) =>
      vehicleFacts(vin).priorDamageOffsetCents > 0 ? 'offset-applied' : 'no-prior-damage',
    ),
  salvage: async (input, tools) => statusAnswer(input, tools, () => 'salvage-assigned'),
  valuation: async (input, tools) => statusAnswer(input, tools, () => 'valuation-complete'),
};
