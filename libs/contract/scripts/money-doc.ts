/**
 * Writes the money model's diagrams into docs/money.md between its markers, from libs/contract lifecycles.ts
 * (`pnpm gen:money`); lifecycles.test.ts fails when the committed text differs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { lifecycleDiagram } from '../src/lifecycles.ts';

export const DOC = fileURLToPath(new URL('../../../docs/money.md', import.meta.url));
const BEGIN = '<!-- lifecycles:begin — generated from libs/contract/src/lifecycles.ts by `pnpm gen:money` -->';
const END = '<!-- lifecycles:end -->';

/** The generated part of the doc (empty when its markers are missing). */
export function between(doc: string): string {
  const a = doc.indexOf(BEGIN);
  const b = doc.indexOf(END);
  return a < 0 || b < 0 ? '' : doc.slice(a + BEGIN.length + 1, b);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const doc = readFileSync(DOC, 'utf8');
  const a = doc.indexOf(BEGIN);
  const b = doc.indexOf(END);
  if (a < 0 || b < 0) throw new Error(`docs/money.md: the markers ${BEGIN} … ${END} are missing`);
  writeFileSync(DOC, doc.slice(0, a + BEGIN.length + 1) + lifecycleDiagram() + doc.slice(b));
  console.log('docs/money.md: the money model regenerated');
}
