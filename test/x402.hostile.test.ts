import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPaymentHeader } from 'x402/client';
import { createSigner } from 'x402/types';
import { createPayment, payingFetch, receiptOf, startRail, type Rail } from '@vcs/x402-rail';
import { call as send, mintKey, modes, waitFor } from './support/harness.ts';
import {
  countEvents,
  OffsetClock,
  railSettings,
  settledEventsOf,
  startMoneyHarness,
  type MoneyHarness,
} from './support/money.ts';
import { anvilControl, type AnvilControl } from './support/anvil.ts';
import { startFaultProxy, type FaultProxy } from './support/fault-proxy.ts';

/**
 * x402 payments when the world is hostile: a facilitator that answers `settlement_pending`, is slow, or loses its
 * answer; a chain that mines late (anvil with automine off, a block stamped when the test says); the same payment sent
 * again and again, at once, on another route, after the process settling it was killed. A fault proxy
 * (support/fault-proxy.ts) sits between the service's X402_FACILITATOR_URL and the rail's real facilitator.
 *
 * What must hold throughout: a payment whose outcome is not known is never answered 402 (a stock client would sign
 * again and pay twice) but 503 `payment-pending` with Retry-After; money moves once (the payee's balance on chain);
 * the capability runs once (its events in the outbox); the intent ends settled.
 */
const VIN = '1HGCM82633A004352';
const OTHER_VIN = '1M8GDM9AXKP042788';
/** How long commerce waits for the facilitator here (X402_FACILITATOR_TIMEOUT_MS). */
const FACILITATOR_WAIT_MS = 1_500;
const PRICE = 1_000_000n; // signing.quote: 1.00 USD flat, in the token's 6 decimals
const HASH = /^0x[0-9a-f]{64}$/;
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');
const unb64 = (s: string) => JSON.parse(Buffer.from(s, 'base64').toString('utf8'));
type Answer = Awaited<ReturnType<typeof send>>;

/** A refusal this suite met: the request that met it and the answer, to follow the next requests it names. */
interface Refusal {
  base: string;
  method: 'GET' | 'POST';
  path: string;
  key?: string;
  body?: unknown;
  headers: Record<string, string>;
  answer: Answer;
}
const refusals: Refusal[] = [];
/**
 * Every request of this suite, its refusals kept for the last test: a BLOCKED answer, or a 402 to a request that
 * carried a payment (a refused payment answered with a new offer; an unpaid call's OFFER is an offer, not a refusal).
 */
async function call(base: string, method: 'GET' | 'POST', path: string, opts: Parameters<typeof send>[3] = {}) {
  const answer = await send(base, method, path, opts);
  const paid = Object.keys(opts.headers ?? {}).some((h) => /^(payment-signature|x-payment)$/i.test(h));
  if ((answer.status === 402 && paid) || answer.json?.type === 'BLOCKED')
    refusals.push({ base, method, path, key: opts.key, body: opts.body, headers: { ...opts.headers }, answer });
  return answer;
}

/** The EIP-3009 authorization a payment (v2 payload, or a v1 X-PAYMENT header) carries. */
const authOf = (p: unknown): { from: `0x${string}`; nonce: `0x${string}`; validBefore: string } =>
  (typeof p === 'string' ? unb64(p) : (p as any)).payload.authorization;

/** A 503 that tells the caller when to come back. */
function expectRetryable(a: Answer, what = '') {
  expect(a.status, `${what} ${a.text}`).toBe(503);
  expect(Number(a.headers.get('retry-after')), `${what} Retry-After on ${a.text}`).toBeGreaterThan(0);
}
function expectPaymentPending(a: Answer, what = '') {
  expectRetryable(a, what);
  expect(a.json?.value?.code, `${what} ${a.text}`).toBe('payment-pending');
}

/** Send until the answer is not a 503 (as Retry-After says, polled); every answer seen, the last one last. */
async function untilAnswered(send: () => Promise<Answer>, timeoutMs = 20_000) {
  const seen: Answer[] = [];
  try {
    await waitFor(
      async () => {
        const a = await send();
        seen.push(a);
        return a.status !== 503;
      },
      timeoutMs,
      250,
    );
  } catch {
    /* the last answer says why */
  }
  return { last: seen.at(-1)!, seen, statuses: seen.map((a) => a.status) };
}

describe.each(modes())('x402 under hostile conditions (%s)', (mode) => {
  let rail: Rail;
  let proxy: FaultProxy;
  let chain: AnvilControl;
  let m: MoneyHarness;
  let base: string;
  let env: Record<string, string>;
  /** Embedded: the service's clock, moved by the test; distributed: real time (waited for by polling). */
  const clock = mode === 'embedded' ? new OffsetClock() : undefined;
  let payers = 0;
  const nextPayer = () => payers++;

  beforeAll(async () => {
    rail = await startRail({ payers: 30 });
    proxy = await startFaultProxy({ target: rail.facilitatorUrl, rpcUrl: rail.rpcUrl });
    chain = anvilControl(rail.rpcUrl);
    env = {
      ...railSettings(rail),
      X402_FACILITATOR_URL: proxy.url, // the rail's facilitator, behind the fault proxy
      // Commerce waits 1.5 s for a settle answer (5 s by default): each fault below is that wait, not the default's.
      X402_FACILITATOR_TIMEOUT_MS: String(FACILITATOR_WAIT_MS),
      // The gateway answers the first 503 it gets rather than holding the request (x402.fair.test.ts holds it): each
      // fault below is seen as its caller's first answer.
      X402_PAYMENT_HOLD_MS: '0',
    };
    m = await startMoneyHarness(mode, env, { clock });
    base = m.h.baseUrl;
  }, 180_000);
  afterEach(async () => {
    await chain?.restore(); // a test that failed half-way leaves the chain mining again
  });
  afterAll(async () => {
    await m?.stop();
    await proxy?.close();
    await rail?.stop();
  });

  /** The 402 for signing.quote, and a v2 payment for its one requirement (optionally changed) signed by `payer`. */
  async function offerAndPayment(payer: number, change: Record<string, unknown> = {}, key?: string, at = base) {
    const offer = await call(at, 'POST', '/signings/quote', { key, body: { vin: VIN } });
    expect(offer.status, offer.text).toBe(402);
    const required = unb64(offer.headers.get('payment-required')!);
    const payment = await createPayment(
      rail.payerKeys[payer]!,
      { ...required.accepts[0], ...change },
      required.resource,
    );
    return { intentId: offer.json.value.intent.id as string, payment, nonce: authOf(payment).nonce };
  }
  /**
   * A keyed payment of a fresh payer whose transfer the facilitator made and whose answer it holds: the paying request
   * (`first`) waits on the settlement it will never hear about.
   */
  async function settledButUnheard() {
    const { key, account } = await mintKey(base);
    const p = nextPayer();
    const { intentId, payment, nonce } = await offerAndPayment(p, {}, key);
    const before = await rail.balanceOf(rail.payTo);
    const held = proxy.next({ kind: 'hold' }, nonce);
    const first = pay(payment, key);
    expect((await held).upstream?.body?.success, 'the facilitator settled it').toBe(true);
    return { key, account, p, intentId, payment, before, first };
  }
  const pay = (payment: unknown, key?: string, at = base) =>
    call(at, 'POST', '/signings/quote', { key, body: { vin: VIN }, headers: { 'payment-signature': b64(payment) } });
  const intent = async (id: string, key?: string, at = base) =>
    (await call(at, 'GET', `/intents/${id}`, { key })).json?.value;
  /** The service's clock past `atMs`: moved (embedded), or waited for (distributed). */
  async function passServiceTime(atMs: number) {
    if (clock) clock.advance(Math.max(0, atMs - clock.now().getTime()));
    else await waitFor(async () => Date.now() > atMs, Math.max(0, atMs - Date.now()) + 5_000, 100);
  }
  /** A block stamped at or before `notAfter` (seconds), and never before the latest. */
  const stampNoLaterThan = async (notAfter: number) =>
    Math.max((await chain.latestTimestamp()) + 1, Math.min(Math.floor(Date.now() / 1000), notAfter));

  it('1a. settlement_pending (broadcast, not mined): 503 payment-pending with Retry-After, never 402; once mined, the same request answers 200; paid once, run once', async () => {
    const { key, account } = await mintKey(base);
    const { intentId, payment, nonce } = await offerAndPayment(nextPayer(), {}, key);
    const before = await rail.balanceOf(rail.payTo);
    await chain.automine(false);
    const handled = proxy.next({ kind: 'settlement_pending' }, nonce);
    const first = await pay(payment, key);
    expect((await handled).transaction, 'the transfer waits in the pool').toMatch(HASH);
    expectPaymentPending(first, 'while the transfer is not mined:');
    await chain.mine();
    await chain.automine(true);
    const done = await untilAnswered(() => pay(payment, key));
    expect(done.last.status, done.last.text).toBe(200);
    expect(done.statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
    expect(done.last.json.meter.payment.transaction).toMatch(HASH);
    expect((await rail.balanceOf(rail.payTo)) - before).toBe(PRICE);
    expect(await countEvents(m.db, 'Signing.quoted@1', account)).toBe(1);
    expect(await intent(intentId, key)).toMatchObject({ status: 'settled', executions: 1 });
  });

  it('1b. settlement_pending and no retry: once the block is mined the reconciler settles the intent on its own; paid once, run once', async () => {
    const { key, account } = await mintKey(base);
    const { intentId, payment, nonce } = await offerAndPayment(nextPayer(), {}, key);
    const before = await rail.balanceOf(rail.payTo);
    await chain.automine(false);
    const handled = proxy.next({ kind: 'settlement_pending' }, nonce);
    const first = await pay(payment, key);
    await handled;
    expectPaymentPending(first);
    await chain.mine();
    await chain.automine(true);
    await waitFor(async () => (await intent(intentId, key))?.status === 'settled', 20_000, 200).catch(() => {});
    expect(await intent(intentId, key)).toMatchObject({ status: 'settled', executions: 1 });
    expect((await rail.balanceOf(rail.payTo)) - before).toBe(PRICE);
    expect(await countEvents(m.db, 'Signing.quoted@1', account)).toBe(1);
  });

  it('2. the transfer mined after validBefore by the service clock, in a block stamped before it: 503 payment-pending until the block is seen, then 200; paid once', async () => {
    const { key, account } = await mintKey(base);
    const { intentId, payment, nonce } = await offerAndPayment(nextPayer(), { maxTimeoutSeconds: 10 }, key);
    const validBefore = Number(authOf(payment).validBefore);
    const before = await rail.balanceOf(rail.payTo);
    await chain.automine(false);
    // The facilitator broadcasts the transfer and waits for a block that does not come.
    const first = await pay(payment, key);
    expect(first.status, first.text).toBe(503);
    expect(await chain.pendingFor(nonce), 'the transfer waits in the pool').toBeTruthy();
    await passServiceTime(validBefore * 1000 + 1_000);
    const late = await pay(payment, key);
    expectPaymentPending(late, 'validBefore passed, the transfer not mined yet:');
    const stamp = await stampNoLaterThan(validBefore - 2);
    expect(stamp).toBeLessThan(validBefore);
    await chain.mine(stamp);
    await chain.automine(true);
    const done = await untilAnswered(() => pay(payment, key));
    expect(done.last.status, done.last.text).toBe(200);
    expect(done.statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
    expect((await rail.balanceOf(rail.payTo)) - before).toBe(PRICE);
    expect(await countEvents(m.db, 'Signing.quoted@1', account)).toBe(1);
    expect(await intent(intentId, key)).toMatchObject({ status: 'settled', executions: 1 });
  });

  it('3. the same header retried while its payment is open, inside the last 6 s before validBefore: never payment-expired (503 payment-pending or 200)', async () => {
    const { key, account } = await mintKey(base);
    // 11 s by the service's clock (embedded: ahead of the payer's by what earlier tests moved it).
    const ahead = clock ? Math.ceil(Math.max(0, clock.now().getTime() - Date.now()) / 1000) : 0;
    const { intentId, payment, nonce } = await offerAndPayment(nextPayer(), { maxTimeoutSeconds: 11 + ahead }, key);
    const validBefore = Number(authOf(payment).validBefore);
    const before = await rail.balanceOf(rail.payTo);
    await chain.automine(false);
    const first = await pay(payment, key);
    expect(first.status, first.text).toBe(503);
    expect(await chain.pendingFor(nonce), 'the transfer waits in the pool').toBeTruthy();
    await passServiceTime(validBefore * 1000 - 4_000); // 4 s left: a new payment would be refused, a bound one not
    const again = await pay(payment, key);
    expect(again.json?.value?.code, again.text).not.toBe('payment-expired');
    expect([200, 503], again.text).toContain(again.status);
    if (again.status === 503) expectPaymentPending(again);
    await chain.mine(await stampNoLaterThan(validBefore - 1));
    await chain.automine(true);
    const done = await untilAnswered(() => pay(payment, key));
    expect(done.last.status, done.last.text).toBe(200);
    expect((await rail.balanceOf(rail.payTo)) - before).toBe(PRICE);
    expect(await countEvents(m.db, 'Signing.quoted@1', account)).toBe(1);
    expect(await intent(intentId, key)).toMatchObject({ status: 'settled', executions: 1 });
  });

  it('4. v1 X-PAYMENT retried after a 503 (the facilitator slower than the gateway): the retry reaches the intent it pays, never 409, never a second transfer', async () => {
    const { key, account } = await mintKey(base);
    const offer = await call(base, 'POST', '/signings/quote', { key, body: { vin: VIN } });
    expect(offer.status).toBe(402);
    const header = await createPaymentHeader(
      (await createSigner('base-sepolia', rail.payerKeys[nextPayer()]!)) as never,
      1,
      offer.json.accepts[0],
    );
    const before = await rail.balanceOf(rail.payTo);
    const payV1 = () =>
      call(base, 'POST', '/signings/quote', { key, body: { vin: VIN }, headers: { 'x-payment': header } });
    // Held longer than commerce waits for the facilitator: the first answer is a 503, and the transfer lands after it.
    const handled = proxy.next({ kind: 'slow', ms: FACILITATOR_WAIT_MS + 1_000 }, authOf(header).nonce);
    const first = await payV1();
    expectRetryable(first, 'the facilitator slower than the service waits:');
    await handled; // forwarded late (the reconciler may have settled the same authorization first: once either way)
    await waitFor(async () => rail.authorizationUsed(authOf(header).from, authOf(header).nonce), 10_000);
    const done = await untilAnswered(payV1);
    expect(
      done.statuses.filter((s) => s !== 200 && s !== 503),
      done.last.text,
    ).toEqual([]);
    expect(done.last.status, done.last.text).toBe(200);
    expect(unb64(done.last.headers.get('x-payment-response')!)).toMatchObject({
      success: true,
      network: 'base-sepolia',
    });
    expect((await rail.balanceOf(rail.payTo)) - before).toBe(PRICE);
    expect(await countEvents(m.db, 'Signing.quoted@1', account)).toBe(1);
    // A v1 payment cannot name the offer it was signed from (v1 payloads carry no requirement): its first
    // presentation makes the route's intent, and every retry reaches that same one.
    const paidIntent = done.last.json.meter.payment.intentId as string;
    expect(done.last.headers.get('intent-id')).toBe(paidIntent);
    expect(await intent(paidIntent, key)).toMatchObject({ status: 'settled', executions: 1 });
  });

  it("5. intent A's payment sent on another capability's route, or with another body: 409 payment-wrong-resource, nothing moves, nothing runs; A stays payable", async () => {
    const { key, account } = await mintKey(base);
    const { intentId, payment } = await offerAndPayment(nextPayer(), {}, key);
    const before = await rail.balanceOf(rail.payTo);
    const elsewhere: [string, string, unknown][] = [
      ['POST /signings/fee', '/signings/fee', { vin: VIN }],
      ['POST /total-loss/payoff-coordinate', '/total-loss/payoff-coordinate', { vin: VIN }],
      ['POST /signings/quote with another body', '/signings/quote', { vin: OTHER_VIN }],
    ];
    for (const [what, path, body] of elsewhere) {
      const r = await call(base, 'POST', path, { key, body, headers: { 'payment-signature': b64(payment) } });
      expect(r.status, `${what}: ${r.text}`).toBe(409);
      expect(r.json.value.code, what).toBe('payment-wrong-resource');
    }
    expect(await rail.balanceOf(rail.payTo)).toBe(before);
    expect(await intent(intentId, key)).toMatchObject({ status: 'pending', executions: 0 });
    for (const event of ['Signing.quoted@1', 'Signing.feeCharged@1', 'TotalLoss.payoffCoordinated@1'])
      expect(await countEvents(m.db, event, account), event).toBe(0);
    // The payment still pays what it was signed for, once.
    const own = await pay(payment, key);
    expect(own.status, own.text).toBe(200);
    expect((await rail.balanceOf(rail.payTo)) - before).toBe(PRICE);
    expect(await countEvents(m.db, 'Signing.quoted@1', account)).toBe(1);
  });

  it('6. an offer made without a key, paid with one, finished by the reconciler: usage counts the settlement and its charge, and one call (503 retries are not calls); embedded: it survives a restart', async () => {
    const dir = mode === 'embedded' ? await mkdtemp(join(tmpdir(), 'vcs-x402-usage-')) : undefined;
    let svc = dir ? await startMoneyHarness('embedded', env, { pgliteDir: dir }) : m;
    try {
      const at = svc.h.baseUrl;
      const { key } = await mintKey(at);
      const { intentId, payment, nonce } = await offerAndPayment(nextPayer(), {}, undefined, at);
      const before = await rail.balanceOf(rail.payTo);
      await chain.automine(false);
      const handled = proxy.next({ kind: 'settlement_pending' }, nonce);
      const first = await pay(payment, key, at);
      await handled;
      expectPaymentPending(first);
      const retry = await pay(payment, key, at); // still not mined
      expectRetryable(retry, 'a retry while the transfer is not mined:');
      await chain.mine();
      await chain.automine(true);
      // Nobody comes back: the reconciler finishes it.
      await waitFor(async () => (await intent(intentId, key, at))?.status === 'settled', 20_000, 200).catch(() => {});
      expect(await intent(intentId, key, at)).toMatchObject({ status: 'settled', executions: 1 });
      expect((await rail.balanceOf(rail.payTo)) - before).toBe(PRICE);
      const usage = async () => (await call(at, 'GET', '/keys/me', { key })).json.usage;
      await waitFor(async () => (await usage())?.settlements === 1, 10_000).catch(() => {});
      const expected = {
        calls: 1,
        settlements: 1,
        charged: '1.00',
        byCapability: { 'signing.quote': { calls: 1, settlements: 1, charged: '1.00' } },
      };
      expect(await usage()).toMatchObject(expected);
      if (dir) {
        await svc.stop();
        svc = await startMoneyHarness('embedded', env, { pgliteDir: dir });
        const again = await call(svc.h.baseUrl, 'GET', '/keys/me', { key });
        expect(again.status, again.text).toBe(200);
        expect(again.json.usage, 'after a restart on the same data directory').toMatchObject(expected);
      }
    } finally {
      if (dir) {
        await svc.stop().catch(() => {});
        await rm(dir, { recursive: true, force: true });
      }
    }
  });

  it("7. the facilitator's answer lost after the chain took the transfer, with another payment read just before: the receipt and GET /intents carry the transaction hash", async () => {
    const { key } = await mintKey(base);
    // Two in a row: the second is read within 4 s of the first.
    const payments = [await offerAndPayment(nextPayer(), {}, key), await offerAndPayment(nextPayer(), {}, key)];
    for (const [i, { intentId, payment }] of payments.entries()) {
      const lost = rail.facilitator.loseNextSettleAnswer();
      const first = await pay(payment, key);
      expect((await lost).success, `payment ${i}: settled on chain`).toBe(true);
      const done = first.status === 200 ? first : (await untilAnswered(() => pay(payment, key))).last;
      expect(done.status, `payment ${i}: ${done.text}`).toBe(200);
      const receipt = unb64(done.headers.get('payment-response')!);
      expect(receipt.transaction, `payment ${i}: PAYMENT-RESPONSE`).toMatch(HASH);
      expect(done.json.meter.payment.transaction, `payment ${i}: meter`).toBe(receipt.transaction);
      expect((await intent(intentId, key)).payment?.transaction, `payment ${i}: GET /intents`).toBe(
        receipt.transaction,
      );
    }
  });

  it.each([
    ['v2 PAYMENT-SIGNATURE with a key', 'v2', true],
    ['v2 PAYMENT-SIGNATURE without a key', 'v2', false],
    ['v1 X-PAYMENT with a key', 'v1', true],
  ] as const)(
    '8. one authorisation sent 10 times at once (%s): no 500; 200s, typed 503s with Retry-After or 409s; paid once, run once, settled',
    async (_what, version, withKey) => {
      const { key, account } = await mintKey(base);
      const k = withKey ? key : undefined;
      const offer = await call(base, 'POST', '/signings/quote', { key: k, body: { vin: VIN } });
      expect(offer.status, offer.text).toBe(402);
      const intentId = offer.json.value.intent.id as string;
      const signer = rail.payerKeys[nextPayer()]!;
      const headers: Record<string, string> =
        version === 'v2'
          ? {
              'payment-signature': b64(
                await createPayment(
                  signer,
                  unb64(offer.headers.get('payment-required')!).accepts[0],
                  unb64(offer.headers.get('payment-required')!).resource,
                ),
              ),
            }
          : {
              'x-payment': await createPaymentHeader(
                (await createSigner('base-sepolia', signer)) as never,
                1,
                offer.json.accepts[0],
              ),
            };
      const before = await rail.balanceOf(rail.payTo);
      const answers = await Promise.all(
        Array.from({ length: 10 }, () =>
          call(base, 'POST', '/signings/quote', { key: k, body: { vin: VIN }, headers }),
        ),
      );
      const statuses = answers.map((a) => a.status);
      const odd = answers.filter((a) => ![200, 409, 503].includes(a.status));
      expect(
        odd.map((a) => `${a.status} ${a.text.slice(0, 300)}`),
        `statuses ${statuses.join(',')}`,
      ).toEqual([]);
      expect(statuses).toContain(200);
      for (const a of answers) if (a.status === 503) expectRetryable(a);
      // The intent the payment paid: the offer's (v2 names it; v1 pays the intent its authorization is bound to).
      const paidIntent = answers.find((a) => a.status === 200)!.headers.get('intent-id') ?? intentId;
      await waitFor(async () => (await intent(paidIntent, k))?.status === 'settled', 20_000, 200).catch(() => {});
      expect(await intent(paidIntent, k)).toMatchObject({ status: 'settled', executions: 1 });
      expect((await rail.balanceOf(rail.payTo)) - before).toBe(PRICE);
      expect(await settledEventsOf(m.db, paidIntent)).toBe(1);
      if (withKey) expect(await countEvents(m.db, 'Signing.quoted@1', account)).toBe(1);
    },
  );

  it("10. an authorization that expires unused while the facilitator fails: 402 payment-expired with a new offer for the same call in PAYMENT-REQUIRED; a new payment for the dead offer is answered with a new offer, which the stock client (@x402/fetch) pays once, on the route and on the dead intent's settle route", async () => {
    const p = nextPayer();
    // 12 s by the service's clock (embedded: ahead of the payer's by what earlier tests moved it).
    const ahead = clock ? Math.ceil(Math.max(0, clock.now().getTime() - Date.now()) / 1000) : 0;
    const { intentId, payment, nonce } = await offerAndPayment(p, { maxTimeoutSeconds: 12 + ahead });
    const validBefore = Number(authOf(payment).validBefore);
    const before = await rail.balanceOf(rail.payTo);
    // The facilitator fails the settle (nothing broadcast); before anyone sends it again, the chain passes validBefore.
    const failed = proxy.next({ kind: 'fail', status: 502 }, nonce);
    expectPaymentPending(await pay(payment));
    await failed;
    await chain.mine(Math.max((await chain.latestTimestamp()) + 1, validBefore + 1));
    const expired = (await untilAnswered(() => pay(payment))).last;
    expect(expired.status, expired.text).toBe(402);
    expect(expired.json.value).toMatchObject({ code: 'payment-expired', intent: { id: intentId, status: 'failed' } });
    const offered = unb64(expired.headers.get('payment-required')!);
    const fresh = offered.accepts[0].extra.intentId as string;
    expect(fresh).not.toBe(intentId);
    expect(offered.error).toBe('invalid_exact_evm_payload_authorization_valid_before');
    expect(expired.json.value.offer.intent).toMatchObject({
      id: fresh,
      status: 'pending',
      capability: 'signing.quote',
    });
    expect(expired.json.value.next).toEqual({ method: 'POST', path: `/intents/${fresh}/settle` });
    expect(expired.json.accepts[0].extra.intentId, "v1's body offers the same").toBe(fresh);
    expect(await intent(fresh)).toMatchObject({ status: 'pending', capability: 'signing.quote' });

    // A new payment signed for the dead offer: a new offer for the same capability and input, never its stored 402.
    const dead = { ...(payment as any).accepted, maxTimeoutSeconds: 900 };
    const stale = await createPayment(rail.payerKeys[p]!, dead, {
      url: `${base}/signings/quote`,
      description: '',
      mimeType: 'application/json',
    });
    const again = await pay(stale);
    expect(again.status, again.text).toBe(402);
    expect(again.json.type).toBe('OFFER');
    const reoffered = unb64(again.headers.get('payment-required')!).accepts[0].extra.intentId as string;
    expect(reoffered).not.toBe(intentId);
    expect(again.json.value.intent.id).toBe(reoffered);
    expect(again.json.value.message).toContain(`intent ${intentId}`);

    // The stock client, whose first request carries the dead offer's payment (as a client that kept it would send):
    // it pays the new offer it is answered with, once, and gets its answer — on the route, and on the settle route.
    for (const at of ['/signings/quote', `/intents/${intentId}/settle`]) {
      const staleAgain = await createPayment(rail.payerKeys[p]!, dead, {
        url: `${base}${at}`,
        description: '',
        mimeType: 'application/json',
      });
      const sent: string[] = [];
      let first = true;
      const carrying: typeof fetch = async (input, init) => {
        const r = new Request(input, init);
        if (first) r.headers.set('payment-signature', b64(staleAgain));
        else sent.push(r.headers.get('payment-signature') ?? '');
        first = false;
        return fetch(r);
      };
      const paid = await payingFetch(rail.payerKeys[p]!, { fetch: carrying })(`${base}${at}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(at === '/signings/quote' ? { vin: VIN } : {}),
      });
      const text = await paid.text();
      expect(paid.status, `${at}: ${text}`).toBe(200);
      expect(sent, `${at}: one payment after the 402`).toHaveLength(1);
      expect(JSON.parse(text)).toMatchObject({ type: 'OK', meter: { charged: '1.00' } });
      expect(receiptOf(paid)).toMatchObject({ success: true });
      expect(await rail.authorizationUsed(authOf(staleAgain).from, authOf(staleAgain).nonce)).toBe(false);
    }
    expect(await rail.authorizationUsed(authOf(payment).from, nonce), 'the expired one never moved').toBe(false);
    expect((await rail.balanceOf(rail.payTo)) - before, 'paid once per answer').toBe(2n * PRICE);
  });

  it.runIf(mode === 'distributed')(
    "8b. the gateway's own 503 pillar-unavailable carries Retry-After too",
    async () => {
      await m.h.kill!('services-pillar');
      try {
        const down = await call(base, 'GET', `/signings/status?vin=${VIN}`);
        expect(down.json?.value?.code, down.text).toBe('pillar-unavailable');
        expectRetryable(down, 'pillar-unavailable:');
      } finally {
        await m.h.start!('services-pillar');
        await waitFor(async () => (await call(base, 'GET', `/signings/status?vin=${VIN}`)).status === 200, 60_000);
      }
    },
    90_000,
  );

  it.runIf(mode === 'distributed')(
    '9. commerce killed -9 while the facilitator settled: after the restart the same header answers 200 within 10 s (the chain says the authorisation is used)',
    async () => {
      const { key, account, p, intentId, payment, before, first } = await settledButUnheard();
      expect(await rail.authorizationUsed(rail.payerAddresses[p]!, authOf(payment).nonce)).toBe(true);
      await m.h.kill!('commerce');
      await first.catch(() => undefined);
      await m.h.start!('commerce');
      await waitFor(async () => (await call(base, 'POST', '/keys')).status === 200, 60_000, 200);
      const t0 = Date.now();
      const done = await untilAnswered(() => pay(payment, key), 10_000);
      const took = Date.now() - t0;
      expect(done.last.status, done.last.text).toBe(200);
      expect(took).toBeLessThan(10_000);
      expect((await rail.balanceOf(rail.payTo)) - before).toBe(PRICE);
      expect(await countEvents(m.db, 'Signing.quoted@1', account)).toBe(1);
      expect(await intent(intentId, key)).toMatchObject({ status: 'settled', executions: 1 });
    },
    120_000,
  );

  it.runIf(mode === 'distributed')(
    "9b. commerce paused (SIGSTOP) between the capability's answer and the settlement's: the caller's 503 is not a charge; resumed, the same wallet's next payment gets the answer and moves nothing",
    async () => {
      // Commerce has run the capability and waits on the settlement when it is paused.
      const { key, account, p, intentId, before, first } = await settledButUnheard();
      const [commerce] = m.h.procs!.get('commerce')!;
      commerce!.kill('SIGSTOP');
      try {
        const answered = await first;
        expect(answered.status, answered.text).toBe(503);
        expect(answered.json?.value?.code, answered.text).toMatch(/^(payment-pending|pillar-unavailable)$/);
      } finally {
        commerce!.kill('SIGCONT');
      }
      // A stock client does not resend that payment: it asks again, gets a new 402 and signs a new authorisation.
      const again = await offerAndPayment(p, {}, key);
      const done = await untilAnswered(() => pay(again.payment, key), 30_000);
      expect(done.last.status, done.last.text).toBe(200);
      expect((await rail.balanceOf(rail.payTo)) - before, 'paid once').toBe(PRICE);
      expect(await rail.authorizationUsed(rail.payerAddresses[p]!, again.nonce), 'the new one never sent').toBe(false);
      expect(await countEvents(m.db, 'Signing.quoted@1', account)).toBe(1);
      expect(await intent(intentId, key)).toMatchObject({ status: 'settled', executions: 1 });
    },
    120_000,
  );

  it('11. every refusal this suite met names next and poll requests that do not answer the same refusal again', async () => {
    const payerKeyOf = (headers: Record<string, string>) => {
      const sent = headers['payment-signature'] ?? headers['x-payment'];
      if (!sent) return rail.payerKeys[0]!;
      const from = authOf(sent).from.toLowerCase();
      return rail.payerKeys[rail.payerAddresses.findIndex((a) => a.toLowerCase() === from)] ?? rail.payerKeys[0]!;
    };
    const seen = refusals.filter((r) => r.base === base);
    expect(seen.length, 'refusals met').toBeGreaterThan(0);
    // Each refusal's links, as it names them (a 503 of a pillar that did not answer names none: send the same again).
    const followed: string[] = [];
    for (const r of seen) {
      const value = r.answer.json?.value ?? {};
      const links = [value.next, value.poll, value.handoff?.poll].filter(
        (l): l is { method: 'GET' | 'POST'; path: string } => typeof l?.path === 'string',
      );
      const was = `${r.answer.status} ${value.code}`;
      for (const link of links) {
        // As the refusal says: with the same key; a 402's offer paid with a new payment (PAYMENT-REQUIRED), else the
        // same payment again; the same request's body when the link is that request.
        const headers: Record<string, string> = {};
        const required = r.answer.headers.get('payment-required');
        if (required) {
          const offer = unb64(required);
          headers['payment-signature'] = b64(
            await createPayment(payerKeyOf(r.headers), offer.accepts[0], offer.resource),
          );
        } else for (const h of ['payment-signature', 'x-payment']) if (r.headers[h]) headers[h] = r.headers[h]!;
        const same = r.path.split('?')[0] === link.path;
        const path = same ? r.path : link.path;
        const body = link.method === 'POST' ? (same ? r.body : {}) : undefined;
        const { last } = await untilAnswered(
          () => send(base, link.method, path, { key: r.key, body, headers }),
          15_000,
        );
        const now = `${last.status} ${last.json?.value?.code}`;
        followed.push(`${was} → ${link.method} ${link.path} → ${now}`);
        expect(
          now,
          `${was} on ${r.method} ${r.path}: its ${link.method} ${link.path} answers the same (${last.text.slice(0, 300)})`,
        ).not.toBe(was);
      }
    }
    expect(followed.length, 'next requests followed').toBeGreaterThan(0);
    console.log(
      `followed ${followed.length} next requests:\n${[...new Set(followed.map((f) => f.replace(/pi_[\w-]+/g, 'pi_…')))].join('\n')}`,
    );
  }, 300_000);
});
