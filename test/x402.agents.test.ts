import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { privateKeyToAccount } from 'viem/accounts';
import {
  appendPaymentIdentifierToExtensions,
  isPaymentIdentifierExtension,
  PAYMENT_IDENTIFIER,
} from '@x402/extensions/payment-identifier';
import { SIGN_IN_WITH_X, wrapFetchWithSIWx } from '@x402/extensions/sign-in-with-x';
import { createPayment, type Rail } from '@vcs/x402-rail';
import { call, modes } from './support/harness.ts';
import { type MoneyHarness, startPaidService, stopPaidService } from './support/money.ts';

// What a wallet-only agent gets from x402's extensions, with the extension's own client helpers: a payment named by
// its payment-identifier is read again without moving money (another payment under the same id is 409), and the
// wallet that paid reads its answer again with a sign-in-with-x proof, no key and no payment.
const VIN = '1HGCM82633A004352';
const PRICE = 1_000_000n;
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');
const unb64 = (s: string) => JSON.parse(Buffer.from(s, 'base64').toString('utf8'));

describe.each(modes())('x402 agents: payment-identifier and sign-in-with-x (%s)', (mode) => {
  let rail: Rail;
  let m: MoneyHarness;
  let base: string;
  beforeAll(async () => {
    ({ rail, m, base } = await startPaidService(mode, 6));
  }, 120_000);
  afterAll(() => stopPaidService({ rail, m }));

  const quote = (headers: Record<string, string> = {}, body: unknown = { vin: VIN }) =>
    call(base, 'POST', '/signings/quote', { body, headers });
  const required = async (body?: unknown) => {
    const offer = await quote({}, body);
    expect(offer.status, offer.text).toBe(402);
    return unb64(offer.headers.get('payment-required')!);
  };
  /** A v2 payment for the 402's offer, named by `id` (the extension's own client helper adds it). */
  async function namedPayment(payer: number, id: string) {
    const pr = await required();
    const payment = await createPayment(rail.payerKeys[payer]!, pr.accepts[0], pr.resource);
    const extensions = appendPaymentIdentifierToExtensions(structuredClone(pr.extensions), id);
    return { ...payment, extensions: { [PAYMENT_IDENTIFIER]: extensions[PAYMENT_IDENTIFIER] } };
  }

  it('every 402 declares payment-identifier and a sign-in-with-x challenge bound to this origin', async () => {
    const pr = await required();
    expect(isPaymentIdentifierExtension(pr.extensions[PAYMENT_IDENTIFIER])).toBe(true);
    const siwx = pr.extensions[SIGN_IN_WITH_X];
    expect(siwx.info).toMatchObject({ domain: new URL(base).host, uri: `${base}/signings/quote`, version: '1' });
    expect(siwx.info.nonce).toMatch(/^[0-9a-f]{32}$/);
    expect(siwx.supportedChains).toEqual([{ chainId: rail.network, type: 'eip191' }]);
    expect((await required()).extensions[SIGN_IN_WITH_X].info.nonce).not.toBe(siwx.info.nonce);
  });

  it('payment-identifier: the same payment resent with its id answers the stored answer and moves no money; another payment under that id is 409', async () => {
    const id = `agent-${mode}-${Date.now()}-0001`;
    const payment = await namedPayment(0, id);
    const before = await rail.balanceOf(rail.payTo);
    const first = await quote({ 'payment-signature': b64(payment) });
    expect(first.status, first.text).toBe(200);
    const again = await quote({ 'payment-signature': b64(payment) });
    expect(again.status, again.text).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json.value).toEqual(first.json.value);
    const other = await namedPayment(1, id);
    const clash = await quote({ 'payment-signature': b64(other) });
    expect(clash.status, clash.text).toBe(409);
    expect(clash.json.value.code).toBe('payment-identifier-conflict');
    expect((await rail.balanceOf(rail.payTo)) - before).toBe(PRICE);
    const bad = await namedPayment(2, `agent-${mode}-${Date.now()}-0002`);
    (bad.extensions[PAYMENT_IDENTIFIER] as { info: { id: string } }).info.id = 'short';
    const refused = await quote({ 'payment-signature': b64(bad) });
    expect(refused.json.value.code, refused.text).toBe('payment-invalid');
    expect((await rail.balanceOf(rail.payTo)) - before).toBe(PRICE);
  });

  it('sign-in-with-x: the wallet that paid reads its answer again with no key and no payment; another wallet, or the same proof twice, is refused', async () => {
    const payer = privateKeyToAccount(rail.payerKeys[3]!);
    const pr = await required();
    const paid = await quote({
      'payment-signature': b64(await createPayment(rail.payerKeys[3]!, pr.accepts[0], pr.resource)),
    });
    expect(paid.status, paid.text).toBe(200);
    const before = await rail.balanceOf(rail.payTo);
    const quoted = async () =>
      Number(
        (
          await m.db.query<{ n: string }>(
            `select count(*)::text as n from outbox_events where type = 'Signing.quoted@1'`,
          )
        ).rows[0]!.n,
      );
    const events = await quoted();

    // The extension's own client: it answers the 402's challenge with the wallet's proof and sends the request again.
    let proofSent = '';
    const recording: typeof fetch = async (input, init) => {
      const r = new Request(input, init);
      proofSent = r.headers.get(SIGN_IN_WITH_X) ?? proofSent;
      return fetch(r);
    };
    const read = await wrapFetchWithSIWx(recording, payer)(`${base}/signings/quote`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ vin: VIN }),
    });
    const body = (await read.json()) as any;
    expect(read.status, JSON.stringify(body)).toBe(200);
    expect(proofSent).not.toBe('');
    expect(read.headers.get('idempotent-replayed')).toBe('true');
    expect(body.value).toEqual(paid.json.value);
    expect(body.meter.payment.payer.toLowerCase()).toBe(payer.address.toLowerCase());
    expect(await rail.balanceOf(rail.payTo)).toBe(before);
    expect(await quoted()).toBe(events);

    // The same proof again: its nonce is spent.
    const replayed = await quote({ [SIGN_IN_WITH_X]: proofSent });
    expect(replayed.status, replayed.text).toBe(402);
    expect(unb64(replayed.headers.get('payment-required')!).error).toMatch(/nonce/);

    // A wallet that paid nothing for it: the offer, saying why.
    const stranger = privateKeyToAccount(rail.payerKeys[4]!);
    const other = await wrapFetchWithSIWx(fetch, stranger)(`${base}/signings/quote`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ vin: VIN }),
    });
    expect(other.status).toBe(402);
    expect(unb64(other.headers.get('payment-required')!).error).toMatch(/has not paid/);
    // The paying wallet, for another input: not what it paid for.
    const elsewhere = await wrapFetchWithSIWx(fetch, payer)(`${base}/signings/quote`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ vin: '1M8GDM9AXKP042788' }),
    });
    expect(elsewhere.status).toBe(402);
    expect(await rail.balanceOf(rail.payTo)).toBe(before);
  });
});
