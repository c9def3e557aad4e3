/**
 * The SDK as a package anyone can install: ESM (dist/index.js), CommonJS (dist/index.cjs) and declarations
 * (dist/*.d.ts) that need neither @types/node nor the monorepo. `pnpm pack` and `pnpm publish` run it first (prepack),
 * so a tarball always holds a dist/ made from the sources it was packed from; the workspace keeps importing the
 * TypeScript sources, and the tarball's exports point at dist/ (publishConfig in package.json).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(pkg, 'dist');

export async function buildSdk() {
  rmSync(dist, { recursive: true, force: true });
  const common = {
    entryPoints: [join(pkg, 'src', 'index.ts')] as string[],
    bundle: true,
    platform: 'neutral',
    target: 'es2022',
    logLevel: 'warning',
    legalComments: 'none',
  } as const;
  await build({ ...common, format: 'esm', outfile: join(dist, 'index.js') });
  await build({ ...common, format: 'cjs', outfile: join(dist, 'index.cjs') });
  // The package exports only its package.json among its files: its bin sits beside it.
  const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');
  execFileSync(process.execPath, [tsc, '-p', join(pkg, 'tsconfig.build.json')], { stdio: 'inherit' });
  // Declarations name their siblings as the JavaScript a consumer resolves (`./runtime.js`), whatever tsc kept.
  const fix = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) fix(p);
      else if (p.endsWith('.d.ts'))
        writeFileSync(p, readFileSync(p, 'utf8').replace(/(from\s+['"]\.{1,2}\/[^'"]+)\.ts(['"])/g, '$1.js$2'));
    }
  };
  fix(dist);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await buildSdk();
