import type { vehicle } from '@vcs/contract';
import { ok, refuse, type NounHandlers } from '@vcs/platform';
import { decodeProvenance, decodeVin } from '@vcs/vin';

/** vehicle.decode: NHTSA vPIC, offline, in this pillar (the keyless GET /decode/{vin} and the record ask it too). */
export const vehicleHandlers: NounHandlers<typeof vehicle> = {
  async decode(input) {
    const r = await decodeVin(input.vin);
    if (!r.ok) return refuse('invalid-vin', r.problem.message, { ...r.problem });
    const { simulated: _s, environment: _e, ...sources } = decodeProvenance(r);
    return ok({ decode: r.decode as any, sources });
  },
};
