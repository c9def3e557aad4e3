import { describe, expect, it } from 'vitest';
import { bothStores } from './support/stores.ts';

const stores = bothStores();

describe.each(stores)('Db.tx (%s)', (kind, open) => {
  it('commits what its function wrote, rolls back when it throws, and a failed first statement leaves the store free', async () => {
    const db = await open();
    try {
      await db.query('create table t(id int primary key, note text)');
      const ids = async () => (await db.query<{ id: number }>('select id from t order by id')).rows.map((r) => r.id);

      // Committed: both statements, and what the function returned.
      const out = await db.tx(async (q) => {
        await q.query('insert into t values (1, $1)', ['a']);
        await q.query('insert into t values (2, $1)', ['b']);
        return 'done';
      });
      expect(out).toBe('done');
      expect(await ids()).toEqual([1, 2]);

      // Thrown after two writes: neither stays.
      await expect(
        db.tx(async (q) => {
          await q.query('insert into t values (3, $1)', ['c']);
          await q.query('insert into t values (4, $1)', ['d']);
          throw new Error('changed my mind');
        }),
      ).rejects.toThrow('changed my mind');
      expect(await ids()).toEqual([1, 2]);

      // The first statement fails (a duplicate key): the error is the store's, with its code, and the transaction
      // holds no lock afterwards — the next one commits.
      await expect(db.tx((q) => q.query('insert into t values (1, $1)', ['dup']))).rejects.toMatchObject({
        code: '23505',
      });
      // A later statement fails: what came before it is rolled back.
      await expect(
        db.tx(async (q) => {
          await q.query('insert into t values (5, $1)', ['e']);
          await q.query('insert into t values (2, $1)', ['dup']);
        }),
      ).rejects.toMatchObject({ code: '23505' });
      expect(await ids()).toEqual([1, 2]);

      // Statements sent at once inside one transaction all land in it (PGlite's thread queues them behind the first,
      // which opens the transaction; pg's client deprecates overlapping queries, so there they go one by one).
      const rows = [6, 7, 8].map((i) => ['insert into t values ($1, $2)', [i, 'f']] as const);
      if (kind === 'pglite') await db.tx((q) => Promise.all(rows.map(([sql, params]) => q.query(sql, [...params]))));
      else
        await db.tx(async (q) => {
          for (const [sql, params] of rows) await q.query(sql, [...params]);
        });
      // A transaction that sends no statement is fine.
      expect(await db.tx(async () => 'nothing')).toBe('nothing');
      expect(await ids()).toEqual([1, 2, 6, 7, 8]);

      // Transactions started together each see the other's committed write, none lost (the counter ends at 20).
      await db.query("insert into t values (100, '0')");
      await Promise.all(
        Array.from({ length: 20 }, () =>
          db.tx(async (q) => {
            const { rows } = await q.query<{ note: string }>('select note from t where id = 100 for update');
            await q.query('update t set note = $1 where id = 100', [String(Number(rows[0]!.note) + 1)]);
          }),
        ),
      );
      expect((await db.query<{ note: string }>('select note from t where id = 100')).rows[0]!.note).toBe('20');
    } finally {
      await db.close();
    }
  });
});
