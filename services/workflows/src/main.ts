import { runPillarProcess } from '@vcs/platform';
import { workflowsPillar } from './index.ts';

await runPillarProcess(workflowsPillar);
