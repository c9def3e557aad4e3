import type { vehicle } from '@vcs/contract';
import { ok, refuse, type NounHandlers } from '@vcs/platform';
import { decodeProvenance, decodeVin } from '@vcs/vin';
import type { DataSettings } from '../config.ts';

/** vehicle.decode: NHTSA vPIC, offline, in this pillar (the keyless GET /decode/{vin} and the record ask it too). */
export const vehicleHandlers: NounHandlers<typeof vehicle, DataSettings> = {
  async decode(input, tools) {
    const r = await decodeVin(input.vin, { dbPath: tools.settings.VPIC_DB_PATH });
    if (!r.ok) return refuse('invalid-vin', r.problem.message, { ...r.problem });
    const { simulated: _s, environment: _e, ...sources } = decodeProvenance(r);
    return ok({ decode: r.decode as any, sources });
  },
};
