import { edgeOf, IllegalTransition, leaseRunOutSql, lifecycles, type EventOf } from '@vcs/contract';
import { shifted, type Part, type Queryable } from '@vcs/platform';
import { rowSchemas } from './rows.ts';

/** The tables commerce writes a status in; a deal and its steps move in the workflows pillar (it asks the same table). */
export type Stored = 'intent' | 'payment' | 'execution' | 'handoff' | 'key';

/** The row a move returns: parsed for the money's tables (rows.ts), a plain record for the others. */
export type RowOf<K extends Stored> = K extends keyof typeof rowSchemas
  ? ReturnType<(typeof rowSchemas)[K]['parse']>
  : Record<string, unknown>;
const parserOf = (entity: Stored) =>
  entity in rowSchemas
    ? (v: unknown) => rowSchemas[entity as keyof typeof rowSchemas].parse(v)
    : (v: unknown) => v as Record<string, unknown>;

/** A condition of the caller's on the row beside its state: the lease rule (the table's), or its own SQL. */
export type When = { leaseRunOutAt: string } | { sql: string; params: unknown[] };

/**
 * The one way a status is written: `event` moves the row from a state the table (libs/contract lifecycles.ts)
 * lists for it, to the state it names, with the columns in `set`, in one conditional UPDATE. A row in any other
 * state is not touched (another request moved it first, or the move is not ours to make): the answer is undefined.
 * `when` adds a condition: the table's lease rule (its lease ran out at that time), or SQL of the caller's over the
 * row's columns.
 */
export async function move<R = never, K extends Stored = Stored>(
  q: Queryable,
  entity: K,
  id: string,
  event: EventOf<K>,
  set: Record<string, unknown> = {},
  when?: When,
): Promise<R | undefined> {
  const m = moveSql(entity, id, event, set, when);
  const { rows } = await q.query<unknown>(m.sql, m.params);
  if (rows[0] === undefined) return undefined;
  return m.row(rows[0]) as R;
}

/** `move` as a statement, for a caller that writes it together with others (platform `writeTogether`). */
export function moveSql<K extends Stored>(
  entity: K,
  id: string,
  event: EventOf<K>,
  set: Record<string, unknown> = {},
  when?: When,
): Part<RowOf<K>> & { row: (v: unknown) => RowOf<K> } {
  const { from, to } = edgeOf(entity, event);
  const { table, column } = lifecycles[entity];
  const cols = Object.keys(set);
  const params: unknown[] = [id, to, from, ...cols.map((c) => set[c])];
  const assignments = [`${column} = $2`, ...cols.map((c, i) => `${c} = $${i + 4}`)];
  let extra = '';
  if (when && 'leaseRunOutAt' in when) {
    params.push(when.leaseRunOutAt);
    extra = ` and ${leaseRunOutSql(params.length)}`;
  } else if (when) {
    // The caller's placeholders are numbered from $1 within its own params: shift them past ours.
    extra = ` and (${shifted(when.sql, params.length)})`;
    params.push(...when.params);
  }
  return {
    sql: `update ${table} set ${assignments.join(', ')}
     where id = $1 and ${column} = any($3::text[])${extra} returning *`,
    params,
    row: parserOf(entity) as (v: unknown) => RowOf<K>,
  };
}

/** For a move that must happen (the row was read under a lock in this transaction): a miss is a bug. */
export async function mustMove<R, K extends Stored>(
  q: Queryable,
  entity: K,
  id: string,
  from: string,
  event: EventOf<K>,
  set: Record<string, unknown> = {},
): Promise<R> {
  return moved(await move<R, K>(q, entity, id, event, set), entity, from, event);
}

/** The row a move that must happen returned (one written with others: `moveSql`); a miss is a bug, and throws. */
export function moved<R>(row: R | undefined, entity: Stored, from: string, event: string): R {
  if (!row) throw new IllegalTransition(entity, from, event);
  return row;
}

/**
 * States as SQL literals (`'held', 'settling'`), for a statement's text: a state passed as a parameter leaves a
 * prepared statement's generic plan unable to use a partial index on those states (`payments_owed`, `payments_open`,
 * `executions_due`), and it reads the whole table instead. The states are the table's, never a caller's.
 */
export const statesSql = (states: readonly string[]) => states.map((s) => `'${s}'`).join(', ');
