import { mergeWrites, type Db, type Queryable } from '@vcs/platform';

export interface StatementCount {
  /** Statements sent so far, BEGIN and COMMIT included. */
  n: number;
  /** The same, by text (a transaction's BEGIN and COMMIT as `BEGIN`, `COMMIT`). */
  texts: Map<string, number>;
}

/**
 * Count every statement `db` is sent, in place (the pillars hold this same object): `query` on the database and inside
 * each transaction, each transaction's BEGIN and COMMIT, each batch's statements as the store runs them (bulk rows
 * merged; one statement alone, several in a transaction). `ignore(sql)`: statements not counted (a timer's poll,
 * which runs whatever the traffic).
 */
export function countStatements(db: Db, ignore: (sql: string) => boolean = () => false): StatementCount {
  const count: StatementCount = { n: 0, texts: new Map() };
  const add = (sql: string) => {
    if (ignore(sql)) return;
    count.n++;
    count.texts.set(sql, (count.texts.get(sql) ?? 0) + 1);
  };
  const query = db.query.bind(db);
  const tx = db.tx.bind(db);
  const batch = db.batch.bind(db);
  const inner = (q: Queryable): Queryable => ({
    ...q,
    query: (sql, params) => {
      add(sql);
      return q.query(sql, params);
    },
  });
  db.query = ((sql: string, params?: unknown[]) => {
    add(sql);
    return query(sql, params);
  }) as Db['query'];
  db.tx = (<T>(fn: (q: Queryable) => Promise<T>) => {
    add('BEGIN');
    return tx((q) => fn(inner(q))).finally(() => add('COMMIT'));
  }) as Db['tx'];
  db.batch = ((statements: Parameters<Db['batch']>[0]) => {
    const merged = mergeWrites(statements);
    if (merged.length > 1) add('BEGIN');
    for (const st of merged) add(st.sql);
    if (merged.length > 1) add('COMMIT');
    return batch(statements);
  }) as Db['batch'];
  return count;
}
