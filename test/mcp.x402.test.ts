import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { PaymentRequiredV2Schema } from '@x402/core/schemas';
import { createPayment, type Rail } from '@vcs/x402-rail';
import { call, mintKey, modes } from './support/harness.ts';
import { countEvents, type MoneyHarness, startPaidService, stopPaidService } from './support/money.ts';

// x402 inside MCP (the x402 MCP transport's tool-result binding) with the official MCP client, against the service
// on the local x402 rail: exec's OFFER is x402's payment-required result; the same call with a PaymentPayload in
// `_meta["x402/payment"]` pays it; the receipt comes back in `_meta["x402/payment-response"]`.
const VIN = '1HGCM82633A004352';
const PRICE = 1_000_000n; // signing.quote: 1.00 USD flat, in the token's 6 decimals
const QUOTE = `return await signing.quote({ vin: '${VIN}' });`;
const unb64 = (s: string) => JSON.parse(Buffer.from(s, 'base64').toString('utf8'));

type ToolResult = {
  isError?: boolean;
  content: { type: string; text: string }[];
  structuredContent?: Record<string, any>;
  _meta?: Record<string, any>;
};

async function connect(baseUrl: string, key?: string) {
  const client = new Client({ name: 'mcp-x402-test', version: '1.0.0' });
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers } }));
  return client;
}

describe.each(modes())('x402 inside MCP (%s)', (mode) => {
  let rail: Rail;
  let m: MoneyHarness;
  let base: string;
  beforeAll(async () => {
    ({ rail, m, base } = await startPaidService(mode, 6));
  }, 120_000);
  afterAll(() => stopPaidService({ rail, m }));

  const exec = (client: Client, code: string, payment?: unknown) =>
    client.callTool({
      name: 'exec',
      arguments: { code },
      ...(payment === undefined ? {} : { _meta: { 'x402/payment': payment } }),
    }) as Promise<ToolResult>;

  /** exec's payment-required result for signing.quote, checked against x402's own schema. */
  async function required(client: Client) {
    const r = await exec(client, QUOTE);
    expect(r.isError, r.content[0]!.text).toBe(true);
    const v2 = PaymentRequiredV2Schema.safeParse(r.structuredContent);
    expect(v2.success, JSON.stringify(v2.error?.issues)).toBe(true);
    expect(JSON.parse(r.content[0]!.text)).toEqual(r.structuredContent);
    return r.structuredContent as { accepts: any[]; resource: any; error?: string };
  }

  it('search shows the price before any call; exec declares no outputSchema (an error result must not fail a client)', async () => {
    const client = await connect(base);
    try {
      const found = (await client.callTool({ name: 'search', arguments: { query: 'signing quote' } })) as ToolResult;
      const quote = JSON.parse(found.content[0]!.text).results.find((x: any) => x.id === 'signing.quote');
      expect(quote.text).toMatch(/1\.00 USD/);
      const { tools } = await client.listTools();
      const execTool = tools.find((t) => t.name === 'exec')!;
      expect(execTool.outputSchema).toBeUndefined();
      expect(execTool.description).toContain('x402/payment');
    } finally {
      await client.close();
    }
  });

  it('an OFFER is payment-required; the same call with the payment in _meta pays it once: the answer, the receipt, the price moved; again moves nothing', async () => {
    const { key, account } = await mintKey(base);
    const client = await connect(base, key);
    try {
      const offer = await required(client);
      expect(offer.accepts[0]).toMatchObject({
        scheme: 'exact',
        network: rail.network,
        payTo: rail.payTo,
        amount: String(PRICE),
      });
      expect(await countEvents(m.db, 'Signing.quoted@1', account)).toBe(0);
      const payment = await createPayment(rail.payerKeys[0]!, offer.accepts[0], offer.resource);
      const before = await rail.balanceOf(rail.payTo);
      const paid = await exec(client, QUOTE, payment);
      expect(paid.isError, paid.content[0]!.text).toBeFalsy();
      const answer = JSON.parse(paid.content[0]!.text).result;
      expect(answer).toMatchObject({
        type: 'OK',
        answers: 'SigningQuote@1',
        meter: { charged: '1.00', payment: { payer: rail.payerAddresses[0], amount: '1.00' } },
      });
      const receipt = paid._meta?.['x402/payment-response'];
      expect(receipt).toMatchObject({ success: true, network: rail.network, payer: rail.payerAddresses[0] });
      expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      expect(receipt.transaction).toBe(answer.meter.payment.transaction);
      expect((await rail.balanceOf(rail.payTo)) - before).toBe(PRICE);
      expect(await countEvents(m.db, 'Signing.quoted@1', account)).toBe(1);

      // The same call again (a client that lost the answer): the same answer and receipt, no second transfer.
      const again = await exec(client, QUOTE, payment);
      expect(again.isError, again.content[0]!.text).toBeFalsy();
      expect(JSON.parse(again.content[0]!.text).result.value).toEqual(answer.value);
      expect(again._meta?.['x402/payment-response']).toMatchObject({ transaction: receipt.transaction });
      expect((await rail.balanceOf(rail.payTo)) - before).toBe(PRICE);
      expect(await countEvents(m.db, 'Signing.quoted@1', account)).toBe(1);
    } finally {
      await client.close();
    }
  }, 60_000);

  it('a wrong payment (short of the price) is payment-required again with x402 reason; nothing ran, no money moved', async () => {
    const { key, account } = await mintKey(base);
    const client = await connect(base, key);
    try {
      const offer = await required(client);
      const intentId = offer.accepts[0].extra.intentId as string;
      const short = await createPayment(
        rail.payerKeys[1]!,
        { ...offer.accepts[0], amount: String(PRICE - 1n) },
        offer.resource,
      );
      const before = await rail.balanceOf(rail.payTo);
      const r = await exec(client, QUOTE, short);
      expect(r.isError).toBe(true);
      const again = PaymentRequiredV2Schema.safeParse(r.structuredContent);
      expect(again.success, JSON.stringify(r.content)).toBe(true);
      expect(r.structuredContent!.error).toBeTruthy();
      expect(r.structuredContent!.error).not.toBe(offer.error);
      expect(r.content[1]!.text).toMatch(/payment-wrong-amount/);
      expect(r._meta?.['x402/payment-response']).toBeUndefined();
      expect(await rail.balanceOf(rail.payTo)).toBe(before);
      expect(await countEvents(m.db, 'Signing.quoted@1', account)).toBe(0);
      expect((await call(base, 'GET', `/intents/${intentId}`, { key })).json.value).toMatchObject({
        status: 'pending',
        executions: 0,
      });
      // Not a payment at all: an error, and nothing is sent anywhere.
      const junk = await exec(client, QUOTE, { hello: 'world' });
      expect(junk.isError).toBe(true);
      expect(junk.structuredContent).toBeUndefined();
      expect(junk.content[0]!.text).toMatch(/x402\/payment/);
    } finally {
      await client.close();
    }
  }, 60_000);

  it('with the facilitator down: an error that says to send the same call again (not payment-required); then it pays once', async () => {
    const client = await connect(base);
    try {
      const offer = await required(client);
      const payment = await createPayment(rail.payerKeys[2]!, offer.accepts[0], offer.resource);
      const before = await rail.balanceOf(rail.payTo);
      await rail.setFacilitatorDown(true);
      try {
        const r = await exec(client, QUOTE, payment);
        expect(r.isError).toBe(true);
        expect(r.structuredContent).toBeUndefined();
        expect(r.content[0]!.text).toMatch(/^Payment pending \(payment-unavailable\).*same _meta\["x402\/payment"\]/);
        expect(r.content.map((c) => c.text).join('\n')).not.toMatch(/SigningQuote/);
      } finally {
        await rail.setFacilitatorDown(false);
      }
      const paid = await exec(client, QUOTE, payment);
      expect(paid.isError, paid.content[0]!.text).toBeFalsy();
      expect(paid._meta?.['x402/payment-response']).toMatchObject({ success: true });
      expect((await rail.balanceOf(rail.payTo)) - before).toBe(PRICE);
    } finally {
      await client.close();
    }
  }, 60_000);

  it('the wallet-only agent: /llms.txt, the call (402), the paid retry (200) in three requests and ≤ 8,000 characters of bodies', async () => {
    const bodies: string[] = [];
    const get = async (path: string, init: RequestInit = {}) => {
      const r = await fetch(`${base}${path}`, init);
      bodies.push(await r.text());
      return r;
    };
    await get('/llms.txt');
    const llms = bodies[0]!;
    expect(llms).toContain('x402');
    expect(llms).toContain('PAYMENT-REQUIRED');
    expect(llms).toContain('PAYMENT-SIGNATURE');
    expect(llms).toContain('x402/payment');
    const init = (headers: Record<string, string> = {}): RequestInit => ({
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ vin: VIN }),
    });
    const offer = await get('/signings/quote', init());
    expect(offer.status).toBe(402);
    const terms = unb64(offer.headers.get('payment-required')!);
    const payment = await createPayment(rail.payerKeys[3]!, terms.accepts[0], terms.resource);
    const paid = await get(
      '/signings/quote',
      init({ 'payment-signature': Buffer.from(JSON.stringify(payment)).toString('base64') }),
    );
    expect(paid.status, bodies[2]).toBe(200);
    expect(JSON.parse(bodies[2]!)).toMatchObject({ type: 'OK', meter: { payment: { amount: '1.00' } } });
    const total = bodies.reduce((n, b) => n + b.length, 0);
    console.log(`wallet-only agent read ${bodies.map((b) => b.length).join(' + ')} = ${total} characters`);
    expect(total).toBeLessThanOrEqual(8000);
  }, 60_000);
});
