import { mergeWrites, type Db, type Queryable, type Statement } from './db.ts';

const ROLLBACK = Symbol('rollback');

/**
 * A transaction opened only when something queries through it. A capability's handler gets one: most handlers
 * compute their answer without the store, and then no transaction waits on them; the answer's events and fact
 * go to the store as one `batch` (group commit) instead. A handler that does query gets a real transaction, and
 * the events and fact join it.
 */
export function lazyTx(db: Db) {
  let handle: Promise<{ q: Queryable; end(commit: boolean): Promise<void> }> | undefined;
  const open = () =>
    (handle ??= new Promise((ready, failed) => {
      let finish!: (commit: boolean) => void;
      const finished = new Promise<boolean>((r) => {
        finish = r;
      });
      let done!: Promise<void>; // set just below; `end` runs only once the first query has the transaction
      const end = async (commit: boolean) => {
        finish(commit);
        await done.catch((e) => {
          if (e !== ROLLBACK) throw e;
        });
      };
      // `fn` may run before db.tx returns (PGlite's BEGIN waits for the first statement), so `end` exists first.
      done = db.tx(async (q) => {
        ready({ q, end });
        if (!(await finished)) throw ROLLBACK;
      });
      done.catch(failed); // a transaction that could not begin fails the first query; later, `end` reports
    }));
  return {
    q: { query: async (sql: string, params?: unknown[]) => (await open()).q.query(sql, params) } as Queryable,
    get opened() {
      return handle !== undefined;
    },
    /** Commit the open transaction, or write `statements` as one batch when none was opened. */
    async commit(statements: Statement[]) {
      if (handle) {
        const { q, end } = await handle;
        try {
          for (const s of mergeWrites(statements)) await q.query(s.sql, s.params);
        } catch (e) {
          await end(false);
          throw e;
        }
        return end(true);
      }
      if (statements.length) await db.batch(statements);
    },
    async rollback() {
      if (handle) await (await handle.catch(() => undefined))?.end(false);
    },
  };
}
