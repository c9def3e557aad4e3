import { createHash } from 'node:crypto';
import { canonicalJson, type poa } from '@vcs/contract';
import { ok, type HandlerTools, type NounHandlers } from '@vcs/platform';
import { SANDBOX_DEFAULT_VIN, sandboxDate, stableId, vehicleFacts } from '@vcs/sandbox';
import { triggerOf, vinOf } from './sandboxInput.ts';

// One document per VIN: every poa answer about a VIN names the same document id.
const documentIdOf = (vin: string) => stableId('doc_', vin);
const base = (vin: string) => ({ vin, noun: 'poa', asOf: sandboxDate() });
const sandboxPrincipal = { name: 'Avery Chen' };

/** A VIN has a document on file unless its facts say nothing is on file or the `nothing-on-file` trigger says so. */
function documentOnFile(vin: string, tools: HandlerTools) {
  return vehicleFacts(vin).onFile && triggerOf(tools) !== 'nothing-on-file';
}
function documentRef(vin: string, onFile: boolean, status: string) {
  return onFile ? { id: documentIdOf(vin), status } : { id: null, status: 'no-document-on-file' };
}
/** Nothing on file: OK with the spec's status strings, and no event (nothing happened). */
const quiet = { events: [] as string[] };

/** The VIN whose document this id is: the sandbox VIN's, else whichever VIN's generate posted it. */
async function vinOfDocument(documentId: string, tools: HandlerTools): Promise<string | null> {
  if (documentId === documentIdOf(SANDBOX_DEFAULT_VIN)) return SANDBOX_DEFAULT_VIN;
  const { rows } = await tools.tx.query<{ vin: string }>(
    `select vin from vin_facts where capability = 'poa.generate' and value->>'id' = $1 limit 1`,
    [documentId],
  );
  return rows[0]?.vin ?? null;
}

export const poaHandlers: NounHandlers<typeof poa> = {
  async verify(input, tools) {
    const vin = vinOf(input);
    if (!documentOnFile(vin, tools))
      return ok(
        { ...base(vin), document: { status: 'no-document-on-file' }, verification: { status: 'nothing-to-verify' } },
        quiet,
      );
    return ok({ ...base(vin), document: { status: 'Draft' }, verification: { status: 'verified' } });
  },
  async generate(input) {
    const vin = input.vin;
    const principal = input.principal ?? sandboxPrincipal;
    // The hash covers what the document says, so the same request renders the same document.
    const content = {
      vin,
      state: input.state,
      principal,
      brand: input.brand ?? null,
      authority: input.authority ?? 'title-and-registration',
    };
    const hash = 'sha256:' + createHash('sha256').update(canonicalJson(content)).digest('hex');
    return ok({
      ...base(vin),
      id: documentIdOf(vin),
      type: 'vehicle-power-of-attorney',
      subjectId: stableId('deal_', vin),
      hash,
      signers: [
        {
          role: 'principal',
          identityId: stableId('idn_', vin, 'buyer'),
          name: principal.name,
          status: 'not-yet-requested',
        },
        {
          role: 'attorney-in-fact',
          identityId: stableId('idn_', vin, 'seller'),
          name: input.brand ?? 'Bayview Motors',
          status: 'not-yet-requested',
        },
      ],
      status: 'Draft',
      generation: { status: 'generated', id: stableId('gen_', vin, `poa|${input.state}`), position: 'Draft' },
    });
  },
  async execute(input, tools) {
    const vin = vinOf(input);
    const onFile = documentOnFile(vin, tools);
    return ok(
      {
        ...base(vin),
        document: documentRef(vin, onFile, 'Executed'),
        execution: { status: onFile ? 'executed' : 'no-document-on-file' },
      },
      onFile ? {} : quiet,
    );
  },
  async secureFormIssue(input, tools) {
    const vin = vinOf(input);
    const onFile = documentOnFile(vin, tools);
    const form = {
      id: stableId('spf_', vin),
      kind: 'secure-poa-form',
      status: onFile ? 'issued' : 'no-document-on-file',
    };
    return ok({ ...base(vin), document: documentRef(vin, onFile, 'Draft'), form }, onFile ? {} : quiet);
  },
  async notarize(input, tools) {
    const vin = await vinOfDocument(input.documentId, tools);
    if (!vin) {
      return ok(
        {
          ...base(SANDBOX_DEFAULT_VIN),
          document: { id: input.documentId, status: 'no-document-on-file' },
          stamp: { status: 'not-notarized' },
        },
        quiet,
      );
    }
    const mode = input.mode ?? 'in-person';
    return ok({
      ...base(vin),
      document: { id: input.documentId, status: 'Notarized' },
      stamp: { status: mode === 'ron' ? 'notarized-remote-online' : 'notarized' },
    });
  },
  async revoke(input, tools) {
    const vin = vinOf(input);
    const onFile = documentOnFile(vin, tools);
    return ok(
      {
        ...base(vin),
        document: documentRef(vin, onFile, 'Revoked'),
        revocation: { status: onFile ? 'revoked' : 'nothing-to-revoke' },
      },
      onFile ? {} : quiet,
    );
  },
  async absentBuyerSign(input, tools) {
    const vin = vinOf(input);
    const onFile = documentOnFile(vin, tools);
    return ok(
      {
        ...base(vin),
        document: documentRef(vin, onFile, 'Executed'),
        absentSigning: { status: onFile ? 'signed-by-attorney-in-fact' : 'no-document-on-file' },
      },
      onFile ? {} : quiet,
    );
  },
};
