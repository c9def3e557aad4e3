import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildCacheDir, restoreFromCache, saveToCache } from '../deploy/build-cache.ts';

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
