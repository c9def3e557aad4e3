import { runPillarProcess } from '@vcs/platform';
import { dataPillar } from './index.ts';

await runPillarProcess(dataPillar);
