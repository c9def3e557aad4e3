#!/usr/bin/env node
// The `vcs` bin runs the CLI bundled to plain JavaScript (dist/vcs.js): an installed package ships the bundle (made
// at pack time) and nothing else; in a checkout the bundle is made with esbuild on first use and again whenever a
// source is newer, so a call starts in about 0.2 s instead of loading TypeScript through tsx (1+ s).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const bundle = join(here, '..', 'dist', 'vcs.js');

/** The newest modification time under the sources the bundle is made of (the CLI, the SDK and the catalog). */
function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

// A checkout has the sources beside the bin; an installed package has only the bundle.
if (existsSync(join(here, '..', 'src'))) {
  const sources = ['cli/src', 'sdk/src', 'contract/src'].map((d) => join(here, '..', '..', d));
  if (!existsSync(bundle) || statSync(bundle).mtimeMs < Math.max(...sources.map(newest)))
    await (await import('../scripts/build.js')).bundleCli();
}
const { main } = await import(bundle);
process.exitCode = await main(process.argv.slice(2));
