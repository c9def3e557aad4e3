/**
 * A refused Sandbox-Trigger moves no money: on the local x402 rail, for every offer-gated capability of the catalog, a
 * paid request (a valid payment for its offer) with a trigger the capability does not list is refused 400
 * trigger-not-honoured on its route and on its intent's settle route before the payment is read: nothing is
 * verified or settled, the chain does not move, and the authorization stays unused. The stock pay script sends
 * headers (`--header`), so a paying agent can see both answers.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capabilities, catalogTriggers, type Capability } from '@vcs/contract';
import { createPayment, type Rail } from '@vcs/x402-rail';
import { call, modes } from './support/harness.ts';
import { sampleInput, send, WALK_VIN } from './support/capabilityCalls.ts';
import { type MoneyHarness, startPaidService, stopPaidService } from './support/money.ts';
import { runProcess } from './support/run-process.ts';

const ROOT = join(import.meta.dirname, '..');
const PAY_SCRIPT = join(ROOT, 'deploy', 'x402-rail', 'src', 'pay.ts');
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');
const unb64 = (s: string) => JSON.parse(Buffer.from(s, 'base64').toString('utf8'));
const honouredBy = (c: Capability) => c.triggers.map((t) => t.name);
const offerGated = capabilities.filter((c) => c.gate === 'offer');

describe.each(modes())('a refused trigger moves no money (%s)', (mode) => {
  let rail: Rail;
  let m: MoneyHarness;
  let base: string;
  beforeAll(async () => {
    ({ rail, m, base } = await startPaidService(mode, 4));
  }, 120_000);
  afterAll(() => stopPaidService({ rail, m }));

  /** The capability's 402 (anonymous) and a valid v2 payment for it, signed by payer `payer`. */
  async function offerAndPayment(c: Capability, payer: number) {
    const offer = await send(base, c, sampleInput(c));
    expect(offer.status, offer.text).toBe(402);
    const required = unb64(offer.headers.get('payment-required')!);
    const payment = await createPayment(rail.payerKeys[payer]!, required.accepts[0], required.resource);
    return { intentId: offer.json.value.intent.id as string, settle: offer.json.value.settle.path as string, payment };
  }
  const paymentsOf = async (intentId: string) =>
    Number(
      (await m.db.query<{ n: number }>('select count(*)::int as n from payments where intent_id = $1', [intentId]))
        .rows[0]!.n,
    );

  it.each(offerGated.map((c) => [c.name, c] as const))(
    '%s: paid, with a trigger it does not list, on its route and its settle route: 400, nothing verified or settled',
    async (_name, c) => {
      const unlisted = catalogTriggers.find((t) => !honouredBy(c).includes(t))!;
      const { intentId, settle, payment } = await offerAndPayment(c, 0);
      const [payTo, payer] = [await rail.balanceOf(rail.payTo), await rail.balanceOf(rail.payerAddresses[0]!)];
      const headers = { 'payment-signature': b64(payment), 'sandbox-trigger': unlisted };
      for (const r of [
        await send(base, c, sampleInput(c), undefined, headers),
        await call(base, 'POST', settle, { headers }),
      ]) {
        expect(r.status, r.text).toBe(400);
        expect(r.json.value).toMatchObject({
          code: 'trigger-not-honoured',
          trigger: unlisted,
          honoured: honouredBy(c),
        });
        expect(r.headers.get('payment-response')).toBeNull();
      }
      expect(await rail.balanceOf(rail.payTo)).toBe(payTo);
      expect(await rail.balanceOf(rail.payerAddresses[0]!)).toBe(payer);
      expect(await paymentsOf(intentId)).toBe(0);
      expect((await call(base, 'GET', `/intents/${intentId}`)).json.value).toMatchObject({
        status: 'pending',
        executions: 0,
        payment: null,
      });
    },
  );

  it('the authorization a refused request carried stays unused: sent again without the trigger, it pays once', async () => {
    const quote = offerGated.find((c) => c.name === 'signing.quote')!;
    const { payment } = await offerAndPayment(quote, 1);
    const before = await rail.balanceOf(rail.payTo);
    const headers = { 'payment-signature': b64(payment) };
    const refused = await send(base, quote, { vin: WALK_VIN }, undefined, { ...headers, 'sandbox-trigger': 'fail' });
    expect(refused.json.value.code).toBe('trigger-not-honoured');
    const paid = await send(base, quote, { vin: WALK_VIN }, undefined, headers);
    expect(paid.status, paid.text).toBe(200);
    expect(paid.json).toMatchObject({ type: 'OK', meter: { charged: '1.00' } });
    expect((await rail.balanceOf(rail.payTo)) - before).toBe(1_000_000n);
  });

  it("the stock pay script's --header: signing.quote refuses `fail` and nothing moves; signing.pay honours it and charges 0.00", async () => {
    const pay = (path: string, ...args: string[]) =>
      runProcess(
        process.execPath,
        ['--import', 'tsx', PAY_SCRIPT, `${base}${path}`, '--body', JSON.stringify({ vin: WALK_VIN }), ...args],
        { cwd: ROOT, env: { ...process.env, X402_PAYER_KEY: rail.payerKeys[2]! }, timeoutMs: 120_000 },
      );
    const before = await rail.balanceOf(rail.payTo);
    const refused = await pay('/signings/quote', '--header', 'Sandbox-Trigger: fail');
    expect(refused.code, refused.err).toBe(1);
    expect(refused.out).toMatch(/^400 \(no receipt header\)/);
    expect(JSON.parse(refused.out.split('\n')[1]!).value).toMatchObject({ code: 'trigger-not-honoured' });

    const failed = await pay('/signings/pay', '--header', 'Sandbox-Trigger: fail', '--header', 'X-Unused: 1');
    expect(failed.code, failed.err).toBe(1);
    const answer = JSON.parse(failed.out.split('\n')[1]!);
    expect(answer).toMatchObject({ type: 'BLOCKED', value: { code: 'payment-failed' }, meter: { charged: '0.00' } });
    expect(await rail.balanceOf(rail.payTo)).toBe(before);

    const bad = await pay('/signings/quote', '--header', 'no colon here');
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--header takes 'Name: value'/);
  }, 240_000); // three Node start-ups through tsx, each paying on a loaded machine
});
