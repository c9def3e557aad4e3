import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildCacheDir, restoreFromCache, saveToCache } from '../deploy/build-cache.ts';
import { hashOf, inputFiles, root } from '../deploy/current.mjs';
import { removeStaleSlims } from '../libs/vin/src/vpic.ts';

/** The build's machine-wide cache (deploy/build-cache.ts) on real directories. */
describe('the build cache', () => {
  const fresh = () => mkdtempSync(join(tmpdir(), 'vcs-build-cache-'));

  it('gives back a directory it kept, whole, and keeps one entry of each kind', () => {
    const cache = join(fresh(), 'cache'); // made when first written
    const work = fresh();
    const seed = join(work, 'seed');
    mkdirSync(join(seed, 'base'), { recursive: true });
    writeFileSync(join(seed, 'PG_VERSION'), '17\n');
    writeFileSync(join(seed, 'base', 'page'), Buffer.alloc(8192, 7));

    expect(restoreFromCache(cache, 'pglite-seed-a', join(work, 'restored'))).toBe(false);
    saveToCache(cache, seed, 'pglite-seed-a', 'pglite-seed-');
    saveToCache(cache, join(seed, 'PG_VERSION'), 'vpic-1-slim1.sqlite', 'vpic-');
    expect(restoreFromCache(cache, 'pglite-seed-a', join(work, 'restored'))).toBe(true);
    expect(readFileSync(join(work, 'restored', 'base', 'page'))).toEqual(Buffer.alloc(8192, 7));
    expect(readFileSync(join(work, 'restored', 'PG_VERSION'), 'utf8')).toBe('17\n');

    // The same kind made from other inputs replaces it; another kind stays.
    saveToCache(cache, seed, 'pglite-seed-b', 'pglite-seed-');
    expect(readdirSync(cache).sort()).toEqual(['pglite-seed-b', 'vpic-1-slim1.sqlite']);
  });

  it("removes other builds' slim vPIC files beside this one, not the copies of this one being written", () => {
    const dir = fresh();
    const names = [
      'vpic-2.0.1-slim3.sqlite', // this build's
      'vpic-2.0.1-slim3.sqlite.tmp-41-ab', // this build's, being written by another process that started at once
      'vpic-2.0.1-slim2.sqlite', // an older slim number
      'vpic-2.0.0-slim3.sqlite.tmp', // half-written by an older build
      'other.sqlite',
    ];
    for (const n of names) writeFileSync(join(dir, n), 'x');
    expect(removeStaleSlims(join(dir, names[0]!)).sort()).toEqual([names[3], names[2]]);
    expect(readdirSync(dir).sort()).toEqual([names[4], names[0], names[1]]);
  });

  it('lives under XDG_CACHE_HOME or ~/.cache; BUILD_CACHE_DIR moves it, and empty turns it off', () => {
    expect(buildCacheDir({ XDG_CACHE_HOME: '/x' })).toBe('/x/vehicle-capability-service');
    expect(buildCacheDir({ BUILD_CACHE_DIR: '/y' })).toBe('/y');
    expect(buildCacheDir({ BUILD_CACHE_DIR: '' })).toBeUndefined();
    const work = fresh();
    writeFileSync(join(work, 'f'), 'x');
    saveToCache(undefined, join(work, 'f'), 'vpic-x', 'vpic-'); // no cache: nothing written, nothing thrown
    expect(restoreFromCache(undefined, 'vpic-x', join(work, 'g'))).toBe(false);
  });
});

/** What `cd libs/sdk && pnpm pack` (the README's command) leaves behind is no input of the build, and git ignores it. */
describe('a packed tarball', () => {
  it('lands in its package folder, outside the inputs the build hashes, and is ignored by git', () => {
    const version = JSON.parse(readFileSync(join(root, 'libs/sdk/package.json'), 'utf8')).version;
    const tarball = join(root, 'libs/sdk', `vcs-sdk-${version}.tgz`); // the name pnpm pack gives it
    const had = existsSync(tarball);
    const before = hashOf(inputFiles());
    try {
      if (!had) writeFileSync(tarball, 'a tarball');
      expect(inputFiles().filter((f) => f.endsWith('.tgz'))).toEqual([]);
      expect(hashOf(inputFiles())).toBe(before);
      expect(spawnSync('git', ['check-ignore', '-q', tarball], { cwd: root }).status).toBe(0); // 0: ignored
    } finally {
      if (!had) rmSync(tarball, { force: true });
    }
  });
});
