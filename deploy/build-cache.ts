/**
 * The build's machine-wide cache: the two outputs of `pnpm build` that take seconds and depend only on packages and
 * migrations, not on this checkout (the slim vPIC file, ~5 s; the prepared embedded database, ~4 s and ~700 MB),
 * kept under a name that says what they were made from, so a second clone on the same machine copies them instead of
 * making them again (as pnpm's store does for packages).
 *
 * BUILD_CACHE_DIR: where (default `$XDG_CACHE_HOME/vehicle-capability-service`, else `~/.cache/…`); empty: no cache.
 * Everything here is best-effort: a cache that cannot be read or written is a build that makes its outputs itself.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export function buildCacheDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.BUILD_CACHE_DIR !== undefined) return env.BUILD_CACHE_DIR || undefined;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'vehicle-capability-service');
}

/** Copy `from` (a file or a directory) to `to`: beside it first, then renamed, so no reader sees half a copy. */
function copyWhole(from: string, to: string) {
  const tmp = `${to}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
  try {
    cpSync(from, tmp, { recursive: true });
    rmSync(to, { recursive: true, force: true });
    renameSync(tmp, to);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Put the cached `name` at `dest`; false when the cache has none (or cannot be read, or `dir` is none). */
export function restoreFromCache(dir: string | undefined, name: string, dest: string): boolean {
  if (!dir || !existsSync(join(dir, name))) return false;
  try {
    copyWhole(join(dir, name), dest);
    return true;
  } catch {
    return false;
  }
}

/**
 * Keep a copy of `src` in the cache as `name` (left as it is when another build already put it there), and drop the
 * entries of the same kind (`kind`: the start of their names) made from other inputs: the cache holds one of each.
 */
export function saveToCache(dir: string | undefined, src: string, name: string, kind: string) {
  if (!dir || existsSync(join(dir, name))) return;
  try {
    mkdirSync(dir, { recursive: true });
    copyWhole(src, join(dir, name));
    for (const other of readdirSync(dir))
      if (other.startsWith(kind) && other !== name && !other.includes('.tmp-'))
        rmSync(join(dir, other), { recursive: true, force: true });
  } catch {
    /* a read-only or full disk: the next build makes its outputs itself */
  }
}
