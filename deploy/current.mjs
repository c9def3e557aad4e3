// `pnpm start`'s first step, in plain JavaScript (no TypeScript loader: ~0.1 s, where loading tsx alone is ~0.5 s):
// exits 0 when what deploy/build.ts made is current — the same inputs (a hash of their contents) and every output
// still there — and 1 otherwise, and then the start runs the build.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');
/** Written by deploy/build.ts when all of its outputs are made: `{ inputs, outputs }`. */
export const CURRENT = join(root, 'dist', '.current.json');

/**
 * What the build is made from: every file of the workspace's packages (libs/, services/; not their node_modules,
 * dist/ or caches, nor the tarballs `pnpm pack` leaves in a package's folder), the build script and the lockfile (the
 * packages bundled in). Read whole and hashed (~1,000 files, 30–60 ms): a checkout, a `git stash` or an editor that
 * keeps times would fool a comparison of times.
 */
/** A package tarball (`cd libs/sdk && pnpm pack` writes `vcs-sdk-<version>.tgz` there): an output, never an input. */
export const PACKED = /\.tgz$/;

export function inputFiles() {
  const out = ['deploy/build.ts', 'deploy/services.ts', 'package.json', 'pnpm-lock.yaml', 'tsconfig.json'];
  const walk = (rel) => {
    for (const e of readdirSync(join(root, rel), { withFileTypes: true })) {
      if (e.name.startsWith('.') || e.name === 'node_modules' || e.name === 'dist' || PACKED.test(e.name)) continue;
      const r = `${rel}/${e.name}`;
      if (e.isDirectory()) walk(r);
      else if (e.isFile()) out.push(r);
    }
  };
  walk('libs');
  walk('services');
  return out.sort();
}

export function hashOf(files) {
  const h = createHash('sha256');
  for (const f of files)
    h.update(f)
      .update('\0')
      .update(readFileSync(join(root, f)))
      .update('\0');
  return h.digest('hex');
}

export function isCurrent() {
  try {
    const { inputs, outputs } = JSON.parse(readFileSync(CURRENT, 'utf8'));
    return outputs.every((f) => existsSync(f)) && inputs === hashOf(inputFiles());
  } catch {
    return false;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (isCurrent()) console.log('build is current');
  else process.exit(1);
}
