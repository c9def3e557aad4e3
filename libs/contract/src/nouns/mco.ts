import { z } from 'zod';
import { defineNoun } from '../capability.ts';
import { payer, price, statusOnly, valueBase, vinOptional } from '../common.ts';

/** Members every mco value carries: the Title as it stands. */
const title = valueBase.extend({
  titleId: z.string(),
  state: z.string().meta({ description: 'Jurisdiction code', example: 'CA' }),
  brands: z.array(z.string()).meta({ example: ['salvage'] }),
  docType: z.string().meta({ example: 'MCO' }),
  status: z.string().meta({ example: 'Ordered' }),
});

export const mco = defineNoun({
  noun: 'mco',
  pillar: 'data',
  displayPillar: 'Data',
  entity: 'Title',
  door: 'mcos',
  summary: "Manufacturer's certificates of origin: standing, verification, fees, assignment, conversion to a title and custody.",
  capabilities: {
    status: {
      method: 'GET', path: '/mcos/status', gate: 'none', mode: 'sandbox', facet: 'data',
      summary: 'The certificate on file for a VIN and where its title stands.',
      request: vinOptional, answer: 'McoStatus@1',
      value: title.extend({ certificate: z.object({ standing: z.string(), titlePosition: z.string() }) }),
      events: [], price: price.free(),
    },
    verify: {
      method: 'GET', path: '/mcos/verify', gate: 'none', mode: 'sandbox', facet: 'data',
      summary: 'Verify the certificate against the issuing manufacturer.',
      request: vinOptional, answer: 'McoVerify@1',
      value: title.extend({ verification: z.object({ verified: z.boolean(), status: z.string(), titleId: z.string(), titlePosition: z.string() }) }),
      events: [], price: price.free(),
    },
    fee: {
      method: 'POST', path: '/mcos/fee', gate: 'offer', mode: 'sandbox', facet: 'commerce',
      summary: 'Post the certificate fee.',
      request: vinOptional, answer: 'McoFee@1',
      value: title.extend({ fee: statusOnly, payer }),
      events: [{ type: 'Mco.feeRequested@1', when: 'run' }, { type: 'Mco.feeCharged@1', when: 'success' }],
      price: price.flat('3.00'),
    },
    assign: {
      method: 'POST', path: '/mcos/assign', gate: 'offer', mode: 'sandbox', facet: 'services',
      summary: 'Assign the certificate to the buyer.',
      request: vinOptional, answer: 'McoAssign@1',
      value: title.extend({ assignment: z.object({ status: z.string(), titleId: z.string(), titlePosition: z.string() }) }),
      events: [{ type: 'Mco.assignRequested@1', when: 'run' }, { type: 'Mco.assigned@1', when: 'success' }],
      price: price.takeRate('0.05', 'the title service fee', '2.50', '8.00'),
    },
    pay: {
      failureCode: 'payment-failed',
      method: 'POST', path: '/mcos/pay', gate: 'offer', mode: 'sandbox', facet: 'commerce',
      summary: 'Pay the certificate and title fees.',
      request: vinOptional, answer: 'McoPay@1',
      value: title.extend({ payment: statusOnly, payer }),
      events: [{ type: 'Mco.payRequested@1', when: 'run' }, { type: 'Mco.paid@1', when: 'success' }, { type: 'Mco.payFailed@1', when: 'failure' }],
      price: price.takeRate('0.029', 'the fees paid', '2.90', '8.00'),
    },
    convert: {
      method: 'POST', path: '/mcos/convert', gate: 'offer', mode: 'sandbox', facet: 'services',
      summary: 'Convert the certificate into a state title.',
      request: vinOptional, answer: 'McoConvert@1',
      value: title.extend({ conversion: z.object({ status: z.string(), titleId: z.string(), titlePosition: z.string() }) }),
      events: [{ type: 'Mco.convertRequested@1', when: 'run' }, { type: 'Mco.converted@1', when: 'success' }, { type: 'Mco.convertFailed@1', when: 'failure' }],
      price: price.takeRate('0.05', 'the title service fee', '4.00', '12.00'),
    },
    custody: {
      method: 'GET', path: '/mcos/custody', gate: 'none', mode: 'sandbox', facet: 'data',
      summary: 'Who holds the certificate now.',
      request: vinOptional, answer: 'McoCustody@1',
      value: title.extend({ custody: z.object({ status: z.string(), titlePosition: z.string() }) }),
      events: [{ type: 'Mco.custodyTracked@1', when: 'success' }], price: price.free(),
    },
    receive: {
      method: 'POST', path: '/mcos/receive', gate: 'offer', mode: 'sandbox', facet: 'services',
      summary: 'Record receipt of the physical certificate.',
      request: vinOptional, answer: 'McoReceive@1',
      value: title.extend({ receipt: z.object({ status: z.string(), titleId: z.string() }) }),
      events: [{ type: 'Mco.receiveRequested@1', when: 'run' }, { type: 'Mco.received@1', when: 'success' }],
      price: price.flat('1.50'),
    },
  },
});
