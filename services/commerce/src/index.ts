import type { PillarDefinition } from '@vcs/platform';
import { rotationGraceMs } from './config.ts';
import { serveMoney } from './money/serve.ts';
import { apiKeyHandlers } from './nouns/apiKey.ts';

/** The Commerce pillar: keys, accounts and money. */
export const commercePillar: PillarDefinition = {
  pillar: 'commerce',
  name: 'commerce',
  version: '0.1.0',
  handlers: {
    apiKey: apiKeyHandlers,
  },
  async background(services) {
    return [serveMoney(services)];
  },
  checkSettings: (env) => { rotationGraceMs(env); },
};
