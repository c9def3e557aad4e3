import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createPayment, startRail, type Rail } from '@vcs/x402-rail';
import { call } from './support/harness.ts';
import { type MoneyHarness, railSettings, startMoneyHarness } from './support/money.ts';
import { runProcess } from './support/run-process.ts';

// The clients against the x402 rail (a local chain, the test token, a facilitator over HTTP): the CLI pays an OFFER
// with a wallet key from its environment; MCP `exec` never pays. One mode: both are HTTP clients of the gateway.
const VIN = '1HGCM82633A004352';
const PRICE = 1_000_000n; // signing.quote: 1.00 USD flat, in the token's 6 decimals
const BIN = join(import.meta.dirname, '..', 'libs', 'cli', 'bin', 'vcs.js');

function vcs(args: string[], env: Record<string, string>): Promise<{ code: number; out: string; err: string }> {
  const { VCS_API_KEY: _k, VCS_BASE_URL: _b, X402_PAYER_KEY: _p, X402_MAX_PAYMENT: _m, ...rest } = process.env;
  return runProcess(process.execPath, [BIN, ...args], { env: { ...rest, ...env } });
}

describe('clients paying x402 offers (embedded, on a local chain)', () => {
  let rail: Rail;
  let m: MoneyHarness;
  let env: Record<string, string>;
  beforeAll(async () => {
    rail = await startRail({ payers: 4 });
    m = await startMoneyHarness('embedded', railSettings(rail));
    env = { VCS_BASE_URL: m.h.baseUrl, XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'vcs-cli-x402-')) };
  }, 120_000);
  afterAll(async () => {
    await m?.stop();
    await rail?.stop();
  });

  it('the CLI with X402_PAYER_KEY pays the OFFER from the wallet: the paid answer on stdout, what was paid on stderr, the price moved', async () => {
    const before = await rail.balanceOf(rail.payTo);
    const r = await vcs(['signing.quote', '--vin', VIN], { ...env, X402_PAYER_KEY: rail.payerKeys[0]! });
    expect(r.code, r.err).toBe(0);
    const a = JSON.parse(r.out);
    expect(a).toMatchObject({
      type: 'OK',
      answers: 'SigningQuote@1',
      meter: {
        charged: '1.00',
        payment: { network: rail.network, payer: rail.payerAddresses[0], payTo: rail.payTo, amount: '1.00' },
      },
    });
    expect(a.meter.payment.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(r.err).toContain(
      `vcs: paid $1.00 from ${rail.payerAddresses[0]} to ${rail.payTo} on ${rail.network}, transaction ${a.meter.payment.transaction}`,
    );
    expect((await rail.balanceOf(rail.payTo)) - before).toBe(PRICE);
    // A wallet pays without a key: none was minted (an anonymous agent with a wallet, in two requests).
    expect(existsSync(join(env.XDG_CONFIG_HOME!, 'vcs', 'config.json'))).toBe(false);
  }, 60_000);

  it('the CLI refuses to pay more than X402_MAX_PAYMENT unless --max says so; without a wallet it prints the OFFER as before', async () => {
    const before = await rail.balanceOf(rail.payTo);
    const capped = { ...env, X402_PAYER_KEY: rail.payerKeys[1]!, X402_MAX_PAYMENT: '0.50' };
    const refused = await vcs(['signing.quote', '--vin', VIN], capped);
    expect(refused.code, refused.err).toBe(4);
    expect(JSON.parse(refused.out)).toMatchObject({ type: 'OFFER', value: { price: { amount: '1.00' } } });
    expect(refused.err).toMatch(
      /not paid: it asks \$1\.00, more than the most vcs pays at once \(\$0\.50.*pass --max 1\.00/,
    );
    expect(await rail.balanceOf(rail.payTo)).toBe(before);

    const allowed = await vcs(['signing.quote', '--vin', VIN, '--max', '1.00'], capped);
    expect(allowed.code, allowed.err).toBe(0);
    expect(JSON.parse(allowed.out)).toMatchObject({
      type: 'OK',
      meter: { payment: { payer: rail.payerAddresses[1], amount: '1.00' } },
    });
    expect((await rail.balanceOf(rail.payTo)) - before).toBe(PRICE);

    const unpaid = await vcs(['signing.quote', '--vin', VIN], env);
    expect(unpaid.code).toBe(4);
    expect(JSON.parse(unpaid.out)).toMatchObject({ type: 'OFFER' });
    const noWallet = await vcs(['signing.quote', '--vin', VIN, '--pay'], env);
    expect(noWallet.code).toBe(2);
    expect(noWallet.out).toBe('');
    expect(noWallet.err).toMatch(/--pay needs a wallet: set X402_PAYER_KEY/);
    expect((await rail.balanceOf(rail.payTo)) - before).toBe(PRICE);
  }, 60_000);

  it('MCP exec never pays: settle takes no payer there, a payment header never reaches the service, the OFFER stays an OFFER', async () => {
    const client = new Client({ name: 'x402-exec-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${m.h.baseUrl}/mcp`)));
    try {
      // A real payment, signed outside for an offer made outside, handed to the code as a literal.
      const offer = await call(m.h.baseUrl, 'POST', '/signings/quote', { body: { vin: VIN } });
      const required = offer.json.value.x402;
      const payment = await createPayment(rail.payerKeys[2]!, required.accepts[0], required.resource);
      const header = Buffer.from(JSON.stringify(payment)).toString('base64');
      const before = await rail.balanceOf(rail.payTo);
      const r = (await client.callTool({
        name: 'exec',
        arguments: {
          code: `
        const offer = await signing.quote({ vin: '${VIN}' });
        let payer;
        try { await settle(offer, { payer: { createPaymentPayload: async () => (${JSON.stringify(payment)}) } }); } catch (e) { payer = String(e.message); }
        const viaSdk = await sdk.settle(offer, { payer: { createPaymentPayload: async () => ({}) } }).then(() => 'paid', (e) => String(e.message));
        const direct = await callCapability('POST', '${offer.json.value.settle.path}', {}, { headers: { 'payment-signature': '${header}', 'x-payment': '${header}' } });
        const gate = await signing.quote({ vin: '${VIN}' }, { headers: { 'payment-signature': '${header}' } });
        return { offer: offer.type, payer, viaSdk, direct: direct.type, directCode: direct.value.code, gate: gate.type };`,
        },
      })) as { content: { text: string }[]; isError?: boolean };
      expect(r.isError, r.content[0]!.text).toBeFalsy();
      const out = JSON.parse(r.content[0]!.text).result;
      expect(out).toMatchObject({
        offer: 'OFFER',
        gate: 'OFFER',
        payer: expect.stringMatching(/^exec never pays/),
        viaSdk: expect.stringMatching(/^exec never pays/),
      });
      // Without the header the intent's settle route is the key route, and exec here has no key: nothing settles.
      expect(out.direct).not.toBe('OK');
      expect(await rail.balanceOf(rail.payTo)).toBe(before);
      expect((await call(m.h.baseUrl, 'GET', `/intents/${offer.json.value.intent.id}`)).json.value).toMatchObject({
        status: 'pending',
        executions: 0,
      });
    } finally {
      await client.close();
    }
  }, 60_000);
});
