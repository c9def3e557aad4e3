import { buildAll } from '../../deploy/build.ts';

/** Vitest global setup: build dist/ from the current sources, so no suite runs a stale build. */
export default async function setup() {
  await buildAll();
}
