import type { Queryable } from './db.ts';

/** One statement with its own parameters, numbered from $1. */
export interface Sql {
  sql: string;
  params?: unknown[];
}

/** `sql`'s placeholders moved past `offset` others ($1 becomes $offset+1). */
export const shifted = (sql: string, offset: number) =>
  sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`);

/**
 * The guard of a part written only where the part `name`, earlier in the same statement, wrote a row (its `returning`
 * is not empty): `where ${wrote('intent').sql}`, or a move's `when`.
 */
export const wrote = (name: string) => ({ sql: `exists (select 1 from ${name})`, params: [] as unknown[] });

const returns = (p: Sql) => /\sreturning\s/i.test(`${p.sql} `);

/**
 * Several writes as one statement: each a data-modifying CTE named by its key, its placeholders renumbered after the
 * previous ones'. Postgres runs the statement atomically without BEGIN and COMMIT: in the embedded store a write of
 * three rows costs about a third of the same three statements in a transaction (docs/performance.md), and on
 * Postgres it is one round trip instead of five. A part sees no other part's rows, only what an earlier part
 * returns, by name (`wrote`: `where exists (select 1 from intent)`); every part runs once, whether or not it is referred to.
 * A part that fails (a unique key, say) fails the whole statement, so nothing of it is written. What a part returns
 * (`returning`) is the statement's answer under its name.
 */
export function together(parts: Record<string, Sql>, required?: Required): Sql {
  const entries = Object.entries(parts);
  const params = entries.flatMap(([, p]) => p.params ?? []);
  // The text depends only on the parts' texts, how many parameters each has and what is required: made once per shape.
  const shape =
    entries.map(([name, p]) => `${name}\u0000${p.params?.length ?? 0}\u0000${p.sql}`).join('\u0001') +
    (required ? `\u0002${required.if}\u0000${required.parts.join('\u0000')}` : '');
  let sql = texts.get(shape);
  if (sql === undefined) {
    if (texts.size >= MAX_TEXTS) texts.clear();
    texts.set(shape, (sql = textOf(entries, required)));
  }
  return { sql, params };
}

/**
 * Parts that must write where the part `if` wrote (the moves a recorded execution makes: its intent's, its
 * payment's). A miss fails the statement (SQLSTATE `VC001`: `REQUIRED_WRITE_MISSED`), so none of it is written: what a
 * transaction rolled back by its caller did, in one round trip instead of three.
 */
export interface Required {
  if: string;
  parts: string[];
}

/** A required part did not write (platform migration 006's `vcs_required`): the statement wrote nothing. */
export const REQUIRED_WRITE_MISSED = 'VC001';

/** The statements' texts by shape, as many as the services write (a few dozen), bounded all the same. */
const texts = new Map<string, string>();
const MAX_TEXTS = 500;

function textOf(entries: [string, Sql][], required?: Required): string {
  let offset = 0;
  const ctes = entries.map(([name, p]) => {
    const at = offset;
    offset += p.params?.length ?? 0;
    return `${name} as (${shifted(p.sql, at)})`;
  });
  const first = entries
    .filter(([, p]) => returns(p))
    .map(([name]) => `(select to_jsonb(r) from ${name} r limit 1) as ${name}`);
  // In the select list, so each check runs (a CTE no one reads would not) once every part has written.
  const checks = (required?.parts ?? []).map(
    (name) =>
      `vcs_required(not exists (select 1 from ${required!.if}) or exists (select 1 from ${name}), '${name}') ` +
      `as "required ${name}"`,
  );
  return `with ${ctes.join(', ')} select ${[...first, ...checks].join(', ') || '1'}`;
}

/** A part whose returned row is read by `row` (a parser: zod's, or a typed mapper), so what it returns is typed. */
export type Part<R = unknown> = Sql & { row?: (v: unknown) => R };
/** What `writeTogether` reads of a part: its parser's type, or a plain record for a part without one. */
export type RowOfPart<P> = P extends { row: (v: unknown) => infer R } ? R : Record<string, unknown>;

/**
 * Run `parts` as one statement (`together`) and read what each returned: its first row (as JSON: timestamps as ISO
 * text, jsonb as values) through the part's `row` parser, or undefined where it wrote none.
 */
export async function writeTogether<P extends Record<string, Part<unknown>>>(
  q: Queryable,
  parts: P,
  required?: Required,
): Promise<{ [K in keyof P]?: RowOfPart<P[K]> }> {
  const s = together(parts, required);
  const { rows } = await q.query<Record<string, unknown>>(s.sql, s.params);
  const row = rows[0] ?? {};
  const out: Record<string, unknown> = {};
  for (const [k, part] of Object.entries(parts)) {
    const v = row[k];
    if (v === null || v === undefined) continue;
    const value: unknown = typeof v === 'string' ? JSON.parse(v) : v;
    out[k] = part.row ? part.row(value) : value;
  }
  return out as { [K in keyof P]?: RowOfPart<P[K]> };
}
