import { spawn } from 'node:child_process';
import { mkdtempSync, statSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modes, startHarness, type Harness } from './support/harness.ts';

const VIN = '1HGCM82633A004352';
const BIN = join(import.meta.dirname, '..', 'libs', 'cli', 'bin', 'vcs.js');

function vcs(args: string[], env: Record<string, string>): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    const { VCS_API_KEY: _k, VCS_BASE_URL: _b, ...rest } = process.env;
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...rest, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => resolve({ code: code ?? -1, out, err }));
  });
}

// The CLI is an HTTP client: one mode is enough to prove it, and each spawn costs a TypeScript start-up.
describe.each(modes().slice(0, 1))('vcs CLI (%s)', (mode) => {
  let h: Harness;
  let env: Record<string, string>;
  beforeAll(async () => {
    h = await startHarness(mode);
    env = { XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'vcs-cli-')), VCS_BASE_URL: h.baseUrl };
  });
  afterAll(async () => { await h?.stop(); });

  it('lists the catalog and prints help from it', async () => {
    const list = await vcs(['catalog'], env);
    expect(list.code).toBe(0);
    expect(list.out).toMatch(/signing\.status\s+GET\s+\/signings\/status/);
    const help = await vcs(['help', 'signing.status'], env);
    expect(help.out).toMatch(/--vin <string>/);
    expect((await vcs(['nope.verb'], env)).code).toBe(2);
  });

  it('calls anonymously, prints JSON when piped, exits by answer kind', async () => {
    const ok = await vcs(['signing.status', '--vin', VIN], env);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.out)).toMatchObject({ type: 'OK', value: { vin: VIN } });
    expect(ok.err).toBe('');
    expect((await vcs(['signing.status', '--vin', VIN, '--trigger', 'empty'], env)).code).toBe(3);
    expect((await vcs(['signing.status', '--vin', 'BAD'], env)).code).toBe(5);
    expect((await vcs(['signing.status', '--base-url', 'http://127.0.0.1:1'], env)).code).toBe(1);
  });

  it('refuses a misspelt flag or a flag without a value as a usage error naming the flags, sending nothing', async () => {
    const typo = await vcs(['signing.status', '--vinn', VIN], env);
    expect(typo.code).toBe(2);
    expect(typo.out).toBe('');
    expect(typo.err).toMatch(/no flag --vinn; its flags: --vin /);
    const bare = await vcs(['signing.status', '--vin'], env);
    expect(bare.code).toBe(2);
    expect(bare.err).toMatch(/--vin needs a value/);
    expect((await vcs(['signing.status', `--vin=${VIN}`, '--json'], env)).code).toBe(0);
  });

  it('mints a key on the first keyed call, stores it 0600, and reuses it', async () => {
    const first = await vcs(['deal.open', '--workflow', 'buy', '--vin', VIN], env);
    expect(first.code).toBe(0);
    expect(first.err).toMatch(/minted a sandbox key .* stored it in .*config\.json/);
    const file = join(env.XDG_CONFIG_HOME, 'vcs', 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8')).key).toMatch(/\w/);
    const second = await vcs(['deal.open', '--workflow', 'buy', '--vin', VIN], env);
    expect(second.code).toBe(0);
    expect(second.err).toBe('');
  });
});
