import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPaymentHeader } from 'x402/client';
import { createSigner } from 'x402/types';
import { createPayment, payingFetch, receiptOf, startRail, type Rail } from '@vcs/x402-rail';
import { call, mintKey, modes, waitFor } from './support/harness.ts';
import { railSettings, settledEventsOf, startMoneyHarness, type MoneyHarness } from './support/money.ts';
import { anvilControl, type AnvilControl } from './support/anvil.ts';
import { startFaultProxy, type FaultProxy } from './support/fault-proxy.ts';

/**
 * A payer never pays for a failure, and pays once for each answer received — tried as a paying agent would, with the
 * stock clients (`@x402/fetch` for v2, the `x402` package's createPaymentHeader for v1) on the local chain:
 *
 * - a paid capability whose execution fails (BLOCKED), or answers EMPTY where its price is for an answer: the
 *   payment is verified, the capability runs, and nothing is settled — the money stays with the payer, the meter says
 *   0.00, and the authorization can never be used (its nonce stays unused on chain);
 * - a paid answer never delivered (the caller got 503 payment-pending while the transfer waited in the pool, and went
 *   away): the same wallet's next call for the same capability and input, with a new authorization, gets that answer,
 *   and the new authorization is never settled;
 * - while the outcome is still being decided the gateway holds the request (X402_PAYMENT_HOLD_MS), so a transfer
 *   mined within the hold is the first call's answer.
 *
 * A fault proxy (support/fault-proxy.ts) answers `settlement_pending` for a settle the test picks, with anvil not
 * mining, so the transfer is broadcast and waits until the test mines it.
 */
const VIN = '1HGCM82633A004352';
const QUOTE = 1_000_000n; // signing.quote: 1.00 USD flat (priced for an answer), in the token's 6 decimals
const HOLD_MS = 6_000;
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');
const unb64 = (s: string) => JSON.parse(Buffer.from(s, 'base64').toString('utf8'));
const authOf = (header: string): { from: `0x${string}`; nonce: `0x${string}` } => unb64(header).payload.authorization;

describe.each(modes())('paying only for an answer, once (%s)', (mode) => {
  let rail: Rail;
  let proxy: FaultProxy;
  let chain: AnvilControl;
  let m: MoneyHarness;
  let base: string;
  let payers = 0;
  const nextPayer = () => payers++;

  beforeAll(async () => {
    rail = await startRail({ payers: 16 });
    proxy = await startFaultProxy({ target: rail.facilitatorUrl, rpcUrl: rail.rpcUrl });
    chain = anvilControl(rail.rpcUrl);
    m = await startMoneyHarness(mode, {
      ...railSettings(rail),
      X402_FACILITATOR_URL: proxy.url, // the rail's facilitator, behind the fault proxy
      X402_FACILITATOR_TIMEOUT_MS: '1500',
      X402_PAYMENT_HOLD_MS: String(HOLD_MS),
    });
    base = m.h.baseUrl;
  }, 180_000);
  afterEach(async () => {
    await chain?.restore();
  });
  afterAll(async () => {
    await m?.stop();
    await proxy?.close();
    await rail?.stop();
  });

  /** A stock v2 client for `payer`, which records the payment header it sends (the second request's). */
  function stockV2(payer: number) {
    const sent: string[] = [];
    const recording: typeof fetch = async (input, init) => {
      const r = new Request(input, init);
      const header = r.headers.get('payment-signature');
      if (header) sent.push(header);
      return fetch(r);
    };
    const pay = payingFetch(rail.payerKeys[payer]!, { fetch: recording });
    return {
      sent,
      post: async (path: string, body: unknown, headers: Record<string, string> = {}) => {
        const res = await pay(`${base}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify(body),
        });
        return { res, json: (await res.json()) as any };
      },
    };
  }

  /** What a stock v1 client does: read the 402 body's accepts[0], sign it (x402's createPaymentHeader), send it again. */
  async function stockV1(payer: number, path: string, body: unknown, headers: Record<string, string> = {}) {
    const offer = await call(base, 'POST', path, { body, headers });
    expect(offer.status, offer.text).toBe(402);
    const header = await createPaymentHeader(
      (await createSigner('base-sepolia', rail.payerKeys[payer]!)) as never,
      1,
      offer.json.accepts[0],
    );
    const paid = await call(base, 'POST', path, { body, headers: { ...headers, 'x-payment': header } });
    return { header, paid };
  }

  const intent = async (id: string, key?: string) => (await call(base, 'GET', `/intents/${id}`, { key })).json?.value;
  const used = (header: string) => rail.authorizationUsed(authOf(header).from, authOf(header).nonce);

  describe('1. never paying for a failure', () => {
    it('v2 (@x402/fetch): POST /signings/pay whose execution fails (Sandbox-Trigger: fail at the 402): BLOCKED payment-failed, 0.00, nothing moves, the authorization unused', async () => {
      const before = await rail.balanceOf(rail.payTo);
      const client = stockV2(nextPayer());
      const { res, json } = await client.post('/signings/pay', { vin: VIN }, { 'sandbox-trigger': 'fail' });
      expect(json, JSON.stringify(json)).toMatchObject({
        type: 'BLOCKED',
        value: { code: 'payment-failed' },
        meter: { charged: '0.00', posted: true },
      });
      expect(json.meter.payment).toBeUndefined();
      expect(res.headers.get('payment-response')).toBeNull();
      expect(client.sent).toHaveLength(1);
      expect(await used(client.sent[0]!), 'the authorization is never sent to settle').toBe(false);
      expect(await rail.balanceOf(rail.payTo)).toBe(before);
      const id = res.headers.get('intent-id')!;
      expect(await intent(id)).toMatchObject({
        status: 'failed',
        executions: 1,
        charged: { amount: '0.00' },
        payment: { status: 'voided' },
      });
      expect(await settledEventsOf(m.db, id)).toBe(1);
    });

    it('v1 (X-PAYMENT): the same failure on the route, and an EMPTY quote (its price is for an answer): 0.00, nothing moves; an EMPTY on a take-rate (its price is for the act) is charged', async () => {
      const before = await rail.balanceOf(rail.payTo);
      const failed = await stockV1(nextPayer(), '/signings/pay', { vin: VIN }, { 'sandbox-trigger': 'fail' });
      expect(failed.paid.json, failed.paid.text).toMatchObject({
        type: 'BLOCKED',
        value: { code: 'payment-failed' },
        meter: { charged: '0.00' },
      });
      expect(failed.paid.headers.get('x-payment-response')).toBeNull();
      expect(await used(failed.header)).toBe(false);
      const empty = await stockV1(nextPayer(), '/signings/quote', { vin: VIN }, { 'sandbox-trigger': 'empty' });
      expect(empty.paid.status, empty.paid.text).toBe(200);
      expect(empty.paid.json).toMatchObject({ type: 'EMPTY', meter: { charged: '0.00' } });
      expect(await used(empty.header)).toBe(false);
      expect(await rail.balanceOf(rail.payTo)).toBe(before);
      const act = await stockV1(nextPayer(), '/signings/pay', { vin: VIN }, { 'sandbox-trigger': 'empty' });
      expect(act.paid.status, act.paid.text).toBe(200);
      expect(act.paid.json).toMatchObject({ type: 'EMPTY', meter: { charged: '4.35', payment: { amount: '4.35' } } });
      expect(await used(act.header)).toBe(true);
      expect((await rail.balanceOf(rail.payTo)) - before).toBe(4_350_000n);
    });

    it('POST /intents/{id}/settle: totalLoss.settlement failing (Sandbox-Trigger: fail) charges 0.00, with a key (simulated) and with an x402 payment (nothing moves)', async () => {
      const { key } = await mintKey(base);
      const offer = await call(base, 'POST', '/total-loss/settlement', {
        key,
        body: { vin: VIN },
        headers: { 'sandbox-trigger': 'fail' },
      });
      expect(offer.status, offer.text).toBe(402);
      const simulated = await call(base, 'POST', offer.json.value.settle.path, { key });
      expect(simulated.json, simulated.text).toMatchObject({
        type: 'BLOCKED',
        value: { code: 'execution-failed' },
        meter: { charged: '0.00' },
      });
      expect(simulated.status).toBe(422);

      const before = await rail.balanceOf(rail.payTo);
      const paidOffer = await call(base, 'POST', '/total-loss/settlement', {
        body: { vin: VIN },
        headers: { 'sandbox-trigger': 'fail' },
      });
      const required = unb64(paidOffer.headers.get('payment-required')!);
      const payment = await createPayment(rail.payerKeys[nextPayer()]!, required.accepts[0], required.resource);
      const paid = await call(base, 'POST', paidOffer.json.value.settle.path, {
        headers: { 'payment-signature': b64(payment) },
      });
      expect(paid.status, paid.text).toBe(422);
      expect(paid.json).toMatchObject({
        type: 'BLOCKED',
        value: { code: 'execution-failed' },
        meter: { charged: '0.00' },
      });
      expect(paid.headers.get('payment-response')).toBeNull();
      expect(await rail.balanceOf(rail.payTo)).toBe(before);
      expect(await used(b64(payment))).toBe(false);
    });
  });

  describe('2. paid once per answer received', () => {
    it('v2 (@x402/fetch): 503 payment-pending while the transfer waits in the pool; the reconciler settles it; the next call with a new authorization gets that answer, and nothing more moves', async () => {
      const payer = nextPayer();
      const client = stockV2(payer);
      const before = await rail.balanceOf(rail.payTo);
      await chain.automine(false);
      const pending = proxy.next({ kind: 'settlement_pending' });
      const first = await client.post('/signings/quote', { vin: VIN });
      expect((await pending).transaction, 'the transfer waits in the pool').toBeTruthy();
      expect(first.res.status, JSON.stringify(first.json)).toBe(503);
      expect(first.json.value.code).toBe('payment-pending');
      const paidIntent = first.res.headers.get('intent-id')!;
      // The agent goes away; the block is mined, and the reconciler finishes the intent for it.
      await chain.mine();
      await chain.automine(true);
      await waitFor(async () => (await intent(paidIntent))?.status === 'settled', 30_000, 200);
      expect((await rail.balanceOf(rail.payTo)) - before).toBe(QUOTE);

      // The same wallet calls again later, for the same capability and input: a new 402, a new authorization.
      const again = await client.post('/signings/quote', { vin: VIN });
      expect(again.res.status, JSON.stringify(again.json)).toBe(200);
      expect(again.json).toMatchObject({ type: 'OK', meter: { charged: '1.00', payment: { intentId: paidIntent } } });
      expect(again.res.headers.get('intent-id')).toBe(paidIntent);
      expect(receiptOf(again.res)?.transaction).toBe(again.json.meter.payment.transaction);
      expect(client.sent).toHaveLength(2);
      expect(await used(client.sent[1]!), 'the new authorization is never settled').toBe(false);
      expect((await rail.balanceOf(rail.payTo)) - before, 'paid once for the one answer received').toBe(QUOTE);
      // Delivered now: a third call is a new purchase, paid for.
      const third = await client.post('/signings/quote', { vin: VIN });
      expect(third.res.status, JSON.stringify(third.json)).toBe(200);
      expect(third.res.headers.get('intent-id')).not.toBe(paidIntent);
      expect((await rail.balanceOf(rail.payTo)) - before).toBe(2n * QUOTE);
    });

    it('v1 (X-PAYMENT): the same, with a new header for the same route and body', async () => {
      const payer = nextPayer();
      const before = await rail.balanceOf(rail.payTo);
      await chain.automine(false);
      const pending = proxy.next({ kind: 'settlement_pending' });
      const first = await stockV1(payer, '/signings/quote', { vin: VIN });
      await pending;
      expect(first.paid.status, first.paid.text).toBe(503);
      expect(first.paid.json.value.code).toBe('payment-pending');
      const paidIntent = first.paid.headers.get('intent-id')!;
      await chain.mine();
      await chain.automine(true);
      await waitFor(async () => (await intent(paidIntent))?.status === 'settled', 30_000, 200);
      const again = await stockV1(payer, '/signings/quote', { vin: VIN });
      expect(again.paid.status, again.paid.text).toBe(200);
      expect(again.paid.json).toMatchObject({
        type: 'OK',
        meter: { charged: '1.00', payment: { intentId: paidIntent } },
      });
      expect(unb64(again.paid.headers.get('x-payment-response')!)).toMatchObject({
        success: true,
        network: 'base-sepolia',
      });
      expect(await used(again.header)).toBe(false);
      expect((await rail.balanceOf(rail.payTo)) - before).toBe(QUOTE);
    });

    it('held while decided: a transfer mined within X402_PAYMENT_HOLD_MS is the first call’s answer (v2, @x402/fetch)', async () => {
      const client = stockV2(nextPayer());
      const before = await rail.balanceOf(rail.payTo);
      await chain.automine(false);
      const pending = proxy.next({ kind: 'settlement_pending' });
      const call1 = client.post('/signings/quote', { vin: VIN });
      await pending; // broadcast, not mined: the request is held, not answered 503
      await chain.mine();
      await chain.automine(true);
      const first = await call1;
      expect(first.res.status, JSON.stringify(first.json)).toBe(200);
      expect(first.json).toMatchObject({ type: 'OK', meter: { charged: '1.00' } });
      expect(receiptOf(first.res)?.success).toBe(true);
      expect((await rail.balanceOf(rail.payTo)) - before).toBe(QUOTE);
    });
  });
});
