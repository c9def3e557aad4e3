import type { PillarDefinition } from '@vcs/platform';
import { mcoHandlers } from './nouns/mco.ts';
import { vehicleHandlers } from './nouns/vehicle.ts';

/** The Data pillar: facts about vehicles and their documents. */
export const dataPillar: PillarDefinition = {
  pillar: 'data',
  name: 'data',
  version: '0.1.0',
  handlers: {
    mco: mcoHandlers,
    vehicle: vehicleHandlers,
  },
};
