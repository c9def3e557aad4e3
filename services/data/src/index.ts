import type { PillarDefinition } from '@vcs/platform';
import { warmVpic } from '@vcs/vin';
import { dataSettings } from './config.ts';
import { mcoHandlers } from './nouns/mco.ts';
import { vehicleHandlers } from './nouns/vehicle.ts';

/** The Data pillar: facts about vehicles and their documents. */
export const dataPillar: PillarDefinition<'data', typeof dataSettings> = {
  pillar: 'data',
  name: 'data',
  version: '0.1.0',
  handlers: {
    mco: mcoHandlers,
    vehicle: vehicleHandlers,
  },
  settings: dataSettings,
  // vPIC is opened at start (from VPIC_DB_PATH, else libs/vin/.cache/), so the first decode does not wait for the load.
  async background(services) {
    await warmVpic(services.settings.VPIC_DB_PATH);
    return [];
  },
};
