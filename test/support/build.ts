import { buildAll, ensureSeed } from '../../deploy/build.ts';

/**
 * Vitest global setup: build dist/ from the current sources, so no suite runs a stale build, and the embedded
 * database seed `pnpm start` copies, so no two suites make it at once (one replacing it while another's embedded
 * process is copying it).
 */
export default async function setup() {
  await buildAll();
  await ensureSeed();
}
