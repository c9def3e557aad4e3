import type { vehicle } from '@vcs/contract';
import { ok, refuse, type NounHandlers } from '@vcs/platform';
import { decodeProvenance, decodeVin } from '@vcs/vin';
import { vpicDbPath } from '../config.ts';

/** vehicle.decode: NHTSA vPIC, offline, in this pillar (the keyless GET /decode/{vin} and the record ask it too). */
export const vehicleHandlers: NounHandlers<typeof vehicle> = {
  async decode(input, tools) {
    const r = await decodeVin(input.vin, { dbPath: vpicDbPath(tools.settings) });
    if (!r.ok) return refuse('invalid-vin', r.problem.message, { ...r.problem });
    const { simulated: _s, environment: _e, ...sources } = decodeProvenance(r);
    return ok({ decode: r.decode as any, sources });
  },
};
