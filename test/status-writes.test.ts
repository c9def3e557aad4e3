/**
 * Every state of the money's records — intents, payments, executions, handoffs, API keys, deals and their steps —
 * moves only through the table (libs/contract lifecycles.ts): commerce's rows through `move` (money/transition.ts, one
 * conditional UPDATE built from the table), a deal and its steps through `nextState` before the deal is saved. This
 * reads every source file of the services and fails on a status written any other way: an UPDATE that sets one of
 * those tables' state column outside transition.ts, or a deal's or step's state assigned from anything but
 * `nextState`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lifecycles } from '@vcs/contract';

const root = join(import.meta.dirname, '..');
const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? e.name === 'node_modules'
        ? []
        : sources(join(dir, e.name))
      : e.name.endsWith('.ts') && !e.name.endsWith('.test.ts')
        ? [join(dir, e.name)]
        : [],
  );

/** The tables the table governs, each with its state column (a deal step lives inside its deal's row). */
const governed = Object.values(lifecycles)
  .filter((l) => /^\w+$/.test(l.table))
  .map((l) => ({ table: l.table, column: l.column }));
/** The one writer of commerce's states. */
const WRITER = 'services/commerce/src/money/transition.ts';

/** What is wrong in `text`: each status written around the table, as `file:line: the line`. */
export function bypasses(file: string, text: string): string[] {
  const found: string[] = [];
  const lineOf = (i: number) => text.slice(0, i).split('\n').length;
  for (const { table, column } of governed) {
    const update = new RegExp(`update\\s+${table}\\s+set\\b([^;\`]*?)\\bwhere\\b`, 'gis');
    for (const m of text.matchAll(update)) {
      const setsState = new RegExp(`(^|[\\s,])${column}\\s*=`, 'i').test(m[1]!);
      // A deal's row is saved whole, its state moved by nextState first (the assignments below are checked).
      const savedWhole = table === 'deals' && file.endsWith('workflows/src/buy/store.ts');
      if (setsState && file !== WRITER && !savedWhole)
        found.push(`${file}:${lineOf(m.index!)}: ${m[0].split('\n')[0]}`);
    }
    // A SET clause made at run time cannot be read here: only the writer builds one for a governed table.
    if (file !== WRITER)
      for (const m of text.matchAll(new RegExp(`update\\s+${table}\\s+set\\s+\\$\\{`, 'gi')))
        found.push(`${file}:${lineOf(m.index!)}: ${m[0]}… (a SET clause made at run time)`);
  }
  // A deal's state and a step's status are fields of the deal's JSON: assigned only from nextState.
  if (file.startsWith('services/workflows/'))
    for (const m of text.matchAll(/\b(?:d|deal|saved|step|s)\.(state|status)\s*=(?!=)\s*([^;\n]*)/g))
      if (!m[2]!.startsWith('nextState(')) found.push(`${file}:${lineOf(m.index!)}: ${m[0]}`);
  return found;
}

describe('status writes go through the table (libs/contract lifecycles.ts)', () => {
  it('no service writes a governed state around it', () => {
    const files = sources(join(root, 'services'));
    expect(files.length).toBeGreaterThan(50);
    const found = files.flatMap((f) => bypasses(relative(root, f), readFileSync(f, 'utf8')));
    expect(found, 'write these through move() (commerce) or nextState() (workflows)').toEqual([]);
  });

  it('the check sees a bypass when there is one', () => {
    expect(
      bypasses('services/commerce/src/x.ts', "q.query(`update intents set status = 'settled' where id = $1`)"),
    ).toHaveLength(1);
    expect(
      bypasses(
        'services/commerce/src/x.ts',
        'q.query(`update api_keys\n set grace_until = $2, status = $3\n where id = $1`)',
      ),
    ).toHaveLength(1);
    expect(bypasses('services/workflows/src/buy/x.ts', "d.state = 'SETTLED';")).toHaveLength(1);
    expect(bypasses('services/commerce/src/x.ts', 'q.query(`update api_keys set ${set} where id = $1`)')).toHaveLength(
      1,
    );
    expect(
      bypasses('services/workflows/src/buy/x.ts', "step.status = nextState('dealStep', step.status, 'fail');"),
    ).toEqual([]);
    expect(bypasses(WRITER, 'q.query(`update payments set status = $2 where id = $1`)')).toEqual([]);
    expect(
      bypasses('services/commerce/src/x.ts', 'q.query(`update intents set delivered_at = $2 where id = $1`)'),
    ).toEqual([]);
  });
});
