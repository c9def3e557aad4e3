import { afterAll } from 'vitest';
import { createPgDb, createPgliteDb, type Db } from '@vcs/platform';
import { distributedEnv, dropStores, freshStores } from './harness.ts';

/**
 * Both stores, for `describe.each`: PGlite (in its worker thread) always, Postgres in a database of its own where
 * one is given (dropped after the file).
 */
export function bothStores(): [string, () => Promise<Db>][] {
  const stores: [string, () => Promise<Db>][] = [['pglite', () => createPgliteDb('memory://')]];
  const made: Record<string, string>[] = [];
  if (distributedEnv())
    stores.push([
      'postgres',
      async () => {
        const s = await freshStores();
        made.push(s);
        return createPgDb(s.DATABASE_URL!, 5);
      },
    ]);
  afterAll(async () => {
    for (const s of made) await dropStores(s);
  });
  return stores;
}
