import { describe, expect, it } from 'vitest';
import { mergeWrites, statementsOf, type BulkWrite } from '@vcs/platform';
import { bothStores } from './support/stores.ts';

const stores = bothStores();

describe.each(stores)('Db.batch: group commit (%s)', (_kind, open) => {
  it('writes concurrent batches in shared transactions, every caller answered after its commit', async () => {
    const db = await open();
    try {
      await db.query('create table g(id int primary key, note text)');
      await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          db.batch([
            { sql: 'insert into g(id, note) values ($1, $2)', params: [i, 'a'] },
            { sql: 'update g set note = $2 where id = $1', params: [i, 'b'] },
          ]),
        ),
      );
      const { rows } = await db.query<{ n: number; notes: string; txs: number }>(
        "select count(*)::int as n, string_agg(distinct note, ',') as notes, count(distinct xmin::text)::int as txs from g",
      );
      // Every batch is there, whole; fewer transactions than batches means they were grouped.
      expect(rows[0]).toMatchObject({ n: 40, notes: 'b' });
      expect(rows[0]!.txs).toBeLessThan(40);
    } finally {
      await db.close();
    }
  });

  it('fails a batch whose statement fails, alone: the others of its group commit', async () => {
    const db = await open();
    try {
      await db.query('create table h(id int primary key)');
      const results = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) =>
          db.batch([
            { sql: 'insert into h(id) values ($1)', params: [i] },
            ...(i === 4 ? [{ sql: 'insert into h(id) values ($1)', params: [0] }] : []), // a duplicate: 23505
          ]),
        ),
      );
      expect(results.map((r) => r.status)).toEqual(results.map((_, i) => (i === 4 ? 'rejected' : 'fulfilled')));
      expect((results[4] as PromiseRejectedResult).reason).toMatchObject({ code: '23505' });
      const { rows } = await db.query<{ id: number }>('select id from h order by id');
      expect(rows.map((r) => r.id)).toEqual([0, 1, 2, 3, 5, 6, 7, 8, 9]);
    } finally {
      await db.close();
    }
  });

  it("writes every batch's bulk rows as one statement: order kept, nulls kept, the last row of a key wins", async () => {
    const db = await open();
    try {
      await db.query('create table ev(seq bigserial primary key, id text unique not null, vin text)');
      await db.query('create table fact(k text primary key, v text not null)');
      const ev: BulkWrite = {
        sql: 'insert into ev(id, vin) select id, vin from unnest($1::text[], $2::text[]) with ordinality as t(id, vin, ord) order by ord',
      };
      const fact: BulkWrite = {
        sql: `insert into fact(k, v) select distinct on (k) k, v from unnest($1::text[], $2::text[]) with ordinality as t(k, v, ord) order by k, ord desc
              on conflict (k) do update set v = excluded.v`,
      };
      // A group of two batches is one statement (two data-modifying CTEs), so one transaction.
      expect(
        mergeWrites([
          { bulk: ev, row: ['e0', 'V'] },
          { bulk: fact, row: ['k', 'first'] },
          { bulk: ev, row: ['e1', null] },
          { bulk: fact, row: ['k', 'last'] },
        ]),
      ).toHaveLength(1);
      await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          db.batch([
            { bulk: ev, row: [`e${i}`, i % 3 ? 'VIN' : null] },
            { bulk: fact, row: ['same', `v${i}`] },
          ]),
        ),
      );
      const { rows } = await db.query<{ id: string; vin: string | null }>('select id, vin from ev order by seq');
      expect(rows).toHaveLength(30);
      expect(
        rows
          .filter((r) => r.vin === null)
          .map((r) => r.id)
          .sort(),
      ).toEqual(['e0', 'e12', 'e15', 'e18', 'e21', 'e24', 'e27', 'e3', 'e6', 'e9']);
      // Callers were answered in the order they queued, so the last caller's fact is the one left.
      expect((await db.query('select v from fact')).rows).toEqual([{ v: 'v29' }]);
      const txs = await db.query<{ n: number }>('select count(distinct xmin::text)::int as n from ev');
      expect(txs.rows[0]!.n).toBeLessThan(30);
    } finally {
      await db.close();
    }
  });

  it("sends a bulk write's single row in its one-row form, and several rows with their arrays: the same rows written", async () => {
    const db = await open();
    try {
      await db.query('create table one_row(seq bigserial primary key, id text unique not null, vin text, doc jsonb)');
      const write: BulkWrite = {
        sql: `insert into one_row(id, vin, doc) select id, vin, doc::jsonb
                from unnest($1::text[], $2::text[], $3::text[]) with ordinality as t(id, vin, doc, ord) order by ord`,
        one: 'insert into one_row(id, vin, doc) values ($1, $2, $3::jsonb)',
      };
      const alone = mergeWrites([{ bulk: write, row: ['a', null, '{"n":1}'] }]);
      expect(alone).toEqual([{ sql: write.one, params: ['a', null, '{"n":1}'] }]);
      // The pillar's commit takes its parts the same way; a caller writing its own SQL over the arrays asks for them.
      expect(statementsOf([{ bulk: write, row: ['a', null, '{"n":1}'] }]).bulk).toEqual(alone);
      expect(statementsOf([{ bulk: write, row: ['a', null, '{"n":1}'] }], { columns: true }).bulk).toEqual([
        { sql: write.sql, params: [['a'], [null], ['{"n":1}']] },
      ]);
      const several = mergeWrites([
        { bulk: write, row: ['b', 'VIN', '{"n":2}'] },
        { bulk: write, row: ['c', null, '{"n":3}'] },
      ]);
      expect(several).toEqual([
        {
          sql: write.sql,
          params: [
            ['b', 'c'],
            ['VIN', null],
            ['{"n":2}', '{"n":3}'],
          ],
        },
      ]);
      // Together with another bulk write, each is a part of one statement, in the form its rows call for.
      const withOther = mergeWrites([
        { bulk: write, row: ['d', 'VIN', '{"n":4}'] },
        { bulk: { sql: 'select 1 from unnest($1::int[])' }, row: [1] },
      ]);
      expect(withOther).toHaveLength(1);
      expect(withOther[0]!.sql).toContain('values ($1, $2, $3::jsonb)');
      for (const st of [...alone, ...several]) await db.query(st.sql, st.params);
      await db.batch([{ bulk: write, row: ['e', null, '{"n":5}'] }]);
      const { rows } = await db.query<{ id: string; vin: string | null; doc: unknown }>(
        'select id, vin, doc from one_row order by seq',
      );
      expect(rows).toEqual([
        { id: 'a', vin: null, doc: { n: 1 } },
        { id: 'b', vin: 'VIN', doc: { n: 2 } },
        { id: 'c', vin: null, doc: { n: 3 } },
        { id: 'e', vin: null, doc: { n: 5 } },
      ]);
    } finally {
      await db.close();
    }
  });
});
