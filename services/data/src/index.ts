import type { PillarDefinition } from '@vcs/platform';
import { warmVpic } from '@vcs/vin';
import { mcoHandlers } from './nouns/mco.ts';
import { vehicleHandlers } from './nouns/vehicle.ts';

/** The Data pillar: facts about vehicles and their documents. */
export const dataPillar: PillarDefinition<'data'> = {
  pillar: 'data',
  name: 'data',
  version: '0.1.0',
  handlers: {
    mco: mcoHandlers,
    vehicle: vehicleHandlers,
  },
  // vPIC is opened at start, so the first decode does not wait for the load (~0.2 s).
  async background() { await warmVpic(); return []; },
};
