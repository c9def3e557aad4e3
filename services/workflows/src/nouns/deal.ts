import type { deal } from '@vcs/contract';
import { newId } from '@vcs/contract';
import { ok, refuse, type NounHandlers } from '@vcs/platform';

// Foundation version: the buy-workflow issue owns the checklist, the steps and the deal's lifecycle.
export const dealHandlers: NounHandlers<typeof deal> = {
  async open(input, { tx, ctx, clock }) {
    if (!ctx.account) return refuse('key-required', 'a key is required to open a deal');
    const id = newId('deal');
    const now = clock.now();
    const checklist = [{ step: 'decode', capability: 'vehicle.decode', status: 'pending' }];
    await tx.query(
      'insert into deals(id, account_id, workflow, vin, state, checklist, created_at, updated_at) values ($1,$2,$3,$4,$5,$6,$7,$7)',
      [id, ctx.account, input.workflow, input.vin, 'OPENED', JSON.stringify(checklist), now],
    );
    return ok({ dealId: id, workflow: input.workflow, vin: input.vin, state: 'OPENED', checklist, openedAt: now.toISOString() });
  },
};
