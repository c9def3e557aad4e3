import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Db } from '@vcs/platform';
import { bothStores } from './support/stores.ts';

const stores = bothStores();

// The embedded store prepares each SQL text once and runs it again with new values (pglite-worker.mjs): the same
// statements must answer what Postgres answers, whatever the values, and whatever changed in the schema meanwhile.
describe.each(stores)('Db.query run again and again (%s)', (kind, open) => {
  let db: Db;
  beforeEach(async () => {
    db = await open();
  });
  afterEach(() => db.close());

  it('answers each run with its own values, of every type the services send', async () => {
    await db.query(
      'create table p(id text primary key, n int, doc jsonb, tags text[], at timestamptz, price numeric, ok boolean)',
    );
    const insert = 'insert into p values ($1, $2, $3, $4, $5, $6, $7) returning *';
    const at = new Date('2026-01-02T03:04:05.678Z');
    const first = await db.query(insert, [
      'a',
      1,
      { vin: '1HGCM82633A004352', n: [1, 2] },
      ['x', 'y'],
      at,
      '2.00',
      true,
    ]);
    const second = await db.query(insert, ['b', null, null, [], null, null, false]);
    expect(first.rows).toEqual([
      { id: 'a', n: 1, doc: { vin: '1HGCM82633A004352', n: [1, 2] }, tags: ['x', 'y'], at, price: '2.00', ok: true },
    ]);
    expect(second.rows).toEqual([{ id: 'b', n: null, doc: null, tags: [], at: null, price: null, ok: false }]);

    // A guarded update, run many times with other values: each run sees the rows as the last one left them.
    const move = 'update p set n = coalesce(n, 0) + $2 where id = $1 and ok = any($3::boolean[]) returning n';
    for (let i = 1; i <= 5; i++)
      expect((await db.query(move, ['a', i, [true]])).rows).toEqual([{ n: 1 + (i * (i + 1)) / 2 }]);
    const missed = await db.query(move, ['a', 1, [false]]);
    expect(missed.rowCount).toBe(0);
    expect(missed.rows).toEqual([]);
  });

  it('fails a run with the store error, and the next run of the same text succeeds', async () => {
    await db.query('create table u(id int primary key)');
    const insert = 'insert into u values ($1)';
    await db.query(insert, [1]);
    await expect(db.query(insert, [1])).rejects.toMatchObject({ code: '23505' });
    await expect(db.query(insert, ['not a number'])).rejects.toMatchObject({ code: '22P02' });
    await db.query(insert, [2]);
    expect((await db.query('select id from u order by id')).rows).toEqual([{ id: 1 }, { id: 2 }]);
  });

  it('answers with the table as it is now after its columns change, in and out of a transaction', async () => {
    await db.query('create table v(id int primary key)');
    await db.query('insert into v values (1)');
    const all = 'select * from v';
    expect((await db.query(all)).rows).toEqual([{ id: 1 }]);
    await db.query('alter table v add column note text');
    expect((await db.query(all)).rows).toEqual([{ id: 1, note: null }]);
    await db.tx(async (q) => {
      await q.query('alter table v add column n int');
      expect((await q.query(all)).rows).toEqual([{ id: 1, note: null, n: null }]);
    });
    expect((await db.query(all)).rows).toEqual([{ id: 1, note: null, n: null }]);
  });

  it('runs more distinct statements than it keeps prepared', async () => {
    // 600 distinct texts: past the embedded store's 500 kept, each later one still answers its own value.
    for (let i = 0; i < 600; i++)
      expect((await db.query(`select $1::int + ${i} as n`, [1])).rows).toEqual([{ n: i + 1 }]);
    expect((await db.query('select $1::int + 0 as n', [7])).rows).toEqual([{ n: 7 }]);
  });
});
