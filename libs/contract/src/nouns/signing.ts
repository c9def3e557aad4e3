import { z } from 'zod';
import { defineNoun } from '../capability.ts';
import { isoDate } from '../answer.ts';
import { payer, price, signer, valueBase, vinOptional } from '../common.ts';

const packet = z.object({
  packetId: z.string(),
  kind: z.string(),
  position: z.string().meta({ example: 'Draft' }),
  subject: z.object({ dealId: z.string(), position: z.string().meta({ example: 'QUOTED' }) }),
});
const fee = z.object({ amountCents: z.number().int(), currency: z.string(), per: z.string() });
const quoteValue = valueBase.extend({ fee, payer });

export const signing = defineNoun({
  noun: 'signing',
  pillar: 'services',
  displayPillar: 'Services',
  entity: 'SignatureCeremony',
  door: 'signings',
  summary: 'Signature ceremonies for a vehicle deal: the packet, its signers, fees, scheduling and completion.',
  capabilities: {
    status: {
      method: 'GET', path: '/signings/status', gate: 'none', mode: 'sandbox', facet: 'data',
      summary: 'The signature ceremony for a VIN: its packet, standing and position.',
      request: vinOptional, answer: 'SigningStatus@1',
      value: valueBase.extend({
        ceremony: z.object({ id: z.string(), packet, standing: z.string().meta({ example: 'not-yet-routed' }), position: z.string() }),
      }),
      events: [], price: price.free(),
    },
    packageLookup: {
      method: 'GET', path: '/signings/package-lookup', gate: 'none', mode: 'sandbox', facet: 'data',
      summary: 'The signing package (packet) on file for a VIN.',
      request: vinOptional, answer: 'SigningPackageLookup@1',
      value: valueBase.extend({ package: packet }),
      events: [], price: price.free(),
    },
    completenessCheck: {
      method: 'GET', path: '/signings/completeness-check', gate: 'none', mode: 'sandbox', facet: 'data',
      summary: 'Whether the packet is complete: each check and each signer.',
      request: vinOptional, answer: 'SigningCompletenessCheck@1',
      value: valueBase.extend({
        completeness: z.object({
          complete: z.boolean(), standing: z.string(), position: z.string(),
          checks: z.array(z.object({ check: z.string().meta({ example: 'packet-on-file' }), pass: z.boolean() })),
          signers: z.array(signer),
        }),
      }),
      events: [], price: price.free(),
    },
    quote: {
      method: 'POST', path: '/signings/quote', gate: 'offer', mode: 'sandbox', facet: 'commerce',
      summary: 'Quote the signing fee and the payer for the ceremony.',
      request: vinOptional, answer: 'SigningQuote@1', value: quoteValue,
      events: [{ type: 'Signing.quoteRequested@1', when: 'run' }, { type: 'Signing.quoted@1', when: 'success' }],
      price: price.flat('1.00'),
    },
    fee: {
      method: 'POST', path: '/signings/fee', gate: 'offer', mode: 'sandbox', facet: 'commerce',
      summary: 'Charge the signing fee.',
      request: vinOptional, answer: 'SigningFee@1', value: quoteValue,
      events: [{ type: 'Signing.feeRequested@1', when: 'run' }, { type: 'Signing.feeCharged@1', when: 'success' }],
      price: price.flat('2.00'),
    },
    schedule: {
      method: 'POST', path: '/signings/schedule', gate: 'offer', mode: 'sandbox', facet: 'services',
      summary: 'Schedule the signing session.',
      request: vinOptional, answer: 'SigningSchedule@1',
      value: valueBase.extend({ session: z.object({ id: z.string(), packetId: z.string(), status: z.string(), scheduledFor: isoDate }) }),
      events: [{ type: 'Signing.scheduleRequested@1', when: 'run' }, { type: 'Signing.scheduled@1', when: 'success' }],
      price: price.takeRate('0.05', 'the signing agent fee', '7.50', '15.00'),
    },
    pay: {
      failureCode: 'payment-failed',
      method: 'POST', path: '/signings/pay', gate: 'offer', mode: 'sandbox', facet: 'commerce',
      summary: 'Pay the signing fee.',
      request: vinOptional, answer: 'SigningPay@1',
      value: valueBase.extend({
        payment: z.object({ id: z.string(), amountCents: z.number().int(), currency: z.string(), status: z.string().meta({ example: 'settled' }) }),
        payer,
      }),
      events: [{ type: 'Signing.payRequested@1', when: 'run' }, { type: 'Signing.paid@1', when: 'success' }, { type: 'Signing.payFailed@1', when: 'failure' }],
      price: price.takeRate('0.029', 'the amount paid', '4.35', '10.00'),
    },
    complete: {
      method: 'POST', path: '/signings/complete', gate: 'offer', mode: 'sandbox', facet: 'services',
      summary: 'Complete the ceremony.',
      request: vinOptional, answer: 'SigningComplete@1',
      value: valueBase.extend({ completion: z.object({ status: z.string(), standing: z.string(), position: z.string() }) }),
      events: [{ type: 'Signing.completeRequested@1', when: 'run' }, { type: 'Signing.completed@1', when: 'success' }],
      price: price.takeRate('0.05', 'the ceremony fee', '5.00', '12.00'),
    },
    collectSignatures: {
      method: 'POST', path: '/signings/collect-signatures', gate: 'offer', mode: 'sandbox', facet: 'services',
      summary: 'Route the packet and collect every signer\'s signature.',
      request: vinOptional, answer: 'SigningCollectSignatures@1',
      value: valueBase.extend({ collection: z.object({ status: z.string(), position: z.string() }) }),
      events: [{ type: 'Signing.collectSignaturesRequested@1', when: 'run' }, { type: 'Signing.signaturesCollected@1', when: 'success' }],
      price: price.takeRate('0.05', 'the ceremony fee', '5.00', '12.00'),
    },
    dispatchAgent: {
      method: 'POST', path: '/signings/dispatch-agent', gate: 'offer', mode: 'sandbox', facet: 'services',
      summary: 'Dispatch a mobile signing agent to the signers.',
      request: vinOptional, answer: 'SigningDispatchAgent@1',
      value: valueBase.extend({
        dispatch: z.object({ status: z.string(), id: z.string(), ceremonyId: z.string(), packetId: z.string(), arrivesOn: isoDate }),
      }),
      events: [{ type: 'Signing.dispatchAgentRequested@1', when: 'run' }, { type: 'Signing.agentDispatched@1', when: 'success' }],
      price: price.takeRate('0.1', 'the agent\'s visit fee', '15.00', '30.00'),
    },
    witness: {
      method: 'POST', path: '/signings/witness', gate: 'offer', mode: 'sandbox', facet: 'services',
      summary: 'Witness the signatures.',
      request: vinOptional, answer: 'SigningWitness@1',
      value: valueBase.extend({ witness: z.object({ status: z.string(), standing: z.string(), position: z.string() }) }),
      events: [{ type: 'Signing.witnessRequested@1', when: 'run' }, { type: 'Signing.witnessed@1', when: 'success' }],
      price: price.takeRate('0.05', 'the witness fee', '2.50', '6.00'),
    },
  },
});
