/**
 * The contract is shared with browser projects (the SDK's types come from it, and a web client may import it): it
 * must type-check with no @types/node and bundle for a browser with nothing Node-only in it.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..');
const src = join(root, 'libs', 'contract', 'src');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const dir = mkdtempSync(join(tmpdir(), 'vcs-contract-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const checkWithoutNode = async (files: string[]) => {
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'ESNext',
        moduleResolution: 'Bundler',
        strict: true,
        noEmit: true,
        allowImportingTsExtensions: true,
        skipLibCheck: true,
        types: [],
        lib: ['ES2022', 'DOM'],
      },
      files,
    }),
  );
  return run(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { timeout: 120_000 }).then(
    () => '',
    (e: { stdout: string }) => e.stdout,
  );
};

describe('the contract without Node', () => {
  it('type-checks with no @types/node, and the same check refuses a Node import', async () => {
    const sources = readdirSync(src, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
      .map((f) => join(src, f));
    expect(await checkWithoutNode(sources)).toBe('');
    // A check that cannot fail proves nothing: a file importing node:crypto is refused under the same settings.
    writeFileSync(
      join(dir, 'node-only.ts'),
      `import { randomBytes } from 'node:crypto';\nexport const x = randomBytes(1);\n`,
    );
    expect(await checkWithoutNode([join(dir, 'node-only.ts')])).toMatch(/node:crypto/);
  }, 120_000);

  it('bundles for a browser with no node: import in it', async () => {
    const out = await build({
      entryPoints: [join(src, 'index.ts')],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      logLevel: 'silent',
    });
    expect(out.outputFiles[0]!.text).not.toMatch(/\bnode:|require\(["'](crypto|fs|path|http)["']\)/);
  }, 60_000);
});
