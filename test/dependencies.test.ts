import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/** Every workspace package's runtime dependencies are imported (or resolved, for a data file they ship) by its own code: none is declared and unused. */
const root = join(import.meta.dirname, '..');
const packages = ['libs', 'services'].flatMap((d) => readdirSync(join(root, d)).map((p) => join(root, d, p)));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (f === 'node_modules' || f === 'dist') return [];
    if (statSync(p).isDirectory()) return sources(p);
    return /\.(ts|mjs|js)$/.test(f) ? [p] : [];
  });
}

describe('declared dependencies', () => {
  it.each(packages.map((p) => [p.slice(root.length + 1), p]))(
    '%s imports every dependency it declares',
    (_name, dir) => {
      const deps = Object.keys(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).dependencies ?? {});
      const code = sources(dir)
        .map((f) => readFileSync(f, 'utf8'))
        .join('\n');
      const unused = deps.filter(
        (d) =>
          !new RegExp(
            `(from |import\\(|require\\(|resolve\\()['"]${d.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}(/[^'"]*)?['"]`,
          ).test(code),
      );
      expect(unused).toEqual([]);
    },
  );
});
