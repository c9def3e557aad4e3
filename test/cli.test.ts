import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capabilities, capabilityByName } from '@vcs/contract';
import { mintKey, modes, startHarness, type Harness } from './support/harness.ts';
import { sampleInput } from './support/capabilityCalls.ts';
import { runProcess } from './support/run-process.ts';

const VIN = '1HGCM82633A004352';
const ROOT = join(import.meta.dirname, '..');
const BIN = join(ROOT, 'libs', 'cli', 'bin', 'vcs.js');
const BUNDLE = join(ROOT, 'libs', 'cli', 'dist', 'vcs.js');

/** The CLI as `node libs/cli/bin/vcs.js …`, or any other command line given (the README's pnpm form). */
function vcs(
  args: string[],
  env: Record<string, string>,
  command = [process.execPath, BIN],
): Promise<{ code: number; out: string; err: string }> {
  const { VCS_API_KEY: _k, VCS_BASE_URL: _b, ...rest } = process.env;
  return runProcess(command[0]!, [...command.slice(1), ...args], { cwd: ROOT, env: { ...rest, ...env } });
}

// The CLI is an HTTP client: one mode is enough to prove it (each spawn is a Node start-up running the bundle, ~0.3 s).
describe.each(modes().slice(0, 1))('vcs CLI (%s)', (mode) => {
  let h: Harness;
  let env: Record<string, string>;
  beforeAll(async () => {
    h = await startHarness(mode);
    env = { XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'vcs-cli-')), VCS_BASE_URL: h.baseUrl };
  });
  afterAll(async () => {
    await h?.stop();
  });

  it("runs the README's invocation (pnpm -s vcs …) pipeably: stdout is the answer's JSON alone, no pnpm banner", async () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    // The fast form (plain node, no pnpm start-up) is the one the README shows first.
    expect(readme.match(/`((?:node libs\/cli\/bin\/vcs\.js|npx [^`]*-s vcs) [^`]*)`/)?.[1]).toMatch(
      /^node libs\/cli\/bin\/vcs\.js /,
    );
    const documented = readme.match(/`(npx --yes pnpm@[\d.]+ -s vcs signing\.status --vin \w+) \| jq \.value`/)?.[1];
    expect(documented, 'the README documents the piped CLI call').toBeDefined();
    const [npx, ...args] = documented!.split(' ');
    const r = await vcs([], env, [npx!, ...args]);
    expect(r.code).toBe(0);
    // stderr: nothing from pnpm or the CLI (npm itself may warn about this machine's configuration there).
    expect(r.err.split('\n').filter((l) => l && !/^npm warn /i.test(l))).toEqual([]);
    expect(JSON.parse(r.out)).toMatchObject({ type: 'OK', value: { vin: VIN } });
  }, 120_000);

  it('runs as the built bundle (libs/cli/dist), made from the current sources, not TypeScript through tsx', async () => {
    expect(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.vcs).toBe('node libs/cli/bin/vcs.js');
    expect((await vcs(['signing.status', '--vin', VIN], env)).code).toBe(0);
    const newest = (dir: string): number =>
      Math.max(
        0,
        ...readdirSync(dir, { withFileTypes: true }).map((e) =>
          e.isDirectory() ? newest(join(dir, e.name)) : statSync(join(dir, e.name)).mtimeMs,
        ),
      );
    const sources = ['cli/src', 'sdk/src', 'contract/src'].map((d) => newest(join(ROOT, 'libs', d)));
    expect(statSync(BUNDLE).mtimeMs).toBeGreaterThanOrEqual(Math.max(...sources));
    // One self-contained JavaScript file: no TypeScript loader, no workspace package or .ts source left to load.
    const bundle = readFileSync(BUNDLE, 'utf8');
    const loadsTsx = /["']tsx(\/[\w/.-]*)?["']/;
    expect(bundle).not.toMatch(loadsTsx);
    expect(bundle).not.toMatch(/from ["']@vcs\/|import\(["'][^"']*\.ts["']\)/);
    // The x402 client and viem (only paying an OFFER needs them) are not in it: loaded by dynamic import, on a payment.
    expect(bundle).not.toMatch(/from ["'](@x402\/|viem)/);
    expect(bundle.match(/import\(["'](@x402\/[\w/]+|viem[\w/]*)["']\)/g)?.sort()).toEqual([
      'import("@x402/core/client")',
      'import("@x402/evm/exact/client")',
      'import("viem/accounts")',
    ]);
    expect(bundle).not.toMatch(/secp256k1|TransferWithAuthorization/); // viem's curve, @x402/evm's typed data
    expect(readFileSync(BIN, 'utf8')).not.toMatch(loadsTsx);
  });

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

  it('--trigger: one the capability does not list is a usage error naming those it does, and nothing is sent', async () => {
    // A service that is not there: had the call been sent, it would be a transport error (exit 1).
    const nowhere = { ...env, VCS_BASE_URL: 'http://127.0.0.1:1' };
    const refused = await vcs(['signing.quote', '--vin', VIN, '--trigger', 'fail'], nowhere);
    expect(refused.code).toBe(2);
    expect(refused.out).toBe('');
    const honoured = capabilityByName('signing.quote')!.triggers.map((t) => t.name);
    expect(refused.err).toContain(`trigger-not-honoured); it honours ${honoured.join(', ')}`);
    const live = await vcs(
      ['signing.status', '--vin', VIN, '--trigger', 'empty', '--key', `vcs_live_${'a'.repeat(10)}_x`],
      nowhere,
    );
    expect(live.code).toBe(2);
    expect(live.err).toMatch(/does not apply to a live key/);
    // Listed, it is sent and honoured; a --header of the same name is checked the same way.
    expect((await vcs(['signing.status', '--vin', VIN, '--trigger', 'blocked'], env)).code).toBe(5);
    expect((await vcs(['signing.status', '--vin', VIN, '--header', 'Sandbox-Trigger: nope'], nowhere)).code).toBe(2);
  });

  it("--header 'Name: value' (repeatable) goes with the request; a malformed one is a usage error", async () => {
    const empty = await vcs(
      ['signing.status', '--vin', VIN, '--header', 'X-Request-Note: cli', '--header', 'Sandbox-Trigger: empty'],
      env,
    );
    expect(empty.code).toBe(3);
    expect(JSON.parse(empty.out).type).toBe('EMPTY');
    const bad = await vcs(['signing.status', '--vin', VIN, '--header', 'no colon'], env);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--header takes 'Name: value'/);
  });

  it('vcs help names settle, --accept-price and --header; a capability with an offer says how to settle it', async () => {
    const usage = await vcs(['help'], env);
    expect(usage.out).toMatch(/vcs settle <intentId>/);
    expect(usage.out).toMatch(/--accept-price DOLLARS/);
    expect(usage.out).toMatch(/--header 'Name: value' \(repeatable\)/);
    expect((await vcs(['help', 'signing.quote'], env)).out).toMatch(
      /--accept-price <dollars>.*\n.*vcs settle <intentId>/,
    );
  });

  it('--accept-price below the ceiling leaves the OFFER unsettled and says what would settle it', async () => {
    const r = await vcs(['signing.quote', '--vin', VIN, '--accept-price', '0.50'], env);
    expect(r.code).toBe(4);
    expect(JSON.parse(r.out).type).toBe('OFFER');
    expect(r.err).toMatch(
      /not settled: signing\.quote can cost up to 1\.00 USD, more than --accept-price 0\.50; pass --accept-price 1\.00/,
    );
    expect((await vcs(['signing.quote', '--vin', VIN, '--accept-price', 'lots'], env)).code).toBe(2);
    expect((await vcs(['settle', 'not-an-intent'], env)).code).toBe(2);
  });

  // Every offer-gated capability of the catalog, walked to its answer as a user would from the OFFER the CLI prints:
  // with --accept-price on the call, and one in eight with `vcs settle <intentId>` after it (a process more each).
  describe('every offer-gated capability, from its OFFER to its answer', () => {
    let keyed: Record<string, string>;
    beforeAll(async () => {
      keyed = { ...env, VCS_API_KEY: (await mintKey(h.baseUrl)).key };
    });
    const offerGated = capabilities.filter((c) => c.gate === 'offer');
    const flagsOf = (name: string) =>
      Object.entries(sampleInput(capabilityByName(name)!)).flatMap(([k, v]) => [`--${k}`, String(v)]);

    it.concurrent.each(offerGated.map((c, i) => [c.name, i % 8 === 1 ? 'settle' : 'accept-price'] as const))(
      '%s with %s',
      async (name, how) => {
        let final;
        if (how === 'accept-price') {
          final = await vcs([name, ...flagsOf(name), '--accept-price', '1000.00'], keyed);
          expect(final.err).toMatch(
            /^vcs: settled intent pi_[\w-]+ with the key \(POST \/intents\/pi_[\w-]+\/settle\): OK, charged 0\.00$/m,
          );
        } else {
          const offer = await vcs([name, ...flagsOf(name)], keyed);
          expect(offer.code, offer.err).toBe(4);
          const { value } = JSON.parse(offer.out);
          expect(value.settle.path).toBe(`/intents/${value.intent.id}/settle`);
          final = await vcs(['settle', value.intent.id], keyed);
        }
        expect(final.code, final.err).toBe(0);
        const answer = JSON.parse(final.out);
        expect(answer.type).not.toBe('OFFER');
        expect(answer).toMatchObject({ type: 'OK', answers: capabilityByName(name)!.answer });
      },
      120_000,
    );
  });
});
