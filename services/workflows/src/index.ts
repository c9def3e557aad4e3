import type { PillarDefinition } from '@vcs/platform';
import { dealHandlers } from './nouns/deal.ts';

/** The Workflows pillar: deals that walk a checklist of capabilities to settlement. */
export const workflowsPillar: PillarDefinition = {
  pillar: 'workflows',
  name: 'workflows',
  version: '0.1.0',
  handlers: {
    deal: dealHandlers,
  },
};
