import { together, type Sql } from './together.ts';

/**
 * One write for `Db.batch`: a statement with its parameters, or one row of a bulk write. Rows of the same bulk
 * write, from every batch of a group, go to the store as one statement (see `mergeWrites`).
 */
export type Statement = { sql: string; params?: unknown[] } | BulkRow;

/**
 * A write that takes many rows in one statement: `sql` reads one array parameter per column ($1…$n, in `row`
 * order), e.g. `insert … select … from unnest($1::text[], …)`. Declared once; rows are grouped by this object.
 */
export interface BulkWrite {
  readonly sql: string;
  /**
   * The same write for one row, its parameters that row's values ($1…$n, in `row` order). A group of one row (most
   * of them, but under load) is sent this instead: the arrays' unnest costs the store more to plan and run than it
   * saves for a single row (docs/performance.md, "One row without its arrays").
   */
  readonly one?: string;
}
export interface BulkRow {
  bulk: BulkWrite;
  row: unknown[];
}

const isBulk = (s: Statement): s is BulkRow => 'bulk' in s;

/**
 * The statements to run for `writes`: every bulk write's rows (in order) as one statement with column arrays,
 * then the plain statements in order. Several bulk writes and no plain statement become one statement (data-
 * modifying CTEs), which Postgres runs atomically without BEGIN and COMMIT: a group of callers' events and facts
 * costs one round trip. Bulk rows of a group are written before its plain statements.
 */
export function mergeWrites(writes: Statement[]): { sql: string; params?: unknown[] }[] {
  const { bulk, plain } = statementsOf(writes);
  if (bulk.length < 2 || plain.length) return [...bulk, ...plain];
  // One statement: each bulk write becomes a CTE, its parameters renumbered after the previous ones'.
  return [together(Object.fromEntries(bulk.map((m, i) => [`w${i}`, m])))];
}

/**
 * Each bulk write's rows as one statement (in order), and the plain statements (in order). A bulk write of one row
 * that has its `one` form is that form; otherwise it is its `sql` with column arrays. `columns`: always the arrays,
 * for a caller that writes its own statement over them.
 */
export function statementsOf(writes: Statement[], opts: { columns?: boolean } = {}): { bulk: Sql[]; plain: Sql[] } {
  const bulks = new Map<BulkWrite, unknown[][]>();
  const plain: Sql[] = [];
  for (const w of writes) {
    if (!isBulk(w)) {
      plain.push(w);
      continue;
    }
    let columns = bulks.get(w.bulk);
    if (!columns) bulks.set(w.bulk, (columns = w.row.map(() => [])));
    w.row.forEach((v, i) => columns![i]!.push(v));
  }
  const bulk = [...bulks].map(([b, columns]) =>
    !opts.columns && b.one && columns[0]?.length === 1
      ? { sql: b.one, params: columns.map((c) => c[0]) }
      : { sql: b.sql, params: columns },
  );
  return { bulk, plain };
}

/**
 * Group commit: batches that arrive while a commit runs are written together in the next transaction, so a
 * process under load commits once for many callers instead of once each. `runGroup` writes a group atomically
 * and answers, per batch, null or the error that batch alone met (a batch whose statement fails is rolled back
 * alone: see `runGroupAtomically`). Every caller is answered after the commit that holds its batch.
 */
export function groupCommitter(
  runGroup: (group: Statement[][]) => Promise<(Error | null)[]>,
  opts: { concurrency: number; maxGroup: number },
) {
  const queue: { statements: Statement[]; resolve(): void; reject(e: Error): void }[] = [];
  let running = 0;
  const flush = async () => {
    while (queue.length) {
      const group = queue.splice(0, opts.maxGroup);
      let errors: (Error | null)[];
      try {
        errors = await runGroup(group.map((b) => b.statements));
      } catch (e) {
        errors = group.map(() => e as Error);
      }
      group.forEach((b, i) => (errors[i] ? b.reject(errors[i]!) : b.resolve()));
    }
    running--;
  };
  return (statements: Statement[]) =>
    new Promise<void>((resolve, reject) => {
      queue.push({ statements, resolve, reject });
      if (running < opts.concurrency) {
        running++;
        setImmediate(flush);
      }
    });
}

/**
 * A group as one atomic script (`atomically` runs statements in one transaction, or alone when there is one);
 * bulk rows are merged first. If any statement fails, the whole script rolls back and each batch runs again on
 * its own, so one bad batch fails alone (the rare path costs more).
 */
export async function runGroupAtomically(
  atomically: (statements: { sql: string; params?: unknown[] }[]) => Promise<void>,
  group: Statement[][],
): Promise<(Error | null)[]> {
  try {
    await atomically(mergeWrites(group.flat()));
    return group.map(() => null);
  } catch (e) {
    if (group.length === 1) return [e as Error];
  }
  const out: (Error | null)[] = [];
  for (const b of group) {
    try {
      await atomically(mergeWrites(b));
      out.push(null);
    } catch (e) {
      out.push(e as Error);
    }
  }
  return out;
}
