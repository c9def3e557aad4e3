import type { deal } from '@vcs/contract';
import { ok, refuse, type NounHandlers } from '@vcs/platform';
import { DealMachine } from '../buy/machine.ts';
import { openDeal } from '../buy/serve.ts';

/** deal.open through the catalog: the same deal as POST /buy/deals, with no buyer on file yet. */
export const dealHandlers: NounHandlers<typeof deal> = {
  async open(input, tools) {
    const { tx, ctx } = tools;
    if (!ctx.account) return refuse('key-required', 'a key is required to open a deal');
    // The runner publishes Deal.opened@1 from this capability's declaration; the deal's record keeps it too.
    const d = await openDeal(tx, tools, { ...ctx, account: ctx.account }, input.vin, null, false);
    return ok(await new DealMachine(tools).view(tx, d));
  },
};
