// The CLI as one JavaScript file, dist/vcs.js: the CLI, the SDK, the catalog and zod bundled by esbuild, so a call
// needs nothing but Node (no TypeScript loader). `pnpm pack` runs this first (prepack); in a checkout bin/vcs.js runs
// it again whenever a source is newer than the bundle. The x402 client and viem, which only paying an OFFER needs
// (src/pay.ts imports them dynamically), stay out of it: they are the package's dependencies, loaded on a payment.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
export const BUNDLE = join(pkg, 'dist', 'vcs.js');

/** Loaded at run time, from the package's node_modules, only when a call pays (never bundled). */
export const EXTERNAL = ['@x402/core', '@x402/core/*', '@x402/evm', '@x402/evm/*', 'viem', 'viem/*'];

/** Written to a temporary file and renamed over the bundle, so a `vcs` starting meanwhile never reads half of one. */
export async function bundleCli() {
  const { build } = await import('esbuild');
  const out = await build({
    entryPoints: [join(pkg, 'src', 'main.ts')],
    outfile: BUNDLE,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: EXTERNAL,
    logLevel: 'error',
    legalComments: 'none',
    minifyWhitespace: true,
    write: false,
  });
  mkdirSync(dirname(BUNDLE), { recursive: true });
  const tmp = `${BUNDLE}.${process.pid}.tmp`;
  writeFileSync(tmp, out.outputFiles[0].contents);
  renameSync(tmp, BUNDLE);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await bundleCli();
