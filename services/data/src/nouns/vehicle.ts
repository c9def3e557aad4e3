import type { vehicle } from '@vcs/contract';
import { ok, refuse, type NounHandlers } from '@vcs/platform';
import { decodeVin } from '@vcs/vin';

export const vehicleHandlers: NounHandlers<typeof vehicle> = {
  async decode(input) {
    const r = decodeVin(input.vin);
    if (!r.ok) return refuse('invalid-vin', r.problem.message, { rule: r.problem.rule });
    return ok({ decode: r.decode as any });
  },
};
