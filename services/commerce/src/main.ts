import { runPillarProcess } from '@vcs/platform';
import { commercePillar } from './index.ts';

await runPillarProcess(commercePillar);
