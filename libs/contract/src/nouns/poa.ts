import { z } from 'zod';
import { defineNoun, noInput } from '../capability.ts';
import { price, signer, valueBase } from '../common.ts';
import { vin } from '../vin.ts';
import { nothingOnFile } from './onFile.ts';

const noDocument = [nothingOnFile('no-document-on-file')];

const status = (example: string, description = 'Where this stands') => z.string().meta({ description, example });

/** A document as other poa answers refer to it: its id (null when none is on file) and status. */
const documentRef = z.object({
  id: z.string().nullable().meta({
    description: "The VIN's power-of-attorney document id; null when none is on file",
    example: 'doc_3f2a9c1e7b4d',
  }),
  status: status('Draft', 'Document status, or no-document-on-file'),
});

const usState = z
  .string()
  .regex(/^[A-Z]{2}$/, 'a 2-letter US state code such as CA')
  .meta({ description: 'Governing state of the power of attorney', example: 'CA' });

export const poaDocumentValue = valueBase.extend({
  id: z.string().meta({ description: 'Document id, one per VIN', example: 'doc_3f2a9c1e7b4d' }),
  type: z.string().meta({ description: 'Document type', example: 'vehicle-power-of-attorney' }),
  subjectId: z.string().meta({ description: 'The deal the document serves', example: 'deal_7c1d0e2f9a3b' }),
  hash: z
    .string()
    .regex(/^sha256:[0-9a-f]{64}$/)
    .meta({
      description: 'Digest of the rendered document',
      example: 'sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
    }),
  signers: z.array(signer).meta({ description: 'Who signs the document' }),
  status: status('Draft', 'Document status'),
  generation: z.object({
    status: status('generated'),
    id: z.string().meta({ description: 'Generation run id', example: 'gen_1a2b3c4d5e6f' }),
    position: status('Draft', 'Lifecycle position of the document'),
  }),
});

export const poa = defineNoun({
  noun: 'poa',
  pillar: 'services',
  displayPillar: 'Services',
  entity: 'Document',
  door: 'poas',
  summary:
    'Vehicle powers of attorney: generate, execute, issue the secure form, notarize, revoke and absent-buyer signing.',
  capabilities: {
    verify: {
      method: 'GET',
      path: '/poas/verify',
      gate: 'none',
      mode: 'sandbox',
      facet: 'data',
      summary: 'Verify the power of attorney on file.',
      request: noInput,
      answer: 'PoaVerify@1',
      value: valueBase.extend({
        document: z.object({ status: status('Draft', 'Document status, or no-document-on-file') }),
        verification: z.object({ status: status('verified') }),
      }),
      events: [{ type: 'Poa.verified@1', when: 'success' }],
      price: price.free(),
      triggers: noDocument,
    },
    generate: {
      method: 'POST',
      path: '/poas/generate',
      gate: 'offer',
      mode: 'sandbox',
      facet: 'services',
      mandate: 'when-delegated',
      summary: 'Generate a power of attorney for a VIN under a governing state.',
      request: z
        .object({
          vin,
          state: usState,
          principal: z
            .object({
              name: z.string().min(1).meta({ description: 'Who grants the power', example: 'Avery Chen' }),
              email: z
                .string()
                .email()
                .optional()
                .meta({ description: 'Where the principal is reached', example: 'avery@example.com' }),
            })
            .strict()
            .optional()
            .meta({ description: 'The principal granting the power; the sandbox principal when absent' }),
          brand: z
            .string()
            .min(1)
            .optional()
            .meta({ description: 'White-label brand printed on the document', example: 'Bayview Motors' }),
          authority: z
            .string()
            .min(1)
            .optional()
            .meta({ description: 'Scope of authority granted', example: 'title-and-registration' }),
        })
        .strict(),
      answer: 'PoaDocument@1',
      value: poaDocumentValue,
      events: [
        { type: 'Poa.generated@1', when: 'success' },
        { type: 'Document.generated@1', when: 'success' },
      ],
      price: price.takeRate('0.05', 'the document service fee', '2.50', '10.00'),
      notes: ['Delegated calls require a typed Mandate {ceiling, perAction, expires, tripwires}'],
    },
    execute: {
      method: 'POST',
      path: '/poas/execute',
      gate: 'key',
      mode: 'sandbox',
      facet: 'services',
      summary: 'Execute the power of attorney on file.',
      request: noInput,
      answer: 'PoaExecute@1',
      value: valueBase.extend({ document: documentRef, execution: z.object({ status: status('executed') }) }),
      events: [{ type: 'Poa.executed@1', when: 'success' }],
      triggers: noDocument,
      price: price.takeRate('0.05', 'the document service fee', '2.50', '10.00'),
    },
    secureFormIssue: {
      method: 'POST',
      path: '/poas/secure-form-issue',
      gate: 'key',
      mode: 'sandbox',
      facet: 'services',
      summary: "Issue the state's secure power-of-attorney form for the document.",
      request: noInput,
      answer: 'PoaSecureFormIssue@1',
      value: valueBase.extend({
        document: documentRef,
        form: z.object({
          id: z.string().meta({ description: 'Secure form serial', example: 'spf_0a1b2c3d4e5f' }),
          kind: status('secure-poa-form', 'Form kind'),
          status: status('issued'),
        }),
      }),
      events: [{ type: 'Poa.secureFormIssued@1', when: 'success' }],
      triggers: noDocument,
      price: price.takeRate('0.05', 'the state form fee', '1.50', '6.00'),
    },
    notarize: {
      method: 'POST',
      path: '/poas/notarize',
      gate: 'human',
      mode: 'sandbox',
      facet: 'services',
      summary: 'Notarize the document, in person or by remote online notarization.',
      request: z
        .object({
          documentId: z
            .string()
            .min(1)
            .meta({ description: 'The document to notarize (from poa.generate)', example: 'doc_3f2a9c1e7b4d' }),
          mode: z
            .enum(['in-person', 'ron'])
            .optional()
            .meta({ description: 'In person, or remote online notarization', example: 'ron' }),
        })
        .strict(),
      answer: 'Notarization@1',
      value: valueBase.extend({
        document: documentRef,
        stamp: z.object({ status: status('notarized', 'Notary stamp status') }),
      }),
      events: [
        { type: 'Document.filed@1', when: 'success' },
        { type: 'Document.notarized@1', when: 'success' },
      ],
      price: price.takeRate('0.1', 'the notary fee', '2.50', '25.00'),
      human: {
        verb: 'notarize',
        credential: 'notary',
        terminus: { name: 'Sandbox Notary Desk', staffed: 'Mon-Fri 08:00-20:00 America/New_York', price: '25.00' },
      },
    },
    revoke: {
      method: 'POST',
      path: '/poas/revoke',
      gate: 'key',
      mode: 'sandbox',
      facet: 'services',
      summary: 'Revoke the power of attorney on file.',
      request: noInput,
      answer: 'PoaRevoke@1',
      value: valueBase.extend({
        document: documentRef,
        revocation: z.object({ status: status('revoked', 'Revocation status, or nothing-to-revoke') }),
      }),
      events: [{ type: 'Poa.revoked@1', when: 'success' }],
      triggers: [nothingOnFile('nothing-to-revoke')],
      price: price.takeRate('0.05', 'the document service fee', '1.00', '5.00'),
    },
    absentBuyerSign: {
      method: 'POST',
      path: '/poas/absent-buyer-sign',
      gate: 'key',
      mode: 'sandbox',
      facet: 'services',
      summary: 'Sign for an absent buyer under the power of attorney.',
      request: noInput,
      answer: 'PoaAbsentBuyerSign@1',
      value: valueBase.extend({
        document: documentRef,
        absentSigning: z.object({ status: status('signed-by-attorney-in-fact') }),
      }),
      events: [{ type: 'Poa.absentBuyerSigned@1', when: 'success' }],
      triggers: noDocument,
      price: price.takeRate('0.05', 'the signing fee', '2.50', '10.00'),
    },
  },
});
