/**
 * The type check, as one suite of the run: `tsc --noEmit` over every workspace file (tsconfig.json) runs beside the
 * other suites instead of before them (TypeScript 7's native tsc: about 11 s, 18 s of CPU over its threads).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');

it('tsc --noEmit finds no type error in the workspace', () => {
  const r = spawnSync(
    process.execPath,
    [join(root, 'node_modules/typescript/bin/tsc'), '--noEmit', '-p', 'tsconfig.json'],
    {
      cwd: root,
      encoding: 'utf8',
    },
  );
  expect(`${r.stdout}${r.stderr}`.trim()).toBe('');
  expect(r.status).toBe(0);
}, 300_000);
