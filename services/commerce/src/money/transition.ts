import { edgeOf, IllegalTransition, lifecycles, type EventOf } from '@vcs/contract';
import type { Queryable } from '@vcs/platform';

/** The money's tables commerce writes; a deal step's moves are in the workflows pillar (it asks the same table). */
type Stored = 'intent' | 'payment' | 'execution' | 'handoff';

/**
 * The one way a status is written: `event` moves the row from a state the table (libs/contract lifecycles.ts)
 * lists for it, to the state it names, with the columns in `set`, in one conditional UPDATE. A row in any other
 * state is not touched (another request moved it first, or the move is not ours to make): the answer is undefined.
 * `when` adds a condition of the caller's (a lease, an attempt) in SQL over the row's columns.
 */
export async function move<R, K extends Stored>(
  q: Queryable,
  entity: K,
  id: string,
  event: EventOf<K>,
  set: Record<string, unknown> = {},
  when?: { sql: string; params: unknown[] },
): Promise<R | undefined> {
  const { from, to } = edgeOf(entity, event);
  const cols = Object.keys(set);
  const params: unknown[] = [id, to, from, ...cols.map((c) => set[c])];
  const assignments = ['status = $2', ...cols.map((c, i) => `${c} = $${i + 4}`)];
  let extra = '';
  if (when) {
    // The caller's placeholders are numbered from $1 within its own params: shift them past ours.
    const base = params.length;
    extra = ` and (${when.sql.replace(/\$(\d+)/g, (_, n) => `$${Number(n) + base}`)})`;
    params.push(...when.params);
  }
  const { rows } = await q.query<R>(
    `update ${lifecycles[entity].table} set ${assignments.join(', ')}
     where id = $1 and status = any($3::text[])${extra} returning *`,
    params,
  );
  return rows[0];
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
  const row = await move<R, K>(q, entity, id, event, set);
  if (!row) throw new IllegalTransition(entity, from, event);
  return row;
}
