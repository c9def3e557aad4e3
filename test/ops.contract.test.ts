/**
 * Every platform operation is declared once (contract ops.ts): its server parses its input, its caller gets a typed
 * reply or a typed 503, the gateway serves its route and the OpenAPI document lists it from the same declaration.
 * The type-level checks below run under `tsc --noEmit` in `pnpm test`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { opList, ops, type Op } from '@vcs/contract';
import {
  callOp,
  createLogger,
  MemoryBus,
  serveOps,
  systemClock,
  type CallContext,
  type OpsImpl,
  type PillarHandlers,
  type Services,
} from '@vcs/platform';
import { startEmbedded } from '@vcs/embedded';
import { call, mintKey } from './support/harness.ts';

// @ts-expect-error: a pillar that leaves out one of its operations does not compile.
const _missingOp: OpsImpl<'commerce'> = { keysMint: async () => ({ status: 200, answer: {} }) };
// @ts-expect-error: nor does one that leaves out a noun of its catalog.
const _missingNoun: PillarHandlers<'data'> = { mco: {} as PillarHandlers<'data'>['mco'] };
void _missingOp;
void _missingNoun;

const ctx: CallContext = {
  requestId: 'request_ops',
  account: null,
  keyId: null,
  environment: 'sandbox',
  trigger: null,
  settled: false,
};

describe('platform operations, one contract', () => {
  let svc: Awaited<ReturnType<typeof startEmbedded>>;
  let base = '';
  beforeAll(async () => {
    svc = await startEmbedded({ pgliteDir: 'memory://', log: createLogger('test', 'silent') });
    base = await svc.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('parses the input at the server: a bad one is a 400 naming the member, whoever sends it', async () => {
    const r = await callOp(
      { bus: svc.infra.bus, busTimeoutMs: 3000 },
      ops.handoffsComplete,
      { handoffId: 'ho_x', outcome: 'maybe' as never, credential: '' },
      ctx,
    );
    expect(r.status).toBe(400);
    expect(r.answer).toMatchObject({ type: 'BLOCKED', value: { code: 'invalid-input' } });
    expect((r.answer.value as { problems: { field: string }[] }).problems.map((p) => p.field).sort()).toEqual([
      'credential',
      'outcome',
    ]);
  });

  it('answers a typed 503 when no pillar serves the operation', async () => {
    const nobody: Op = { ...ops.intentsGet, name: 'intents.nobody', subject: 'sys.commerce.intents.nobody' };
    const r = await callOp({ bus: svc.infra.bus, busTimeoutMs: 500 }, nobody, { intentId: 'pi_x' }, ctx);
    expect(r).toMatchObject({
      status: 503,
      unavailable: 'no-responders',
      answer: { type: 'BLOCKED', value: { code: 'pillar-unavailable', pillar: 'commerce' } },
    });
  });

  it('refuses, outside production, an answer outside the declaration: an undeclared code or a reply its schema refuses', async () => {
    const bus = new MemoryBus();
    const services = {
      bus,
      clock: systemClock,
      log: createLogger('test', 'silent'),
      source: 'test@0',
      settings: { NODE_ENV: 'test' },
    } as unknown as Services;
    const refusal = (code: string) => ({
      type: 'BLOCKED',
      answers: 'Blocked@1',
      value: { code, message: code },
      evidence: {},
      provenance: { simulated: true, environment: 'sandbox', source: 'test' },
      events: [],
      meter: { charged: '0.00', posted: false },
    });
    // Answers outside the declaration do not compile (OpsImpl is typed from it): these are forced, as a bug in
    // untyped code (a stored answer, a cast) would be, to show the check at run time.
    const served = serveOps(services, 'workflows', {
      dealsGet: async () => ({ status: 404, answer: refusal('intent-not-found') }) as never, // not a code it declares
      dealsForVin: async () =>
        ({ status: 200, answer: { type: 'OK', answers: 'DealsOfVin@1', value: { deals: 'none' } } }) as never, // not its reply
      dealsOpen: async () => ({ status: 401, answer: refusal('key-required') }) as never, // declared
      dealsAdvance: async () => ({ status: 404, answer: refusal('deal-not-found') }) as never,
    });
    const via = { bus, busTimeoutMs: 1000 };
    try {
      const undeclared = await callOp(via, ops.dealsGet, { dealId: 'deal_x' }, ctx);
      expect(undeclared).toMatchObject({ status: 500, answer: { type: 'BLOCKED', value: { code: 'internal' } } });
      expect(undeclared.answer.type === 'BLOCKED' && undeclared.answer.value.message).toMatch(
        /intent-not-found is not among its declared codes/,
      );
      expect(await callOp(via, ops.dealsForVin, { vin: '1HGCM82633A004352' }, ctx)).toMatchObject({
        status: 500,
        answer: { value: { code: 'internal' } },
      });
      expect(
        await callOp(via, ops.dealsOpen, { vin: '1HGCM82633A004352', buyer: { name: 'A', zip: '94103' } }, ctx),
      ).toMatchObject({ status: 401, answer: { value: { code: 'key-required' } } });
    } finally {
      served.stop();
    }
  });

  it('serves every declared route and lists it in /openapi.json under its name', async () => {
    const doc = (await call(base, 'GET', '/openapi.json')).json;
    for (const o of opList.filter((x) => x.route)) {
      const entry = doc.paths[o.route!.path]?.[o.route!.method.toLowerCase()];
      expect(entry?.operationId, `${o.route!.method} ${o.route!.path}`).toBe(o.name);
      // What the gateway sets itself (a header's value, its time-out) is not the caller's to send.
      expect(JSON.stringify(entry.requestBody ?? {})).not.toMatch(/timeoutMs|"mandate"/);
    }
  });

  it('drops members the gateway sets from the body: a caller cannot choose the settlement time-out', async () => {
    const { key } = await mintKey(base);
    const r = await call(base, 'POST', '/handoffs/ho_none/complete', {
      key,
      body: { outcome: 'completed', credential: 'notary', timeoutMs: 1 },
    });
    expect(r.status).toBe(404); // reached commerce with the gateway's time-out, not a 400 for timeoutMs=1
    expect(r.json.value.code).toBe('handoff-not-found');
  });

  it('refuses a bad body at the gateway with the problems listed, before any bus hop', async () => {
    const { key } = await mintKey(base);
    const r = await call(base, 'POST', '/connections', { key, body: { kind: 'fax', system: '', credential: 'c' } });
    expect(r.status).toBe(400);
    expect(r.json.value.problems.map((p: { field: string }) => p.field).sort()).toEqual(['kind', 'system']);
  });
});
