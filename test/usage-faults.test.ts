import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPayment, startRail, type Rail } from '@vcs/x402-rail';
import { call, mintKey, serversFor, waitFor } from './support/harness.ts';
import { countEvents, railSettings, settledEventsOf, startMoneyHarness, type MoneyHarness } from './support/money.ts';
import { startFaultProxy, type FaultProxy } from './support/fault-proxy.ts';

/**
 * Usage counted with the money, under kill -9 of real processes (distributed): commerce killed between two steps of
 * a paid call — while the capability runs (bound, not executed), and while the facilitator settles (charging, not
 * collected), and at points spread over a paid call from its request to its answer. After the restart and the
 * reconciler, the account's usage (GET /keys/me) is exactly what moved on chain: one settlement, its price collected,
 * once.
 */
const VIN = '1HGCM82633A004352';
const PRICE = 1_000_000n; // signing.quote: 1.00 USD flat, in the token's 6 decimals
/** Where, as a fraction of an unkilled paid call's time, commerce is killed in the sweep: early to late. */
const KILL_POINTS = [0.02, 0.1, 0.2, 0.3, 0.45, 0.6, 0.75, 0.9];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');
const unb64 = (s: string) => JSON.parse(Buffer.from(s, 'base64').toString('utf8'));

describe.runIf(serversFor('usage faults suite'))(
  'usage counted with the money under kill -9 (distributed: needs NATS_URL, DATABASE_URL, REDIS_URL)',
  () => {
    let rail: Rail;
    let proxy: FaultProxy;
    let m: MoneyHarness;
    let base: string;
    let payers = 0;

    beforeAll(async () => {
      rail = await startRail({ payers: 4 + KILL_POINTS.length + 2 });
      proxy = await startFaultProxy({ target: rail.facilitatorUrl, rpcUrl: rail.rpcUrl });
      m = await startMoneyHarness('distributed', {
        ...railSettings(rail),
        X402_FACILITATOR_URL: proxy.url,
        X402_FACILITATOR_TIMEOUT_MS: '1500',
        // The paying request is answered at its first 503: the kill meets a request nobody retries.
        X402_PAYMENT_HOLD_MS: '0',
      });
      base = m.h.baseUrl;
    }, 180_000);
    afterAll(async () => {
      await m?.stop();
      await proxy?.close();
      await rail?.stop();
    });

    /** A keyed account's paid signing.quote, sent (not awaited), with its intent and the payee's balance before. */
    async function paying() {
      const { key, account } = await mintKey(base);
      const offer = await call(base, 'POST', '/signings/quote', { key, body: { vin: VIN } });
      expect(offer.status, offer.text).toBe(402);
      const required = unb64(offer.headers.get('payment-required')!);
      const payment = await createPayment(rail.payerKeys[payers++]!, required.accepts[0], required.resource);
      const before = await rail.balanceOf(rail.payTo);
      return { key, account, intentId: offer.json.value.intent.id as string, payment, before };
    }
    const send = (key: string, payment: unknown) =>
      call(base, 'POST', '/signings/quote', {
        key,
        body: { vin: VIN },
        headers: { 'payment-signature': b64(payment) },
      }).catch(() => undefined);
    const restartCommerce = async () => {
      await m.h.kill!('commerce', 'SIGKILL');
      await m.h.start!('commerce');
      await waitFor(async () => (await call(base, 'POST', '/keys')).status === 200, 60_000, 200);
    };
    /** After the reconciler: the intent settled once, usage as the chain says. */
    async function expectUsageAsOnChain(p: Awaited<ReturnType<typeof paying>>) {
      await waitFor(
        async () =>
          (await call(base, 'GET', `/intents/${p.intentId}`, { key: p.key })).json?.value?.status === 'settled',
        60_000,
        250,
      );
      const moved = (await rail.balanceOf(rail.payTo)) - p.before;
      expect(moved).toBe(PRICE);
      expect(await settledEventsOf(m.db, p.intentId)).toBe(1);
      expect(await countEvents(m.db, 'Signing.quoted@1', p.account)).toBe(1);
      const me = await call(base, 'GET', '/keys/me', { key: p.key });
      expect(me.status, me.text).toBe(200);
      expect(me.json.usage).toMatchObject({
        settlements: 1,
        charged: '1.00',
        byCapability: { 'signing.quote': { settlements: 1, charged: '1.00' } },
      });
    }

    it('killed while the capability runs (bound, not yet executed): usage is what moved on chain', async () => {
      const p = await paying();
      // The capability's pillar paused: the paid call is bound and waits on its execution when commerce is killed.
      const [pillar] = m.h.procs!.get('services-pillar')!;
      pillar!.kill('SIGSTOP');
      const first = send(p.key, p.payment);
      try {
        await waitFor(
          async () =>
            ((await m.db.query('select 1 from payments where intent_id = $1', [p.intentId])).rows.length ?? 0) > 0,
          20_000,
          50,
        );
        await restartCommerce();
      } finally {
        pillar!.kill('SIGCONT');
      }
      await first;
      await expectUsageAsOnChain(p);
    }, 180_000);

    it('killed while the facilitator settles (charging, not yet collected): usage is what moved on chain', async () => {
      const p = await paying();
      const nonce = (p.payment.payload as { authorization: { nonce: string } }).authorization.nonce;
      const held = proxy.next({ kind: 'hold' }, nonce); // the transfer is made; its answer never reaches commerce
      const first = send(p.key, p.payment);
      expect((await held).upstream?.body?.success, 'the facilitator settled it').toBe(true);
      await restartCommerce();
      await first;
      await expectUsageAsOnChain(p);
    }, 180_000);

    it('killed at points spread over a paid call, each payment sent again by its client: every intent paid once, usage as on chain', async () => {
      const before = await rail.balanceOf(rail.payTo);
      // One paid call unkilled, then a second timed (the first pays for what a process does once).
      const paid = [await paying(), await paying()];
      expect((await send(paid[0]!.key, paid[0]!.payment))?.status).toBe(200);
      const startedAt = Date.now();
      expect((await send(paid[1]!.key, paid[1]!.payment))?.status).toBe(200);
      const span = Date.now() - startedAt;
      /** Where the paid call was when it was cut: its intent's and its payment's states (none: not yet bound). */
      const stepOf = async (intentId: string) => {
        const { rows } = await m.db.query(
          `select i.status as intent, p.status as payment from intents i
           left join payments p on p.intent_id = i.id where i.id = $1`,
          [intentId],
        );
        return `${rows[0]?.intent}/${rows[0]?.payment ?? 'none'}`;
      };
      const met: string[] = [];
      for (const at of KILL_POINTS) {
        const p = await paying();
        paid.push(p);
        const cut = send(p.key, p.payment);
        await sleep(Math.round(span * at));
        met.push(await stepOf(p.intentId));
        await restartCommerce();
        await cut;
        // The stock client's way: the same payment again until it is answered with what it paid for.
        await waitFor(async () => (await send(p.key, p.payment))?.status === 200, 60_000, 500);
      }
      for (const p of paid) {
        expect((await call(base, 'GET', `/intents/${p.intentId}`, { key: p.key })).json?.value?.status).toBe('settled');
        expect(await settledEventsOf(m.db, p.intentId)).toBe(1);
        const me = await call(base, 'GET', '/keys/me', { key: p.key });
        expect(me.json.usage).toMatchObject({ settlements: 1, charged: '1.00' });
      }
      console.log(`usage faults: a paid call takes ${span} ms; killed at ${met.join(', ')}`);
      // The sweep met the paid call at more than one step (the states vary with the machine's speed).
      expect(new Set(met).size, met.join(', ')).toBeGreaterThan(1);
      // Each payment moved its price once, whatever step the kill met.
      expect((await rail.balanceOf(rail.payTo)) - before).toBe(PRICE * BigInt(paid.length));
    }, 300_000);
  },
);
