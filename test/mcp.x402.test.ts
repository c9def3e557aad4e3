import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaymentRequiredV2Schema } from '@x402/core/schemas';
import { createPayment, type Rail } from '@vcs/x402-rail';
import { call, mintKey, modes } from './support/harness.ts';
import { connectMcp, MCP_CLIENTS, type McpClientKind, type McpSession, type ToolCall } from './support/mcp.ts';
import { countEvents, type MoneyHarness, startPaidService, stopPaidService } from './support/money.ts';

// x402 inside MCP (x402's MCP transport, both bindings) with the official MCP clients we did not write — the 1.x
// client on 2025-11-25, the 2.x client on 2026-07-28 without and with the `org.x402/payment` extension — against the
// service on the local x402 rail: exec's OFFER is payment-required in the client's binding; the same call with a
// PaymentPayload in `_meta["x402/payment"]` pays it; the receipt comes back in `_meta["x402/payment-response"]`.
const VIN = '1HGCM82633A004352';
const PRICE = 1_000_000n; // signing.quote: 1.00 USD flat, in the token's 6 decimals
const QUOTE = `return await signing.quote({ vin: '${VIN}' });`;
const unb64 = (s: string) => JSON.parse(Buffer.from(s, 'base64').toString('utf8'));
const EXTENSION_CLIENT = MCP_CLIENTS.find((k) => k.binding === 'extension')!;

type PaymentRequired = { accepts: any[]; resource: any; error?: string; extensions?: unknown };

/**
 * The PaymentRequired of a payment-required answer, checked against x402's own schema and the binding's shape: the
 * extension's `payment_required` result with it once (which the 2.x client refuses as a result type it does not
 * know), or the tool-result's `isError` with it as `structuredContent` and as `content[0].text`, marked `complete`
 * on 2026-07-28.
 */
function paymentRequiredOf(kind: McpClientKind, r: ToolCall): PaymentRequired {
  let required: unknown;
  if (kind.binding === 'extension') {
    expect(r.wire.resultType).toBe('payment_required');
    expect(r.wire.structuredContent).toBeUndefined();
    expect(r.refused?.data).toMatchObject({ resultType: 'payment_required', method: 'tools/call' });
    required = r.wire.paymentRequired;
  } else {
    expect(r.wire.resultType).toBe(kind.revision === '2026-07-28' ? 'complete' : undefined);
    expect(r.result!.isError, r.result!.content[0]!.text).toBe(true);
    expect(JSON.parse(r.result!.content[0]!.text)).toEqual(r.result!.structuredContent);
    required = r.result!.structuredContent;
  }
  const v2 = PaymentRequiredV2Schema.safeParse(required);
  expect(v2.success, JSON.stringify(v2.error?.issues)).toBe(true);
  return required as PaymentRequired;
}

/** The paid answer of a paid call (a `complete` result on 2026-07-28, in either binding) and its receipt. */
function paidOf(kind: McpClientKind, r: ToolCall) {
  expect(r.wire.resultType).toBe(kind.revision === '2026-07-28' ? 'complete' : undefined);
  expect(r.result?.isError, r.result?.content[0]!.text).toBeFalsy();
  return { answer: JSON.parse(r.result!.content[0]!.text).result, receipt: r.result!._meta?.['x402/payment-response'] };
}

describe.each(modes())('x402 inside MCP (%s)', (mode) => {
  let rail: Rail;
  let m: MoneyHarness;
  let base: string;
  /** Where the paid call goes: another gateway replica in the distributed mode (no session, no stickiness). */
  let other: string;
  beforeAll(async () => {
    ({ rail, m, base } = await startPaidService(mode, 8));
    other = mode === 'distributed' ? await m.h.startGateway!() : base;
  }, 120_000);
  afterAll(() => stopPaidService({ rail, m }));

  const exec = (s: McpSession, code: string, payment?: unknown) =>
    s.call('exec', { code }, payment === undefined ? undefined : { 'x402/payment': payment });

  it('search shows the price before any call; exec declares no outputSchema; 2026-07-28 declares org.x402/payment in server/discover', async () => {
    for (const kind of MCP_CLIENTS) {
      const s = await connectMcp(kind, base);
      try {
        const found = await s.call('search', { query: 'signing quote' });
        const quote = JSON.parse(found.result!.content[0]!.text).results.find((x: any) => x.id === 'signing.quote');
        expect(quote.text).toMatch(/1\.00 USD/);
        const { tools } = await s.listTools();
        const execTool = tools.find((t) => t.name === 'exec')!;
        expect(execTool.outputSchema).toBeUndefined();
        expect(execTool.description).toContain('x402/payment');
        const handshake = s.wire[0]!;
        if (kind.revision === '2026-07-28') {
          expect(handshake).toMatchObject({ method: 'server/discover', status: 200 });
          expect(handshake.result).toMatchObject({
            supportedVersions: ['2026-07-28'],
            capabilities: { tools: { listChanged: false }, extensions: { 'org.x402/payment': {} } },
            resultType: 'complete',
            ttlMs: 300_000,
            cacheScope: 'public',
          });
          const listed = s.wire.find((x) => x.method === 'tools/list')!;
          expect(listed.result).toMatchObject({ resultType: 'complete', ttlMs: 300_000, cacheScope: 'public' });
        } else {
          expect(handshake).toMatchObject({ method: 'initialize', status: 200 });
          expect(handshake.result!.protocolVersion).toBe('2025-11-25');
          expect(handshake.result!.capabilities.extensions).toBeUndefined();
        }
      } finally {
        await s.close();
      }
    }
  });

  it.each(MCP_CLIENTS)(
    '$name: an OFFER is payment-required in its binding; the same call with the payment in _meta pays it once on another replica; again moves nothing',
    async (kind) => {
      const { key, account } = await mintKey(base);
      const s = await connectMcp(kind, base, key);
      const payer = await connectMcp(kind, other, key);
      try {
        const offer = paymentRequiredOf(kind, await exec(s, QUOTE));
        expect(offer.accepts[0]).toMatchObject({
          scheme: 'exact',
          network: rail.network,
          payTo: rail.payTo,
          amount: String(PRICE),
        });
        expect(offer.extensions).toBeUndefined();
        expect(await countEvents(m.db, 'Signing.quoted@1', account)).toBe(0);
        const payerIndex = MCP_CLIENTS.indexOf(kind);
        const payment = await createPayment(rail.payerKeys[payerIndex]!, offer.accepts[0], offer.resource);
        const before = await rail.balanceOf(rail.payTo);
        const { answer, receipt } = paidOf(kind, await exec(payer, QUOTE, payment));
        expect(answer).toMatchObject({
          type: 'OK',
          answers: 'SigningQuote@1',
          meter: { charged: '1.00', payment: { payer: rail.payerAddresses[payerIndex], amount: '1.00' } },
        });
        expect(receipt).toMatchObject({ success: true, network: rail.network, payer: rail.payerAddresses[payerIndex] });
        expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
        expect(receipt.transaction).toBe(answer.meter.payment.transaction);
        // The signed receipt (signed with the embedded mode's dev key; the distributed run sets no signer) is the
        // machines': in `_meta`, not a second time in what the model reads.
        if (mode === 'embedded') expect(receipt.extensions['offer-receipt'].info.receipt.signature).toBeTruthy();
        expect(answer.meter.payment.signedReceipt).toBeUndefined();
        expect((await rail.balanceOf(rail.payTo)) - before).toBe(PRICE);
        expect(await countEvents(m.db, 'Signing.quoted@1', account)).toBe(1);

        // The same call again (a client that lost the answer): the same answer and receipt, no second transfer.
        const again = paidOf(kind, await exec(s, QUOTE, payment));
        expect(again.answer.value).toEqual(answer.value);
        expect(again.receipt).toMatchObject({ transaction: receipt.transaction });
        expect((await rail.balanceOf(rail.payTo)) - before).toBe(PRICE);
        expect(await countEvents(m.db, 'Signing.quoted@1', account)).toBe(1);
      } finally {
        await s.close();
        await payer.close();
      }
    },
    60_000,
  );

  it.each(
    MCP_CLIENTS.flatMap((kind) =>
      (['blocked', 'empty'] as const).map((trigger) => ({ ...kind, trigger, answer: trigger.toUpperCase() })),
    ),
  )(
    '$name: a paid exec answered $answer (not worth its price) is the paid result shape, says "not charged" and why, and carries no payment response; nothing moves',
    async ({ trigger, answer: kindOfAnswer, ...kind }) => {
      const { key, account } = await mintKey(base);
      const s = await connectMcp(kind, base, key);
      try {
        const code = `return await signing.quote({ vin: '${VIN}' }, { headers: { 'sandbox-trigger': '${trigger}' } });`;
        const offer = paymentRequiredOf(kind, await exec(s, code));
        const payment = await createPayment(rail.payerKeys[3]!, offer.accepts[0], offer.resource);
        const before = await rail.balanceOf(rail.payTo);
        const r = await exec(s, code, payment);
        // The paid result's shape (paidOf): a `complete` result, not an error, `{result, calls: 1}` with the Answer.
        const answer = paidOf(kind, r).answer;
        expect(JSON.parse(r.result!.content[0]!.text).calls).toBe(1);
        expect(answer).toMatchObject({ type: kindOfAnswer, meter: { charged: '0.00', posted: true } });
        expect(answer.meter.payment).toBeUndefined();
        if (trigger === 'blocked') expect(answer.value.code).toBe('sandbox-blocked');
        const note = r.result!.content[1]!.text;
        expect(note).toMatch(/^Not charged \(meter\.charged 0\.00\)/);
        expect(note).toContain(trigger === 'blocked' ? 'BLOCKED (sandbox-blocked)' : 'EMPTY');
        // No settlement happened, so no settlement response suggests one did.
        expect(r.wire._meta?.['x402/payment-response']).toBeUndefined();
        expect(r.result!._meta?.['x402/payment-response']).toBeUndefined();
        const { from, nonce } = (payment.payload as any).authorization;
        expect(await rail.authorizationUsed(from, nonce), 'the authorization is never sent to settle').toBe(false);
        expect(await rail.balanceOf(rail.payTo)).toBe(before);
        expect(
          (await call(base, 'GET', `/intents/${offer.accepts[0].extra.intentId}`, { key })).json.value,
        ).toMatchObject({
          charged: { amount: '0.00' },
          payment: { status: 'voided' },
        });
        // The same call again (a client that lost the answer): the same answer, still not charged.
        const again = await exec(s, code, payment);
        expect(paidOf(kind, again).answer.value).toEqual(answer.value);
        expect(again.result!.content[1]!.text).toMatch(/^Not charged/);
        expect(await rail.balanceOf(rail.payTo)).toBe(before);
      } finally {
        await s.close();
      }
    },
    60_000,
  );

  it('a 2025-11-25 request that names org.x402/payment in its _meta still gets the tool-result binding', async () => {
    const s = await connectMcp(MCP_CLIENTS[0], base);
    try {
      const r = await s.call(
        'exec',
        { code: QUOTE },
        { 'io.modelcontextprotocol/clientCapabilities': { extensions: { 'org.x402/payment': {} } } },
      );
      expect(paymentRequiredOf(MCP_CLIENTS[0], r).accepts).toHaveLength(1);
    } finally {
      await s.close();
    }
  });

  it.each([MCP_CLIENTS[0], EXTENSION_CLIENT])(
    '$name: a wrong payment (short of the price) is payment-required again with x402 reason; nothing ran, no money moved',
    async (kind) => {
      const { key, account } = await mintKey(base);
      const s = await connectMcp(kind, base, key);
      try {
        const offer = paymentRequiredOf(kind, await exec(s, QUOTE));
        const intentId = offer.accepts[0].extra.intentId as string;
        const short = await createPayment(
          rail.payerKeys[4]!,
          { ...offer.accepts[0], amount: String(PRICE - 1n) },
          offer.resource,
        );
        const before = await rail.balanceOf(rail.payTo);
        const r = await exec(s, QUOTE, short);
        const again = paymentRequiredOf(kind, r);
        expect(again.error).toBeTruthy();
        expect(again.error).not.toBe(offer.error);
        expect(r.wire.content.at(-1).text).toMatch(/payment-wrong-amount/);
        expect(r.wire._meta?.['x402/payment-response']).toBeUndefined();
        expect(await rail.balanceOf(rail.payTo)).toBe(before);
        expect(await countEvents(m.db, 'Signing.quoted@1', account)).toBe(0);
        expect((await call(base, 'GET', `/intents/${intentId}`, { key })).json.value).toMatchObject({
          status: 'pending',
          executions: 0,
        });
        // Not a payment at all: an error, and nothing is sent anywhere.
        const junk = await exec(s, QUOTE, { hello: 'world' });
        expect(junk.result!.isError).toBe(true);
        expect(junk.result!.structuredContent).toBeUndefined();
        expect(junk.result!.content[0]!.text).toMatch(/x402\/payment/);
      } finally {
        await s.close();
      }
    },
    60_000,
  );

  it.each([MCP_CLIENTS[0], EXTENSION_CLIENT])(
    '$name: with the facilitator down, an error that says to send the same call again (not payment-required); then it pays once',
    async (kind) => {
      const s = await connectMcp(kind, base);
      try {
        const offer = paymentRequiredOf(kind, await exec(s, QUOTE));
        const payment = await createPayment(rail.payerKeys[5]!, offer.accepts[0], offer.resource);
        const before = await rail.balanceOf(rail.payTo);
        await rail.setFacilitatorDown(true);
        try {
          const r = await exec(s, QUOTE, payment);
          expect(r.wire.resultType).toBe(kind.revision === '2026-07-28' ? 'complete' : undefined);
          expect(r.result!.isError).toBe(true);
          expect(r.result!.structuredContent).toBeUndefined();
          expect(r.result!.content[0]!.text).toMatch(
            /^Payment pending \(payment-unavailable\).*same _meta\["x402\/payment"\]/,
          );
          expect(r.result!.content.map((c) => c.text).join('\n')).not.toMatch(/SigningQuote/);
        } finally {
          await rail.setFacilitatorDown(false);
        }
        const { receipt } = paidOf(kind, await exec(s, QUOTE, payment));
        expect(receipt).toMatchObject({ success: true });
        expect((await rail.balanceOf(rail.payTo)) - before).toBe(PRICE);
      } finally {
        await s.close();
      }
    },
    60_000,
  );

  it.each(MCP_CLIENTS)(
    'the wallet-only agent on an MCP host ($name): tools listed, search, exec payment-required, exec paid, in ≤ 8,000 characters of results',
    async (kind) => {
      const s = await connectMcp(kind, base);
      try {
        await s.listTools();
        await s.call('search', { query: 'signing quote' });
        const offer = paymentRequiredOf(kind, await exec(s, QUOTE));
        const payment = await createPayment(rail.payerKeys[6]!, offer.accepts[0], offer.resource);
        paidOf(kind, await exec(s, QUOTE, payment));
        // What the host read: each result as the wire carried it (the handshake is the client's, not the agent's).
        const read = s.wire.filter((x) => x.method === 'tools/list' || x.method === 'tools/call');
        expect(read.map((x) => x.method)).toEqual(['tools/list', 'tools/call', 'tools/call', 'tools/call']);
        const sizes = read.map((x) => JSON.stringify(x.result).length);
        const total = sizes.reduce((a, b) => a + b, 0);
        console.log(`wallet-only agent on ${kind.name} (${mode}) read ${sizes.join(' + ')} = ${total} characters`);
        expect(total).toBeLessThanOrEqual(8000);
      } finally {
        await s.close();
      }
    },
    60_000,
  );

  it('the wallet-only agent over HTTP: /llms.txt, the call (402), the paid retry (200) in three requests and ≤ 8,000 characters of bodies', async () => {
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
    const payment = await createPayment(rail.payerKeys[7]!, terms.accepts[0], terms.resource);
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
