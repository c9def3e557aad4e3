/**
 * Makes the slim vPIC file (libs/vin/.cache) in a process of its own: `pnpm build` runs it beside the bundling and
 * the embedded database seed, whose work would otherwise wait for this one's (it holds its thread for seconds).
 */
import { buildSlimVpic } from '../src/vpic.ts';

await buildSlimVpic();
