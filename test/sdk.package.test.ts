/**
 * The SDK as a client developer gets it: built, packed with `pnpm pack`, installed from the tarball into an empty
 * project (no workspace, no network), then used from plain `node` (ESM and CommonJS) against a running service,
 * type-checked by TypeScript with `moduleResolution: NodeNext` and no @types/node, and bundled for a browser.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './support/harness.ts';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..');
const sdk = join(root, 'libs', 'sdk');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const VIN = '1HGCM82633A004352';

// Children get a plain environment: pnpm's and vitest's npm_config_* settings would turn `npm install` into a
// workspace install. stdin is closed so nothing can wait on a prompt; every child has a time limit.
const plainEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_|^PNPM_|^VITEST/i.test(k)));
const sh = (file: string, args: string[], cwd: string) =>
  run(file, args, { cwd, env: plainEnv, timeout: 120_000, maxBuffer: 16 << 20 });

let dir = '';
let app = '';
let h: Harness;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vcs-sdk-'));
  app = join(dir, 'app');
  mkdirSync(app);
  await sh(process.execPath, [join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs'), 'scripts/build.ts'], sdk);
  await sh('npx', ['--yes', 'pnpm@10.34.8', 'pack', '--pack-destination', dir], sdk);
  const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'))!;
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  await sh('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', join(dir, tarball)], app);
  h = await startHarness('embedded');
}, 240_000);

afterAll(async () => {
  await h?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the SDK as an installed package', () => {
  it('answers a free capability from plain node, as ESM and as CommonJS', async () => {
    writeFileSync(join(app, 'esm.mjs'), `
      import { createClient, platform, setDefaultClient, signing } from '@vcs/sdk';
      setDefaultClient(createClient({ baseUrl: process.argv[2] }));
      const a = await signing.status({ vin: '${VIN}' });
      // The platform's operations are generated too: mint a key, then ask for an intent that does not exist.
      const minted = await platform.keysMint();
      const intent = await platform.intentsGet({ intentId: 'pi_none' }, { client: createClient({ baseUrl: process.argv[2], key: minted.key }) });
      console.log(JSON.stringify({ type: a.type, answers: a.answers, minted: minted.key.startsWith('vcs_'), intent: intent.type === 'BLOCKED' && intent.value.code }));`);
    writeFileSync(join(app, 'cjs.cjs'), `
      const { createClient, signing } = require('@vcs/sdk');
      signing.status({ vin: '${VIN}' }, { client: createClient({ baseUrl: process.argv[2] }) })
        .then((a) => console.log(JSON.stringify({ type: a.type, answers: a.answers })));`);
    expect(JSON.parse((await sh(process.execPath, ['esm.mjs', h.baseUrl], app)).stdout)).toEqual({ type: 'OK', answers: 'SigningStatus@1', minted: true, intent: 'intent-not-found' });
    expect(JSON.parse((await sh(process.execPath, ['cjs.cjs', h.baseUrl], app)).stdout)).toEqual({ type: 'OK', answers: 'SigningStatus@1' });
  }, 60_000);

  it('type-checks under moduleResolution NodeNext without @types/node, and catches a wrong input', async () => {
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, noEmit: true, types: [], lib: ['ES2022', 'DOM'] },
      files: ['use.ts'],
    }));
    writeFileSync(join(app, 'use.ts'), `
      import { createClient, signing, type Answer } from '@vcs/sdk';
      const client = createClient({ baseUrl: 'http://127.0.0.1:8080' });
      export const a: Promise<Answer<unknown>> = signing.status({ vin: '${VIN}' }, { client });`);
    await sh(process.execPath, [tsc, '-p', 'tsconfig.json'], app);
    // A test that cannot fail proves nothing: the same check must refuse a misspelt input.
    writeFileSync(join(app, 'use.ts'), `
      import { signing } from '@vcs/sdk';
      export const a = signing.status({ vinn: '${VIN}' });`);
    const refused = await sh(process.execPath, [tsc, '-p', 'tsconfig.json'], app).then(() => '', (e: { stdout: string }) => e.stdout);
    expect(refused).toMatch(/vinn/);
  }, 60_000);

  it('bundles for a browser with nothing Node-only in it', async () => {
    writeFileSync(join(app, 'browser.js'), `import { createClient, signing } from '@vcs/sdk'; window.vcs = { createClient, signing };`);
    const out = await build({ entryPoints: [join(app, 'browser.js')], absWorkingDir: app, bundle: true, platform: 'browser', format: 'esm', write: false, logLevel: 'silent' });
    const js = out.outputFiles[0]!.text;
    expect(js).toContain('/signings/status');
    expect(js).not.toMatch(/\bnode:|require\(["'](crypto|fs|path|http)["']\)/);
  }, 60_000);
});
