/**
 * `pnpm build`: each service as one JavaScript file in dist/ (esbuild), so production processes run plain
 * `node dist/<service>.js`: no TypeScript loader thread, fewer modules, a smaller heap, a faster start.
 * Packages that load their own files at run time (WebAssembly: PGlite, QuickJS, sql.js; esbuild's binary, which MCP
 * exec uses to compile TypeScript) stay outside the bundle and are imported by relative path from where pnpm put them.
 */
import { build, type Plugin } from 'esbuild';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGLITE_SEED } from '../services/embedded/src/seed.ts';
import { buildCacheDir, restoreFromCache, saveToCache } from './build-cache.ts';
import { CURRENT, hashOf, inputFiles } from './current.mjs';
import { SERVICES } from './services.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const DIST = join(root, 'dist');
const LOAD_OWN_FILES = /^(@electric-sql\/pglite|quickjs-emscripten|@jitl\/|esbuild$|sql\.js$)/;

const keepWasmPackagesOutside: Plugin = {
  name: 'keep-wasm-packages-outside',
  setup(b) {
    b.onResolve({ filter: LOAD_OWN_FILES }, async (args) => {
      if (args.pluginData === 'inner') return undefined;
      const r = await b.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, pluginData: 'inner' });
      if (r.errors.length) return { errors: r.errors };
      return { path: `./${relative(DIST, r.path)}`, external: true };
    });
  },
};

/**
 * Our modules that find files beside themselves (migrations, suite verdicts, the SDK's source for MCP exec) keep
 * doing so from the bundle: `import.meta.url` becomes the URL of the source file and `import.meta.resolve('x')`
 * the URL of what it resolved to at build time, both relative to the bundle, so dist/ can move with the repository.
 */
const sourceRelativeUrls: Plugin = {
  name: 'source-relative-urls',
  setup(b) {
    const urlOf = (file: string) => `new URL(${JSON.stringify(relative(DIST, file))}, import.meta.url).href`;
    b.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (args.path.includes('/node_modules/')) return undefined;
      const source = await readFile(args.path, 'utf8');
      if (!source.includes('import.meta.')) return undefined;
      let text = source.replaceAll('import.meta.url', urlOf(args.path));
      for (const [call, spec] of text.matchAll(/import\.meta\.resolve\(['"]([^'"]+)['"]\)/g)) {
        const r = await b.resolve(spec!, { kind: 'import-statement', resolveDir: dirname(args.path) });
        if (r.errors.length) return { errors: r.errors };
        text = text.replaceAll(call, urlOf(r.path));
      }
      return { contents: text, loader: 'ts' };
    });
  },
};

/** Bundled CommonJS packages call require() and read __dirname: give the ESM output both. */
const BANNER =
  "import { createRequire as __vcsRequire } from 'node:module'; " +
  "import { fileURLToPath as __vcsPath } from 'node:url'; " +
  'const require = __vcsRequire(import.meta.url); ' +
  'const __filename = __vcsPath(import.meta.url); ' +
  "const __dirname = __vcsPath(new URL('.', import.meta.url));";

/** One bundle per service (deploy/services.ts: the gateway and each pillar's), and the embedded process. */
export const entries: Record<string, string> = Object.fromEntries(
  ['embedded', ...SERVICES].map((s) => [s, `services/${s}/src/main.ts`]),
);

/** How every bundle here is made (the services, and the bench's ceiling so it compares like with like). */
export const BUNDLE = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  banner: { js: BANNER },
  logLevel: 'warning',
  // Whitespace, comments and non-ASCII text out: V8 keeps each module's source in the heap (as two-byte text if
  // one character needs it), so this is megabytes of every process's memory. Names stay, for logs and errors.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  charset: 'ascii',
} as const;

const STAMP = join(DIST, '.inputs');
const stampOf = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : '');

export async function buildAll(inputs = hashOf(inputFiles())) {
  await rm(DIST, { recursive: true, force: true }); // no stale chunks from an earlier build
  await build({
    ...BUNDLE,
    absWorkingDir: root,
    entryPoints: Object.fromEntries(Object.entries(entries).map(([k, v]) => [k, join(root, v)])),
    outdir: DIST,
    splitting: true, // code shared by the services lands in shared chunks
    sourcemap: true,
    plugins: [keepWasmPackagesOutside, sourceRelativeUrls],
  });
  writeFileSync(STAMP, inputs); // last: a build stopped half-way leaves no stamp, and the next start builds again
}

/** A TypeScript script in a node process of its own (tsx); rejects when it fails. */
function runScript(file: string) {
  return new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file], { cwd: root, stdio: 'inherit' });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${relative(root, file)} exited ${code}`))));
  });
}

/**
 * The slim, indexed vPIC database the data pillar decodes from (libs/vin/src/vpic.ts), made once (~5 s) and kept:
 * made here so that a first start, or an image with a read-only file system, does not pay for it.
 */
async function ensureVpic() {
  const { defaultSlimPath, removeStaleSlims } = await import('../libs/vin/src/vpic.ts');
  const path = defaultSlimPath();
  if (!existsSync(path)) {
    // In the cache, named by its corgi version and slim number and by the code that makes it (a change to the slim
    // statements that forgot to bump the number must not be served from the cache of another clone).
    const made = hashOf(['libs/vin/src/vpic.ts', 'libs/vin/scripts/build-slim.ts', 'pnpm-lock.yaml']).slice(0, 16);
    const name = basename(path).replace(/\.sqlite$/, `-${made}.sqlite`);
    if (!restoreFromCache(buildCacheDir(), name, path)) {
      // In a process of its own: it holds its thread for seconds, which the seed's migrations (PGlite's messages)
      // and the bundling would otherwise wait behind (a first build 12.5 s → 9.3–11 s).
      await runScript(join(root, 'libs/vin/scripts/build-slim.ts'));
      saveToCache(buildCacheDir(), path, name, 'vpic-');
    }
  }
  // Older builds' copies go, so libs/vin/.cache (which the image copies) holds only the file this build reads.
  removeStaleSlims();
  return path;
}

/**
 * The embedded database prepared here, so a first start copies a directory instead of making a database
 * (services/embedded PGLITE_SEED; createPgliteDb): PGlite's initdb is ~4 s and ~700 MB of WebAssembly memory, and the
 * migrations a few hundred milliseconds more. Made again when a migration, the PGlite worker or the lockfile changes
 * (or copied from the build cache, where another clone made it); says which, or false when it was current.
 */
export async function ensureSeed(files: string[] = inputFiles()): Promise<'made' | 'copied' | false> {
  const inputs = hashOf(files.filter((f) => /\/migrations\/[^/]+\.sql$|pglite-worker\.mjs$|^pnpm-lock\.yaml$/.test(f)));
  const stamp = join(PGLITE_SEED, '.inputs');
  if (stampOf(stamp) === inputs) return false;
  const cached = `pglite-seed-${inputs.slice(0, 16)}`;
  if (restoreFromCache(buildCacheDir(), cached, PGLITE_SEED) && stampOf(stamp) === inputs) return 'copied';
  const { allMigrations } = await import('../services/embedded/src/index.ts');
  const { createPgliteDb, migrate } = await import('../libs/platform/src/index.ts');
  const tmp = `${PGLITE_SEED}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  const db = await createPgliteDb(tmp);
  try {
    await migrate(db, allMigrations);
    await db.query('checkpoint');
  } finally {
    await db.close();
  }
  writeFileSync(join(tmp, '.inputs'), inputs);
  rmSync(PGLITE_SEED, { recursive: true, force: true });
  renameSync(tmp, PGLITE_SEED);
  saveToCache(buildCacheDir(), PGLITE_SEED, cached, 'pglite-seed-');
  return 'made';
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const t = performance.now();
  const files = inputFiles();
  const inputs = hashOf(files);
  // Nothing changed since the last build (`pnpm start` again): no bundling, the second start goes straight to node.
  const current = stampOf(STAMP) === inputs && existsSync(join(DIST, 'embedded.js'));
  // BUILD_SEED=0 (the container image's build): no embedded database seed, which only `pnpm start` uses.
  const seed = process.env.BUILD_SEED === '0' ? Promise.resolve(false as const) : ensureSeed(files);
  const [, vpic, seeded] = await Promise.all([current ? undefined : buildAll(inputs), ensureVpic(), seed]);
  // What `pnpm start` checks first (deploy/current.mjs), without loading TypeScript: these inputs, these outputs.
  const outputs = [join(DIST, 'embedded.js'), vpic, join(PGLITE_SEED, 'PG_VERSION')];
  writeFileSync(CURRENT, JSON.stringify({ inputs, outputs }));
  const seedWas = { made: 'the embedded database seed', copied: 'the embedded database seed (from the build cache)' };
  const what = [current ? '' : 'dist/', seeded ? seedWas[seeded] : ''].filter(Boolean).join(' and ');
  console.log(what ? `built ${what} in ${Math.round(performance.now() - t)} ms` : 'build is current');
}
