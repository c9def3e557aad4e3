/**
 * The CLI as a developer outside this checkout gets it: `pnpm pack` alone (its prepack bundles dist/vcs.js), then
 * `npm i -g` of the tarball into an empty prefix (no network), and the `vcs` bin run with plain node from another
 * directory against a running service.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG_DIGEST } from '@vcs/sdk';
import { startHarness, type Harness } from './support/harness.ts';
import { packAlone, plainEnv, sh } from './support/pack.ts';

const cli = join(import.meta.dirname, '..', 'libs', 'cli');
const VIN = '1HGCM82633A004352';

let dir = '';
let prefix = '';
let h: Harness;
let packStarted = 0;
let bundledAt = 0;
const vcs = (args: string[]) => sh(join(prefix, 'bin', 'vcs'), args, dir, { ...plainEnv, XDG_CONFIG_HOME: join(dir, 'config') });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vcs-cli-pkg-'));
  prefix = join(dir, 'global');
  // cli.test.ts may be running the checkout's bundle meanwhile, so it stays; prepack must write it anew.
  const started = Date.now();
  const tarball = await packAlone(cli, dir, { keepDist: true });
  bundledAt = statSync(join(cli, 'dist', 'vcs.js')).mtimeMs;
  packStarted = started;
  await sh('npm', ['install', '--global', '--prefix', prefix, '--offline', '--no-audit', '--no-fund', tarball], dir);
  h = await startHarness('embedded');
}, 240_000);

afterAll(async () => {
  await h?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the CLI as an installed package', () => {
  it('installs as one bundled file with no dependencies, stamped with the catalog digest', () => {
    const pkg = JSON.parse(readFileSync(join(prefix, 'lib', 'node_modules', '@vcs', 'cli', 'package.json'), 'utf8'));
    expect(pkg.private).toBeUndefined();
    expect(pkg).toMatchObject({ name: '@vcs/cli', license: 'MIT', bin: { vcs: './bin/vcs.js' }, catalogDigest: CATALOG_DIGEST });
    expect(pkg.dependencies ?? {}).toEqual({});
    expect(bundledAt, 'prepack bundled dist/vcs.js').toBeGreaterThanOrEqual(packStarted - 1000);
    expect(readdirSync(join(prefix, 'lib', 'node_modules', '@vcs', 'cli')).sort()).toEqual(['LICENSE', 'README.md', 'bin', 'dist', 'package.json']);
  });

  it('runs `vcs` from the global bin with plain node, outside the checkout', async () => {
    expect((await vcs(['catalog'])).stdout).toMatch(/signing\.status\s+GET\s+\/signings\/status/);
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      const r = await vcs(['signing.status', '--vin', VIN, '--base-url', h.baseUrl]);
      times.push(performance.now() - t);
      expect(JSON.parse(r.stdout)).toMatchObject({ type: 'OK', value: { vin: VIN } });
    }
    const median = [...times].sort((a, b) => a - b)[2]!;
    console.log(`installed vcs: a call took ${Math.round(median)} ms (median of 5, Node start-up included)`);
    const refused = await vcs(['signing.status', '--vinn', VIN]).then(() => 0, (e: { code: number }) => e.code);
    expect(refused).toBe(2);
  }, 60_000);
});
