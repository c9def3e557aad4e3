import { describe, expect, it } from 'vitest';
import { answerSchema, expectedCheckDigit, frameInspection, poa } from '@vcs/contract';
import type { HandlerTools } from '@vcs/platform';
import { SANDBOX_DEFAULT_VIN, vehicleFacts } from '@vcs/sandbox';
import { frameInspectionHandlers, gradeOf } from './frameInspection.ts';
import { poaHandlers } from './poa.ts';

const noFacts = { query: async () => ({ rows: [] }) };
const tools = (trigger: string | null = null) =>
  ({ ctx: { environment: 'sandbox', trigger }, tx: noFacts }) as unknown as HandlerTools;
const vinWith = (serial: number) => {
  const draft = `5YJ3E1EA0KF${String(serial).padStart(6, '0')}`;
  return draft.slice(0, 8) + expectedCheckDigit(draft) + draft.slice(9);
};
const nothingOnFileVin = Array.from({ length: 200 }, (_, i) => vinWith(i)).find((v) => !vehicleFacts(v).onFile)!;

describe('poa sandbox', () => {
  it('names one document per VIN and notarizes the document generate answered', async () => {
    const gen = ((await poaHandlers.generate({ vin: SANDBOX_DEFAULT_VIN, state: 'CA' }, tools())) as any).value;
    expect(gen.hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    const notarized = ((await poaHandlers.notarize({ documentId: gen.id }, tools())) as any).value;
    expect(notarized.document).toEqual({ id: gen.id, status: 'Notarized' });
    for (const verb of ['execute', 'secureFormIssue', 'revoke', 'absentBuyerSign'] as const) {
      const v = ((await poaHandlers[verb]({}, tools())) as any).value;
      expect(v.document.id).toBe(gen.id);
      expect(
        answerSchema(poa.capabilities[verb].value).safeParse({
          type: 'OK',
          value: v,
          answers: 'X@1',
          evidence: v,
          provenance: { simulated: true, environment: 'sandbox', source: 's@1' },
          events: [],
          meter: { charged: '0.00', posted: true },
        }).success,
      ).toBe(true);
    }
  });

  it("answers the spec's nothing-on-file strings, with no event, under the trigger or for an unknown document", async () => {
    const revoke = (await poaHandlers.revoke({}, tools('nothing-on-file'))) as any;
    expect(revoke.value.revocation.status).toBe('nothing-to-revoke');
    expect(revoke.events).toEqual([]);
    const verify = (await poaHandlers.verify({}, tools('nothing-on-file'))) as any;
    expect(verify.value.document.status).toBe('no-document-on-file');
    const unknown = (await poaHandlers.notarize({ documentId: 'doc_000000000000' }, tools())) as any;
    expect(unknown.value.document.status).toBe('no-document-on-file');
    expect(unknown.events).toEqual([]);
  });
});

describe('frameInspection sandbox', () => {
  it('keeps one inspection id per VIN across every answer, and grades from the worst deviation', async () => {
    const ids = new Set<string>();
    for (const verb of Object.keys(frameInspection.capabilities) as (keyof typeof frameInspectionHandlers)[]) {
      const v = ((await frameInspectionHandlers[verb]({ vin: SANDBOX_DEFAULT_VIN }, tools())) as any).value;
      expect(frameInspection.capabilities[verb].value.safeParse(v).success).toBe(true);
      ids.add(v.id);
      if (v.grade !== 'pending')
        expect(v.grade).toBe(gradeOf(Math.max(0, ...v.damages.map((d: any) => d.deviationMm))));
    }
    expect(ids.size).toBe(1);
    expect([gradeOf(0), gradeOf(3), gradeOf(5), gradeOf(9), gradeOf(14)]).toEqual(['A', 'A', 'B', 'C', 'D']);
  });

  it('answers no-inspection-on-file for a VIN with nothing on file', async () => {
    const v = ((await frameInspectionHandlers.status({ vin: nothingOnFileVin }, tools())) as any).value;
    expect(v.status).toBe('no-inspection-on-file');
  });
});
