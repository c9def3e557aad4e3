import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPaymentHeader } from 'x402/client';
import { createSigner } from 'x402/types';
import { createPayment, payingFetch, receiptOf, type Rail } from '@vcs/x402-rail';
import { createClient, settle, signing } from '@vcs/sdk';
import { call, mintKey, modes, waitFor } from './support/harness.ts';
import { countEvents, type MoneyHarness, startPaidService, stopPaidService } from './support/money.ts';

// Money on a chain: the offline x402 rail (a local chain, the EIP-3009 test token at Base Sepolia's USDC address,
// funded payers, a facilitator over HTTP) and the stock clients, against the service in each mode.
const VIN = '1HGCM82633A004352';
const PRICE = 1_000_000n; // signing.quote: 1.00 USD flat, in the token's 6 decimals
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');
const unb64 = (s: string) => JSON.parse(Buffer.from(s, 'base64').toString('utf8'));

describe.each(modes())('x402 payments on a local chain (%s)', (mode) => {
  let rail: Rail;
  let m: MoneyHarness;
  let base: string;
  beforeAll(async () => {
    ({ rail, m, base } = await startPaidService(mode, 52));
  }, 120_000);
  afterAll(() => stopPaidService({ rail, m }));

  /** The 402 for signing.quote, and a v2 payment signed by `payer` for its one requirement (optionally changed). */
  async function offerAndPayment(payer: number, change: Record<string, unknown> = {}, key?: string) {
    const offer = await call(base, 'POST', '/signings/quote', { key, body: { vin: VIN } });
    expect(offer.status).toBe(402);
    const required = unb64(offer.headers.get('payment-required')!);
    const payment = await createPayment(
      rail.payerKeys[payer]!,
      { ...required.accepts[0], ...change },
      required.resource,
    );
    return { offer, intentId: offer.json.value.intent.id as string, payment };
  }
  const pay = (payment: unknown, key?: string) =>
    call(base, 'POST', '/signings/quote', { key, body: { vin: VIN }, headers: { 'payment-signature': b64(payment) } });

  it('a stock x402 v2 client (@x402/fetch) pays an anonymous offer in two requests and gets the answer with its receipt', async () => {
    const before = await rail.balanceOf(rail.payTo);
    const res = await payingFetch(rail.payerKeys[0]!)(`${base}/signings/quote`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ vin: VIN }),
    });
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({
      type: 'OK',
      answers: 'SigningQuote@1',
      meter: {
        charged: '1.00',
        posted: true,
        payment: { network: rail.network, payer: rail.payerAddresses[0], amount: '1.00' },
      },
    });
    const receipt = receiptOf(res)!;
    expect(receipt).toMatchObject({ success: true, network: rail.network, payer: rail.payerAddresses[0] });
    expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect((await rail.balanceOf(rail.payTo)) - before).toBe(PRICE);
    const intent = await call(base, 'GET', `/intents/${res.headers.get('intent-id')}`);
    expect(intent.json.value).toMatchObject({
      status: 'settled',
      executions: 1,
      charged: { amount: '1.00', currency: 'USD' },
      payment: { status: 'settled', transaction: receipt.transaction, payer: rail.payerAddresses[0] },
    });
  });

  it("a deal step's 402 says how to pay, and the stock client (@x402/fetch) pays it at the advance route, once", async () => {
    const { key } = await mintKey(base);
    const opened = await call(base, 'POST', '/buy/deals', {
      key,
      body: { vin: VIN, buyer: { name: 'B', zip: '94103' } },
    });
    const dealId = opened.json.value.dealId as string;
    const advance = `${base}/buy/deals/${dealId}/advance`;
    const offer = await call(base, 'POST', `/buy/deals/${dealId}/advance`, { key });
    expect(offer.status, offer.text).toBe(402);
    const required = unb64(offer.headers.get('payment-required')!);
    expect(required.accepts[0].extra.intentId).toBe(offer.json.value.intent.id);
    const before = await rail.balanceOf(rail.payTo);
    const sent: string[] = [];
    const recording: typeof fetch = async (input, init) => {
      const r = new Request(input, init);
      if (r.headers.has('payment-signature')) sent.push(r.headers.get('payment-signature')!);
      return fetch(r);
    };
    const res = await payingFetch(rail.payerKeys[51]!, { fetch: recording, maxPerPayment: '$1000' })(advance, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
    });
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(sent).toHaveLength(1);
    expect(receiptOf(res)).toMatchObject({ success: true });
    const amount = BigInt(required.accepts[0].amount);
    expect((await rail.balanceOf(rail.payTo)) - before).toBe(amount);
    await waitFor(async () => {
      const d = (await call(base, 'GET', `/buy/deals/${dealId}`, { key })).json.value;
      return d.state === 'SETTLED' || d.currentStep > opened.json.value.currentStep;
    }, 20_000);
  });

  it('an x402 v1 client (X-PAYMENT from the `x402` package) pays from the 402 body and reads X-PAYMENT-RESPONSE', async () => {
    const { key, account } = await mintKey(base);
    const offer = await call(base, 'POST', '/signings/quote', { key, body: { vin: VIN } });
    const requirement = offer.json.accepts[0];
    expect(requirement).toMatchObject({
      scheme: 'exact',
      network: 'base-sepolia',
      maxAmountRequired: String(PRICE),
      payTo: rail.payTo,
    });
    const header = await createPaymentHeader(
      (await createSigner('base-sepolia', rail.payerKeys[1]!)) as never,
      1,
      requirement,
    );
    const paid = await call(base, 'POST', '/signings/quote', {
      key,
      body: { vin: VIN },
      headers: { 'x-payment': header },
    });
    expect(paid.status, paid.text).toBe(200);
    expect(unb64(paid.headers.get('x-payment-response')!)).toMatchObject({
      success: true,
      network: 'base-sepolia',
      payer: rail.payerAddresses[1],
    });
    expect(await countEvents(m.db, 'Signing.quoted@1', account)).toBe(1);
    // Counted once in usage, with what it collected.
    await waitFor(async () => (await call(base, 'GET', '/keys/me', { key })).json.usage?.settlements === 1);
    const me = await call(base, 'GET', '/keys/me', { key });
    expect(me.json.usage).toMatchObject({
      settlements: 1,
      charged: '1.00',
      byCapability: { 'signing.quote': { settlements: 1, charged: '1.00' } },
    });
  });

  it('the intent route takes a payment too, without a key; paying it again replays the answer and moves no money', async () => {
    const { intentId, payment } = await offerAndPayment(2);
    const settle = (p: unknown) =>
      call(base, 'POST', `/intents/${intentId}/settle`, { headers: { 'payment-signature': b64(p) } });
    const first = await settle(payment);
    expect(first.status, first.text).toBe(200);
    expect(first.headers.get('payment-response')).toBeTruthy();
    const balance = await rail.balanceOf(rail.payTo);
    const again = await settle(payment);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await rail.balanceOf(rail.payTo)).toBe(balance);
  });

  it("the SDK settles an OFFER with a payer (an x402 client) from the offer's own x402 terms", async () => {
    const client = createClient({ baseUrl: base });
    const offer = await signing.quote({ vin: VIN }, { client });
    expect(offer.type).toBe('OFFER');
    if (offer.type !== 'OFFER') return;
    expect(offer.value.x402?.accepts[0]).toMatchObject({
      scheme: 'exact',
      network: rail.network,
      payTo: rail.payTo,
      amount: String(PRICE),
    });
    const payer = {
      createPaymentPayload: (required: any) =>
        createPayment(rail.payerKeys[7]!, required.accepts[0], required.resource),
    };
    const paid = await settle(offer, { client, payer });
    expect(paid).toMatchObject({
      type: 'OK',
      answers: 'SigningQuote@1',
      meter: { charged: '1.00', payment: { amount: '1.00' } },
    });
  });

  it('refuses a payment for good with a code that says which term is wrong, and runs nothing', async () => {
    const cases: [string, number, Record<string, unknown>, string][] = [
      ['short of the price', 3, { amount: String(PRICE - 1n) }, 'payment-wrong-amount'],
      ['to another payTo', 3, { payTo: '0x00000000000000000000000000000000000000aa' }, 'payment-wrong-recipient'],
      ['on another network', 3, { network: 'eip155:1' }, 'payment-wrong-network'],
      ['expired', 3, { maxTimeoutSeconds: 2 }, 'payment-expired'],
    ];
    for (const [what, payer, change, code] of cases) {
      const { intentId, payment } = await offerAndPayment(payer, change);
      const r = await pay(payment);
      expect(r.status, `${what}: ${r.text}`).toBe(402);
      expect(r.json.value.code, what).toBe(code);
      expect(unb64(r.headers.get('payment-required')!).error, what).toBeTruthy();
      const intent = await call(base, 'GET', `/intents/${intentId}`);
      expect(intent.json.value, what).toMatchObject({ status: 'pending', executions: 0 });
    }
    // From an empty wallet: the facilitator's own reason.
    const { payment: poor } = await offerAndPayment(0, {});
    const empty = await createPayment(`0x${randomBytes(32).toString('hex')}`, poor.accepted as never);
    const r = await pay(empty);
    expect(r.status, r.text).toBe(402);
    expect(r.json.value.code).toBe('payment-insufficient-funds');
  });

  it('one authorisation pays for one intent only: the same payment sent for another intent is refused', async () => {
    const { payment } = await offerAndPayment(4);
    expect((await pay(payment)).status).toBe(200);
    const other = await call(base, 'POST', '/signings/quote', { body: { vin: VIN } });
    const r = await call(base, 'POST', `/intents/${other.json.value.intent.id}/settle`, {
      headers: { 'payment-signature': b64(payment) },
    });
    expect(r.status, r.text).toBe(409);
    expect(r.json.value.code).toBe('payment-other-intent');
  });

  it('with the facilitator down: 503 with Retry-After, never 402, nothing executed; the same payment goes through once it is back', async () => {
    const { intentId, payment } = await offerAndPayment(5);
    await rail.setFacilitatorDown(true);
    try {
      const r = await pay(payment);
      expect(r.status, r.text).toBe(503);
      expect(r.json.value.code).toBe('payment-unavailable');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await call(base, 'GET', `/intents/${intentId}`)).json.value).toMatchObject({
        status: 'pending',
        executions: 0,
      });
    } finally {
      await rail.setFacilitatorDown(false);
    }
    const again = await pay(payment);
    expect(again.status, again.text).toBe(200);
  });

  it('the settle answer lost after the chain took the transfer: never a 402; the retry serves the receipt, executed once', async () => {
    const { key, account } = await mintKey(base);
    const { intentId, payment } = await offerAndPayment(6, {}, key);
    const before = await rail.balanceOf(rail.payTo);
    const lost = rail.facilitator.loseNextSettleAnswer(); // resolves once a settle's answer was lost
    const first = await pay(payment, key);
    expect((await lost).success).toBe(true);
    // Settled on chain, but we were not told: the chain is asked, so the first answer is already the right one
    // (or a 503 payment-pending if the node was slow); never a 402 that would have the client pay again.
    expect([200, 503], first.text).toContain(first.status);
    const second = await pay(payment, key);
    expect(second.status, second.text).toBe(200);
    expect(second.json.meter.payment.transaction).toMatch(/^0x/);
    expect((await rail.balanceOf(rail.payTo)) - before).toBe(PRICE);
    expect(await countEvents(m.db, 'Signing.quoted@1', account)).toBe(1);
    expect((await call(base, 'GET', `/intents/${intentId}`, { key })).json.value).toMatchObject({
      status: 'settled',
      executions: 1,
    });
  });

  it('50 payers paying at once: each settles once, every transfer lands', async () => {
    const before = await rail.balanceOf(rail.payTo);
    const payments = await Promise.all(
      Array.from({ length: 50 }, (_, i) => offerAndPayment(i + 2).then((o) => o.payment)),
    );
    // Payers 2..6 paid above already: each signs a fresh authorization here.
    // A 503 (the outcome not known within the gateway's time on a loaded machine) is asked again with the same
    // payment, as Retry-After says; never a 402, and never a second charge.
    const payOnce = async (p: unknown) => {
      for (let i = 0; ; i++) {
        const a = await pay(p);
        if (a.status !== 503 || i >= 20) return a;
        await new Promise((r) => setTimeout(r, 1000 * Number(a.headers.get('retry-after') ?? 1)));
      }
    };
    const answers = await Promise.all(payments.map(payOnce));
    for (const a of answers) expect(a.status, a.text).toBe(200);
    const txs = new Set(answers.map((a) => a.json.meter.payment.transaction));
    expect(txs.size).toBe(50);
    expect((await rail.balanceOf(rail.payTo)) - before).toBe(PRICE * 50n);
  }, 120_000);
});
