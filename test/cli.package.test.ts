/**
 * The CLI as a developer outside this checkout gets it: `pnpm pack` alone (its prepack bundles dist/vcs.js), then
 * `npm i -g` of the tarball into an empty prefix, and the `vcs` bin run with plain node from another directory against
 * a running service. Its dependencies (the x402 client and viem, loaded only to pay an OFFER) come from npm's cache,
 * else the registry, as for anyone installing it.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG_DIGEST } from '@vcs/sdk';
import { KEYS } from '@vcs/x402-rail';
import { startHarness, type Harness } from './support/harness.ts';
import { packAlone, plainEnv, sh } from './support/pack.ts';

const cli = join(import.meta.dirname, '..', 'libs', 'cli');
const VIN = '1HGCM82633A004352';

let dir = '';
let prefix = '';
let h: Harness;
let packStarted = 0;
let bundledAt = 0;
const vcs = (args: string[], env: Record<string, string> = {}) =>
  sh(join(prefix, 'bin', 'vcs'), args, dir, { ...plainEnv, XDG_CONFIG_HOME: join(dir, 'config'), ...env });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vcs-cli-pkg-'));
  prefix = join(dir, 'global');
  // The service starts while the package is packed and installed (neither waits on the other).
  const service = startHarness('embedded');
  service.catch(() => undefined); // awaited below; a failed start is reported there, not as an unhandled rejection
  try {
    // cli.test.ts may be running the checkout's bundle meanwhile, so it stays; prepack must write it anew.
    const started = Date.now();
    const tarball = await packAlone(cli, dir, { keepDist: true });
    bundledAt = statSync(join(cli, 'dist', 'vcs.js')).mtimeMs;
    packStarted = started;
    await sh(
      'npm',
      ['install', '--global', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', tarball],
      dir,
    );
  } finally {
    h = await service;
  }
}, 240_000);

afterAll(async () => {
  await h?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the CLI as an installed package', () => {
  it('installs as one bundled file, with only the x402 client and viem as dependencies, stamped with the catalog digest', () => {
    const pkg = JSON.parse(readFileSync(join(prefix, 'lib', 'node_modules', '@vcs', 'cli', 'package.json'), 'utf8'));
    expect(pkg.private).toBeUndefined();
    expect(pkg).toMatchObject({
      name: '@vcs/cli',
      license: 'MIT',
      bin: { vcs: './bin/vcs.js' },
      catalogDigest: CATALOG_DIGEST,
    });
    expect(pkg.dependencies).toEqual({ '@x402/core': '2.27.0', '@x402/evm': '2.27.0', viem: '2.57.20' });
    expect(bundledAt, 'prepack bundled dist/vcs.js').toBeGreaterThanOrEqual(packStarted - 1000);
    expect(readdirSync(join(prefix, 'lib', 'node_modules', '@vcs', 'cli')).sort()).toEqual([
      'LICENSE',
      'README.md',
      'bin',
      'dist',
      'node_modules',
      'package.json',
    ]);
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
    const refused = await vcs(['signing.status', '--vinn', VIN]).then(
      () => 0,
      (e: { code: number }) => e.code,
    );
    expect(refused).toBe(2);
  }, 60_000);

  it('loads the x402 client from its own dependencies to pay an OFFER with X402_PAYER_KEY (this service takes no x402: refused, unpaid)', async () => {
    const r = await vcs(['signing.quote', '--vin', VIN, '--base-url', h.baseUrl], { X402_PAYER_KEY: KEYS.payer }).then(
      () => {
        throw new Error('expected exit 5');
      },
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    expect(r.code).toBe(5);
    expect(JSON.parse(r.stdout)).toMatchObject({ type: 'BLOCKED', value: { code: 'payments-not-accepted' } });
    // The wallet's address: viem derived it, and the stock client signed (the service refused the payment unread).
    expect(r.stderr).toMatch(
      /not paid \(intent pi_[\w-]+, wallet 0x70997970C51812dc3A010C7d01b50e0d17dc79C8\): payments-not-accepted/,
    );
  }, 60_000);
});
