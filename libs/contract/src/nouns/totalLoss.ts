import { z } from 'zod';
import { defineNoun, noInput, type Trigger } from '../capability.ts';
import { isoDate, money } from '../answer.ts';
import { price, vinOptional } from '../common.ts';
import { nothingOnFile } from './onFile.ts';

/** TotalLossSalvageFSM: the lifecycle a total loss moves through. */
export const totalLossFsmStates = [
  'ClaimOpened',
  'AcvDetermined',
  'TotalLossConfirmed',
  'Repairable',
  'SalvageAssigned',
  'SalvageSold',
  'Subrogation',
] as const;
const fsmState = z
  .enum(totalLossFsmStates)
  .meta({ description: 'State of the salvage lifecycle (TotalLossSalvageFSM)', example: 'TotalLossConfirmed' });

// The spec lists vin and asOf explicitly for the valued answers; noun rides along as on every answer.
const base = z.object({
  vin: z.string().meta({ description: 'The VIN the answer is about (the sandbox VIN when none was given)' }),
  noun: z.string().meta({ description: 'The noun that answered', example: 'totalLoss' }),
  asOf: isoDate,
});
const ref = (example: string, description: string) => z.string().regex(/^tl_/).meta({ description, example });
const statusValue = (example: string) =>
  base.extend({
    totalLoss: z.object({
      status: z.string().meta({ description: 'Where this stands, or no-total-loss-on-file', example }),
    }),
  });

const noTotalLoss = [nothingOnFile('no-total-loss-on-file')];
const forceTotalLoss: Trigger = {
  name: 'total-loss',
  forces: 'OK',
  description: 'Force totalLoss true (TotalLoss.confirmed) whatever the damage ratio.',
};

export const totalLoss = defineNoun({
  noun: 'totalLoss',
  pillar: 'services',
  displayPillar: 'Services',
  entity: 'TotalLoss',
  door: 'total-loss',
  summary:
    'Total-loss claims: actual cash value, the total-loss determination, settlement, owner retention, ' +
    'salvage and payoff.',
  capabilities: {
    taxRefund: {
      method: 'POST',
      path: '/total-loss/tax-refund',
      gate: 'offer',
      mode: 'sandbox',
      facet: 'commerce',
      summary: 'Claim the sales-tax refund owed on the totalled vehicle.',
      request: vinOptional,
      answer: 'TotalLossTaxRefund@1',
      value: statusValue('tax-refund-filed'),
      events: [
        { type: 'TotalLoss.taxRefunded@1', when: 'success' },
        { type: 'TotalLoss.failed@1', when: 'failure' },
      ],
      price: price.flat('5.00'),
      triggers: noTotalLoss,
    },
    acv: {
      method: 'POST',
      path: '/total-loss/acv',
      gate: 'key',
      mode: 'sandbox',
      facet: 'services',
      summary: 'Determine the actual cash value of the vehicle.',
      request: noInput,
      answer: 'TotalLossAcv@1',
      value: base.extend({
        acvRef: ref('tl_2b7c9d1e0f3a', 'Reference of this valuation'),
        acv: money.meta({ description: 'Actual cash value: market value less the prior-damage offset' }),
        basis: z.string().meta({ description: 'How the value was reached', example: 'comparable-vehicles' }),
        priorDamageOffset: money.meta({ description: 'Deduction for damage that predates the loss' }),
        condition: z.string().meta({ description: 'Pre-loss condition', example: 'good' }),
      }),
      events: [
        { type: 'TotalLoss.acvDetermined@1', when: 'success' },
        { type: 'TotalLoss.failed@1', when: 'failure' },
      ],
      price: price.takeRate('0.05', 'the appraisal fee', '5.00', '20.00'),
    },
    determine: {
      method: 'GET',
      path: '/total-loss/determine',
      gate: 'key',
      mode: 'sandbox',
      facet: 'data',
      summary: "Decide total loss: damage ratio (repair cost / ACV) against the state's threshold.",
      request: vinOptional,
      answer: 'TotalLossDetermine@1',
      value: base.extend({
        determinationRef: ref('tl_4d2e6f8a0b1c', 'Reference of this determination'),
        acv: money.meta({ description: 'Actual cash value' }),
        repairCost: money.meta({ description: 'Estimated cost of repair' }),
        thresholdRatio: z
          .number()
          .meta({ description: "The jurisdiction's total-loss threshold; 0.75 where none is fixed", example: 0.75 }),
        damageRatio: z.number().meta({ description: 'repairCost / acv, four decimals', example: 0.42 }),
        totalLoss: z.boolean().meta({ description: 'damageRatio ≥ thresholdRatio', example: false }),
        salvageRouteRequired: z
          .boolean()
          .meta({ description: 'Whether the vehicle must go to salvage', example: false }),
      }),
      events: [
        { type: 'TotalLoss.confirmed@1', when: 'outcome' },
        { type: 'TotalLoss.repairableDetermined@1', when: 'outcome' },
      ],
      price: price.free(),
      triggers: [forceTotalLoss],
    },
    negativeEquityCoordinate: {
      method: 'POST',
      path: '/total-loss/negative-equity-coordinate',
      gate: 'key',
      mode: 'sandbox',
      facet: 'services',
      summary: 'Coordinate negative equity (loan balance above the settlement) with the lender.',
      request: noInput,
      answer: 'TotalLossNegativeEquityCoordinate@1',
      value: statusValue('negative-equity-coordinated'),
      events: [{ type: 'TotalLoss.negativeEquityCoordinated@1', when: 'success' }],
      price: price.takeRate('0.05', 'the coordination fee', '5.00', '20.00'),
      triggers: noTotalLoss,
    },
    ownerRetain: {
      method: 'POST',
      path: '/total-loss/owner-retain',
      gate: 'offer',
      mode: 'sandbox',
      facet: 'services',
      summary: 'Let the owner keep the totalled vehicle: salvage value off the settlement, salvage brand applied.',
      request: vinOptional,
      answer: 'TotalLossOwnerRetain@1',
      value: base.extend({
        retentionRef: ref('tl_6f4a8b0c2d3e', 'Reference of this retention'),
        fsmState,
        acv: money.meta({ description: 'Actual cash value' }),
        ownerRetainedSalvageValue: money.meta({ description: 'Salvage value the owner keeps' }),
        netSettlement: money.meta({ description: 'acv − ownerRetainedSalvageValue − deductible' }),
        salvageBrandRequired: z
          .boolean()
          .meta({ description: 'Whether the title must carry a salvage brand', example: true }),
        brandApplied: z.string().meta({ description: 'Title brand applied', example: 'salvage' }),
        rebuildInspectionRequired: z.boolean().meta({
          description: 'Whether a rebuilt-vehicle inspection is required before it is road legal again',
          example: true,
        }),
      }),
      events: [{ type: 'TotalLoss.ownerRetained@1', when: 'success' }],
      price: price.takeRate('0.05', 'the retention processing fee', '7.50', '25.00'),
    },
    payoffCoordinate: {
      method: 'POST',
      path: '/total-loss/payoff-coordinate',
      gate: 'offer',
      mode: 'sandbox',
      facet: 'commerce',
      summary: 'Coordinate the loan payoff with the lienholder.',
      request: vinOptional,
      answer: 'TotalLossPayoffCoordinate@1',
      value: statusValue('payoff-coordinated'),
      events: [{ type: 'TotalLoss.payoffCoordinated@1', when: 'success' }],
      price: price.flat('5.00'),
      triggers: noTotalLoss,
    },
    priorDamageOffset: {
      method: 'GET',
      path: '/total-loss/prior-damage-offset',
      gate: 'none',
      mode: 'sandbox',
      facet: 'data',
      summary: 'Whether a prior-damage offset applies to the valuation.',
      request: noInput,
      answer: 'TotalLossPriorDamageOffset@1',
      value: statusValue('offset-applied'),
      events: [],
      price: price.free(),
      triggers: noTotalLoss,
    },
    salvage: {
      method: 'POST',
      path: '/total-loss/salvage',
      gate: 'offer',
      mode: 'sandbox',
      facet: 'services',
      summary: 'Assign the vehicle to a salvage pool.',
      request: vinOptional,
      answer: 'TotalLossSalvage@1',
      value: statusValue('salvage-assigned'),
      events: [{ type: 'TotalLoss.salvageAssigned@1', when: 'success' }],
      price: price.takeRate('0.05', 'the salvage assignment fee', '10.00', '30.00'),
      triggers: noTotalLoss,
    },
    settlement: {
      method: 'POST',
      path: '/total-loss/settlement',
      gate: 'offer',
      mode: 'sandbox',
      facet: 'commerce',
      summary: 'Settle the total loss: ACV plus sales tax, less the deductible.',
      request: vinOptional,
      answer: 'TotalLossSettlement@1',
      value: base.extend({
        settlementRef: ref('tl_8b6c0d2e4f5a', 'Reference of this settlement'),
        fsmState,
        acv: money.meta({ description: 'Actual cash value' }),
        salesTaxReimbursement: money.meta({ description: "Sales tax on the ACV at the jurisdiction's rate" }),
        deductible: money.meta({ description: 'The policy deductible' }),
        settlementAmount: money.meta({ description: 'acv + salesTaxReimbursement − deductible' }),
        salvageRetainedByCarrier: z
          .boolean()
          .meta({ description: 'Whether the carrier takes the salvage', example: true }),
      }),
      events: [
        { type: 'TotalLoss.settled@1', when: 'success' },
        { type: 'TotalLoss.failed@1', when: 'failure' },
      ],
      price: price.takeRate('0.01', 'the settlement amount', '50.00', '150.00'),
    },
    valuation: {
      method: 'GET',
      path: '/total-loss/valuation',
      gate: 'key',
      mode: 'sandbox',
      facet: 'data',
      summary: 'Where the valuation of the claim stands.',
      request: vinOptional,
      answer: 'TotalLossValuation@1',
      value: statusValue('valuation-complete'),
      events: [],
      price: price.free(),
      triggers: noTotalLoss,
    },
  },
});
