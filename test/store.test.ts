import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { createPgDb, StoreUnavailableError } from '@vcs/platform';
import { serversFor, waitFor } from './support/harness.ts';

describe.runIf(serversFor('store suite', ['DATABASE_URL']))('the Postgres store (needs DATABASE_URL)', () => {
  it('survives the server ending a connection mid-transaction: the transaction fails typed, the process lives on', async () => {
    const url = process.env.DATABASE_URL!;
    const db = createPgDb(url, 2);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const marker = `vcs_store_test_${Date.now()}`;
      const running = db.tx((q) => q.query(`select pg_sleep(10) as ${marker}`));
      const outcome = running.then(
        () => 'committed',
        (e) => e,
      );
      await waitFor(
        async () =>
          (
            await admin.query(
              `select 1 from pg_stat_activity where query like '%${marker}%' and pid <> pg_backend_pid()`,
            )
          ).rowCount! > 0,
        5_000,
        50,
      );
      // What a server shutdown does to this backend (57P01): before the fix, an unheard 'error' event crashed the process.
      await admin.query(
        `select pg_terminate_backend(pid) from pg_stat_activity where query like '%${marker}%' and pid <> pg_backend_pid()`,
      );
      expect(await outcome).toBeInstanceOf(StoreUnavailableError);
      // The broken client left the pool; the next transaction gets a fresh one.
      expect((await db.tx((q) => q.query('select 1 as ok'))).rows).toEqual([{ ok: 1 }]);
    } finally {
      await admin.end();
      await db.close();
    }
  });
});
