import { problemsOf, buyDealRequest, dealSubjects, statusOfCode } from '@vcs/contract';
import { dec, enc, StoreUnavailableError, type CallContext, type Queryable, type Services } from '@vcs/platform';
import { newChecklist } from './checklist.ts';
import { refusal, type DealMachine, type Reply } from './machine.ts';
import { appendEvent, insertDeal, type DealRow } from './store.ts';


/** Create a deal and its Deal.opened record (published unless the capability runner publishes it). */
export async function openDeal(q: Queryable, s: Services, ctx: CallContext & { account: string }, vin: string, buyer: DealRow['buyer'], publish: boolean) {
  const now = s.clock.now();
  const d = await insertDeal(q, { account: ctx.account, keyId: ctx.keyId, environment: ctx.environment, vin, buyer, checklist: newChecklist(), now });
  await appendEvent(q, d, 'Deal.opened@1', null, { workflow: d.workflow, vin, state: 'OPENED', steps: d.checklist.length }, now, publish);
  return d;
}

const keyRequired = (): Reply => ({ status: 401, answer: refusal('key-required', 'deals need a key; mint one with POST /keys', { mint: { method: 'POST', path: '/keys' } }) });

export function serveDeals(s: Services, machine: DealMachine) {
  const routes: Record<keyof typeof dealSubjects, (input: any, ctx: CallContext) => Promise<Reply>> = {
    async open(input, ctx) {
      const parsed = buyDealRequest.safeParse(input ?? {});
      if (!parsed.success) {
        const problems = problemsOf(parsed.error.issues, 'body');
        return { status: 400, answer: refusal('invalid-input', 'the deal cannot be opened; fix each problem listed', { problems }) };
      }
      if (!ctx.account) return keyRequired();
      const account = ctx.account;
      const d = await s.db.tx((q) => openDeal(q, s, { ...ctx, account }, parsed.data.vin, parsed.data.buyer, true));
      return { status: 200, answer: machine.dealAnswer(await machine.view(s.db, d), d.environment) };
    },
    async get(input, ctx) {
      if (!ctx.account) return keyRequired();
      return machine.get(String(input?.dealId ?? ''), ctx.account);
    },
    async advance(input, ctx) {
      if (!ctx.account) return keyRequired();
      return machine.advance(String(input?.dealId ?? ''), ctx);
    },
  };
  const stops = (Object.keys(dealSubjects) as (keyof typeof dealSubjects)[]).map((name) =>
    s.bus.serve(dealSubjects[name], 'pillar.workflows', async (msg) => {
      let r: Reply;
      try {
        const req = JSON.parse(dec.decode(msg.data)) as { input: unknown; ctx: CallContext };
        r = await routes[name](req.input, req.ctx);
      } catch (err) {
        const code = err instanceof StoreUnavailableError ? 'store-unavailable' : 'internal';
        s.log.error({ err, subject: dealSubjects[name] }, 'deal request failed');
        r = { status: statusOfCode(code), answer: refusal(code, code === 'internal' ? `the deal ${name} failed unexpectedly; it is logged` : 'the store is unreachable; retry shortly') };
      }
      return { data: enc.encode(JSON.stringify(r.answer)), headers: { status: String(r.status) } };
    }));
  return { stop: () => stops.forEach((x) => x.stop()) };
}
