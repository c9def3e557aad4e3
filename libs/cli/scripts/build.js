// The CLI as one JavaScript file, dist/vcs.js: the CLI, the SDK, the catalog and zod bundled by esbuild, so the
// installed package needs nothing but Node (no dependencies, no TypeScript loader). `pnpm pack` runs this first
// (prepack); in a checkout bin/vcs.js runs it again whenever a source is newer than the bundle.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
export const BUNDLE = join(pkg, 'dist', 'vcs.js');

/** Written to a temporary file and renamed over the bundle, so a `vcs` starting meanwhile never reads half of one. */
export async function bundleCli() {
  const { build } = await import('esbuild');
  const out = await build({
    entryPoints: [join(pkg, 'src', 'main.ts')], outfile: BUNDLE, bundle: true, platform: 'node', format: 'esm',
    target: 'node20', logLevel: 'error', legalComments: 'none', minifyWhitespace: true, write: false,
  });
  mkdirSync(dirname(BUNDLE), { recursive: true });
  const tmp = `${BUNDLE}.${process.pid}.tmp`;
  writeFileSync(tmp, out.outputFiles[0].contents);
  renameSync(tmp, BUNDLE);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await bundleCli();
