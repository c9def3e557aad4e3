import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrate, platformMigrations, REQUIRED_WRITE_MISSED, writeTogether, type Db } from '@vcs/platform';
import { bothStores } from './support/stores.ts';

const stores = bothStores();

// Several writes as one statement (platform store/together.ts): the paid call's steps write this way. Each part
// sees what an earlier one returned, every part's first row comes back under its name, and a part that fails
// leaves nothing of the statement written.
describe.each(stores)('writeTogether (%s)', (kind, open) => {
  let db: Db;
  beforeEach(async () => {
    db = await open();
    await db.query('create table o(id text primary key, status text not null, n int not null default 0)');
    await db.query('create table l(id text primary key, o_id text not null, doc jsonb)');
    await db.query("insert into o(id, status) values ('a', 'open'), ('b', 'closed')");
  });
  afterEach(() => db.close());

  const moveAndLine = (o: string, line: string) => ({
    moved: {
      sql: "update o set status = 'taken', n = n + 1 where id = $1 and status = $2 returning *",
      params: [o, 'open'],
    },
    line: {
      sql: 'insert into l select $1::text, $2::text, $3::jsonb where exists (select 1 from moved) returning *',
      params: [line, o, JSON.stringify({ for: o, n: [1, 2] })],
    },
    nothing: { sql: 'update o set n = n where false' },
  });

  it('writes each part once, and answers what each returned under its name', async () => {
    const out = await writeTogether(db, moveAndLine('a', 'l1'));
    expect(out.moved).toMatchObject({ id: 'a', status: 'taken', n: 1 });
    expect(out.line).toEqual({ id: 'l1', o_id: 'a', doc: { for: 'a', n: [1, 2] } });
    expect(out).not.toHaveProperty('nothing');
    expect((await db.query('select id, status, n from o order by id')).rows).toEqual([
      { id: 'a', status: 'taken', n: 1 },
      { id: 'b', status: 'closed', n: 0 },
    ]);
  });

  it('writes a guarded part only where the part it names wrote a row', async () => {
    const out = await writeTogether(db, moveAndLine('b', 'l2'));
    expect(out).toEqual({});
    expect((await db.query('select * from l')).rows).toEqual([]);
    expect((await db.query("select n from o where id = 'b'")).rows).toEqual([{ n: 0 }]);
  });

  it('leaves nothing written when one part fails', async () => {
    await db.query("insert into l values ('taken', 'b', null)");
    await expect(writeTogether(db, moveAndLine('a', 'taken'))).rejects.toMatchObject({ code: '23505' });
    expect((await db.query("select status, n from o where id = 'a'")).rows).toEqual([{ status: 'open', n: 0 }]);
    // The same statement with a free key then writes both.
    const out = await writeTogether(db, moveAndLine('a', 'l3'));
    expect(out.moved).toMatchObject({ status: 'taken', n: 1 });
    expect((await db.query("select o_id from l where id = 'l3'")).rows).toEqual([{ o_id: 'a' }]);
  });

  it('fails whole, unwritten, where a part required after another did not write, and only then', async () => {
    await migrate(db, [platformMigrations]); // vcs_required
    const withB = (o: string, line: string) => ({
      ...moveAndLine(o, line),
      b: {
        sql: "update o set n = n + 1 where id = 'b' and status = 'open' and exists (select 1 from moved) returning *",
      },
    });
    const required = { if: 'moved', parts: ['line', 'b'] };
    // 'a' moves, but 'b' is closed: the statement fails, and neither the move nor the line is written.
    await expect(writeTogether(db, withB('a', 'l5'), required)).rejects.toMatchObject({
      code: REQUIRED_WRITE_MISSED,
      message: expect.stringContaining('b'),
    });
    expect((await db.query("select status, n from o where id = 'a'")).rows).toEqual([{ status: 'open', n: 0 }]);
    expect((await db.query('select * from l')).rows).toEqual([]);
    // 'b' open: every part writes.
    await db.query("update o set status = 'open' where id = 'b'");
    const out = await writeTogether(db, withB('a', 'l5'), required);
    expect([out.moved?.id, out.line?.id, out.b?.n]).toEqual(['a', 'l5', 1]);
    // 'a' taken now: the move writes nothing, so nothing else is required, and the statement answers with nothing.
    expect(await writeTogether(db, withB('a', 'l6'), required)).toEqual({});
  });

  it('reads as one part a transaction wrote when run inside it', async () => {
    await db.tx(async (q) => {
      await q.query("update o set status = 'open' where id = 'b'");
      const out = await writeTogether(q, moveAndLine('b', 'l4'));
      expect(out.line).toMatchObject({ id: 'l4', o_id: 'b' });
    });
    expect((await db.query("select status from o where id = 'b'")).rows).toEqual([{ status: 'taken' }]);
  });
});
