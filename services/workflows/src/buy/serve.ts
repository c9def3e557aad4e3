import type { Blocked, OpReply } from '@vcs/contract';
import type { CallContext, OpsImpl, Queryable, Services } from '@vcs/platform';
import { newChecklist } from './checklist.ts';
import { refusal, type DealMachine } from './machine.ts';
import { insertDeal, recordOpened, type DealRow } from './store.ts';

/** Create a deal and its Deal.opened record (published unless the capability runner publishes it). */
export async function openDeal(
  q: Queryable,
  s: Services,
  ctx: CallContext & { account: string },
  vin: string,
  buyer: DealRow['buyer'],
  publish: boolean,
) {
  const now = s.clock.now();
  const d = await insertDeal(q, {
    account: ctx.account,
    keyId: ctx.keyId,
    environment: ctx.environment,
    vin,
    buyer,
    checklist: newChecklist(),
    now,
  });
  await recordOpened(q, d, now, publish);
  return d;
}

const keyRequired = (): OpReply<Blocked, never> => ({
  status: 401,
  answer: refusal('key-required', 'deals need a key; mint one with POST /keys', {
    mint: { method: 'POST', path: '/keys' },
    next: { method: 'POST', path: '/keys' },
  }),
});

/** The workflows pillar's platform operations (contract ops.ts): the /buy/deals face. */
export const dealOps = (s: Services, machine: DealMachine): OpsImpl<'workflows'> => ({
  async dealsOpen(input, ctx) {
    if (!ctx.account) return keyRequired();
    const account = ctx.account;
    const d = await s.db.tx((q) => openDeal(q, s, { ...ctx, account }, input.vin, input.buyer, true));
    return { status: 200, answer: machine.dealAnswer(await machine.view(s.db, d), d.environment) };
  },
  async dealsForVin(input) {
    // The keyless VIN record's view of the deals on a car: no account, no buyer.
    const { rows } = await s.db.query<any>(
      'select id, workflow, state, checklist, created_at, updated_at from deals where vin = $1 order by created_at, id',
      [input.vin],
    );
    const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : String(v));
    const deals = rows.map((r) => ({
      id: r.id,
      workflow: r.workflow,
      state: r.state,
      checklist: typeof r.checklist === 'string' ? JSON.parse(r.checklist) : r.checklist,
      createdAt: iso(r.created_at),
      updatedAt: iso(r.updated_at),
    }));
    return { status: 200, answer: { type: 'OK', answers: 'DealsOfVin@1', value: { deals } } };
  },
  dealsGet: (input, ctx) => (ctx.account ? machine.get(input.dealId, ctx.account) : Promise.resolve(keyRequired())),
  dealsAdvance: (input, ctx) => (ctx.account ? machine.advance(input.dealId, ctx) : Promise.resolve(keyRequired())),
});
