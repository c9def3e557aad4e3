import { describe, expect, it } from 'vitest';
import { createPgDb, isStoreUnavailable, storeUnavailableMessage } from '@vcs/platform';
import { distributedEnv } from './support/harness.ts';

const env = distributedEnv();

// A 503 store-unavailable says which of two things happened: the store cannot be reached, or every connection of the
// process's pool stayed busy past the pool's wait (a slow store, or more work than connections).
describe.skipIf(!env)('a store that does not answer (Postgres)', () => {
  it('tells a pool whose every connection stayed busy from a store that cannot be reached', async () => {
    const db = createPgDb(env!.DATABASE_URL, 1);
    try {
      const holding = db.query('select pg_sleep(3)');
      const err = await db.query('select 1').catch((e: unknown) => e);
      expect(isStoreUnavailable(err)).toBe(true);
      expect(storeUnavailableMessage(err)).toBe('every connection to the store stayed busy for 2 s; retry shortly');
      await holding;
      expect((await db.query<{ n: number }>('select 1 as n')).rows).toEqual([{ n: 1 }]);
    } finally {
      await db.close();
    }
    const gone = createPgDb('postgres://postgres@127.0.0.1:1/none', 1);
    try {
      const err = await gone.query('select 1').catch((e: unknown) => e);
      expect(isStoreUnavailable(err)).toBe(true);
      expect(storeUnavailableMessage(err, 'a store this call needs')).toBe(
        'a store this call needs is unreachable; retry shortly',
      );
    } finally {
      await gone.close();
    }
  }, 20_000);
});
