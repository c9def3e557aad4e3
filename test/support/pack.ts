import { execFile } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

// Children get a plain environment: pnpm's and vitest's npm_config_* settings would turn `npm install` into a
// workspace install (and VCS_* would point the CLI elsewhere). stdin is closed so nothing can wait on a prompt; every
// child has a time limit.
export const plainEnv = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !/^npm_|^PNPM_|^VITEST|^VCS_/i.test(k)),
);
export const sh = (file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = plainEnv) =>
  run(file, args, { cwd, env, timeout: 120_000, maxBuffer: 16 << 20 });

/**
 * `pnpm pack` of a workspace package into `dest`, as a publisher would run it: no build of ours first, and (unless
 * `keepDist`: another suite may be running from it) no `dist/` left from an earlier one, so its prepack must make it.
 * Resolves to the tarball's path.
 */
export async function packAlone(pkgDir: string, dest: string, opts: { keepDist?: boolean } = {}): Promise<string> {
  if (!opts.keepDist) rmSync(join(pkgDir, 'dist'), { recursive: true, force: true });
  await sh('npx', ['--yes', 'pnpm@10.34.8', 'pack', '--pack-destination', dest], pkgDir);
  return join(
    dest,
    readdirSync(dest).find((f) => f.endsWith('.tgz'))!,
  );
}
