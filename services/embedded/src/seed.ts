import { fileURLToPath } from 'node:url';

/**
 * Where `pnpm build` (deploy/build.ts) leaves the embedded database it prepared: initdb run and every migration
 * applied, copied into an empty PGLITE_DIR on a first start (createPgliteDb). In the checkout's .data/, beside the
 * default PGLITE_DIR, so removing .data/ starts over from scratch (the next `pnpm start` makes the seed again).
 */
export const PGLITE_SEED = fileURLToPath(new URL('../../../.data/pglite-seed', import.meta.url));
