/**
 * The SDK as a client developer gets it: packed with `pnpm pack` alone (its prepack builds dist/; no build step of
 * ours runs first, and no dist/ is left from an earlier build), installed from the tarball into an empty project (no
 * workspace, no network), then used from plain `node` (ESM and CommonJS) against a running service, type-checked by
 * TypeScript with `moduleResolution: NodeNext` and no @types/node (its README's example too), and bundled for a browser.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG_DIGEST } from '@vcs/sdk';
import { startHarness, type Harness } from './support/harness.ts';
import { packAlone, sh } from './support/pack.ts';

const root = join(import.meta.dirname, '..');
const sdk = join(root, 'libs', 'sdk');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const VIN = '1HGCM82633A004352';

let dir = '';
let app = '';
let h: Harness;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vcs-sdk-'));
  app = join(dir, 'app');
  mkdirSync(app);
  // The service starts while the package is packed and installed (neither waits on the other).
  const service = startHarness('embedded');
  service.catch(() => undefined); // awaited below; a failed start is reported there, not as an unhandled rejection
  try {
    const tarball = await packAlone(sdk, dir);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    await sh('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball], app);
  } finally {
    h = await service;
  }
}, 240_000);

afterAll(async () => {
  await h?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the SDK as an installed package', () => {
  it('is publishable: not private, licensed, versioned with the catalog digest it was generated from, with its README', () => {
    const installed = join(app, 'node_modules', '@vcs', 'sdk');
    const pkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
    expect(pkg.private).toBeUndefined();
    expect(pkg).toMatchObject({ name: '@vcs/sdk', license: 'MIT', catalogDigest: CATALOG_DIGEST });
    expect(pkg.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(pkg.dependencies ?? {}).toEqual({});
    expect(readFileSync(join(installed, 'README.md'), 'utf8')).toMatch(/Answer<T>/);
  });

  it('answers a free capability from plain node, as ESM and as CommonJS', async () => {
    writeFileSync(
      join(app, 'esm.mjs'),
      `
      import { createClient, platform, setDefaultClient, signing } from '@vcs/sdk';
      setDefaultClient(createClient({ baseUrl: process.argv[2] }));
      const a = await signing.status({ vin: '${VIN}' });
      // The platform's operations are generated too: mint a key, then ask for an intent that does not exist.
      const minted = await platform.keysMint();
      const intent = await platform.intentsGet({ intentId: 'pi_none' }, { client: createClient({ baseUrl: process.argv[2], key: minted.key }) });
      console.log(JSON.stringify({ type: a.type, answers: a.answers, minted: minted.key.startsWith('vcs_'), intent: intent.type === 'BLOCKED' && intent.value.code }));`,
    );
    writeFileSync(
      join(app, 'cjs.cjs'),
      `
      const { createClient, signing } = require('@vcs/sdk');
      signing.status({ vin: '${VIN}' }, { client: createClient({ baseUrl: process.argv[2] }) })
        .then((a) => console.log(JSON.stringify({ type: a.type, answers: a.answers })));`,
    );
    expect(JSON.parse((await sh(process.execPath, ['esm.mjs', h.baseUrl], app)).stdout)).toEqual({
      type: 'OK',
      answers: 'SigningStatus@1',
      minted: true,
      intent: 'intent-not-found',
    });
    expect(JSON.parse((await sh(process.execPath, ['cjs.cjs', h.baseUrl], app)).stdout)).toEqual({
      type: 'OK',
      answers: 'SigningStatus@1',
    });
  }, 60_000);

  it('type-checks under moduleResolution NodeNext without @types/node, and catches a wrong input', async () => {
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2022',
          strict: true,
          noEmit: true,
          types: [],
          lib: ['ES2022', 'DOM'],
        },
        files: ['use.ts'],
      }),
    );
    writeFileSync(
      join(app, 'use.ts'),
      `
      import { createClient, signing, type Answer } from '@vcs/sdk';
      const client = createClient({ baseUrl: 'http://127.0.0.1:8080' });
      export const a: Promise<Answer<unknown>> = signing.status({ vin: '${VIN}' }, { client });`,
    );
    await sh(process.execPath, [tsc, '-p', 'tsconfig.json'], app);
    // A test that cannot fail proves nothing: the same check must refuse a misspelt input.
    writeFileSync(
      join(app, 'use.ts'),
      `
      import { signing } from '@vcs/sdk';
      export const a = signing.status({ vinn: '${VIN}' });`,
    );
    const refused = await sh(process.execPath, [tsc, '-p', 'tsconfig.json'], app).then(
      () => '',
      (e: { stdout: string }) => e.stdout,
    );
    expect(refused).toMatch(/vinn/);
    // The README's narrowing example, as the installed package ships it, compiles as it stands.
    const example = /```ts\n([\s\S]*?)```/.exec(
      readFileSync(join(app, 'node_modules', '@vcs', 'sdk', 'README.md'), 'utf8'),
    )?.[1];
    expect(example).toMatch(/switch \(a\.type\)/);
    // It takes the service's address rather than naming one, and the README installs what this suite installs.
    expect(example).not.toMatch(/127\.0\.0\.1|localhost|:8080/);
    const readme = readFileSync(join(sdk, 'README.md'), 'utf8');
    expect(readme).toContain('pnpm@10.34.8 -C libs/sdk pack --pack-destination');
    expect(readme).not.toMatch(/^npm install @vcs\/sdk/m);
    writeFileSync(join(app, 'use.ts'), example!);
    await sh(process.execPath, [tsc, '-p', 'tsconfig.json'], app).catch((e: { stdout: string }) => {
      throw new Error(`README example: ${e.stdout}`);
    });
  }, 60_000);

  it('bundles for a browser with nothing Node-only in it', async () => {
    writeFileSync(
      join(app, 'browser.js'),
      `import { createClient, signing } from '@vcs/sdk'; window.vcs = { createClient, signing };`,
    );
    const out = await build({
      entryPoints: [join(app, 'browser.js')],
      absWorkingDir: app,
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      logLevel: 'silent',
    });
    const js = out.outputFiles[0]!.text;
    expect(js).toContain('/signings/status');
    expect(js).not.toMatch(/\bnode:|require\(["'](crypto|fs|path|http)["']\)/);
  }, 60_000);
});
