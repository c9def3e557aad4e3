import { runPillarProcess } from '@vcs/platform';
import { servicesPillar } from './index.ts';

await runPillarProcess(servicesPillar);
