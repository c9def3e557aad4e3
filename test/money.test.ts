import { PaymentRequiredV2Schema } from '@x402/core/schemas';
import { preparePaymentHeader, selectPaymentRequirements } from 'x402/client';
import { PaymentRequirementsSchema, x402ResponseSchema } from 'x402/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anyAnswer, capabilityByName, offerValue, toCents } from '@vcs/contract';
import { call, mintKey, modes, waitFor } from './support/harness.ts';
import { ask, countEvents, startMoneyHarness, type MoneyHarness } from './support/money.ts';

const VIN = '1HGCM82633A004352';

describe.each(modes())('money and people (%s)', (mode) => {
  let m: MoneyHarness;
  let base: string;
  beforeAll(async () => {
    m = await startMoneyHarness(mode);
    base = m.h.baseUrl;
  });
  afterAll(async () => {
    await m?.stop();
  });

  it('publishes every priced capability on GET /pricing, from the catalog, with an ETag', async () => {
    const r = await call(base, 'GET', '/pricing');
    expect(r.status).toBe(200);
    const quote = r.json.value.capabilities.find((p: any) => p.capability === 'signing.quote');
    expect(quote).toMatchObject({
      model: 'flat',
      amount: '1.00',
      currency: 'USD',
      ceiling: '1.00',
      path: '/signings/quote',
    });
    const pay = r.json.value.capabilities.find((p: any) => p.capability === 'signing.pay');
    expect(pay).toMatchObject({
      model: 'take-rate',
      rate: '0.029',
      base: 'the amount paid',
      amount: '4.35',
      currency: 'USD',
      ceiling: '10.00',
    });
    // Money and rates are decimal strings end to end: nothing on the price surface is a float.
    for (const row of r.json.value.capabilities) {
      for (const k of ['amount', 'ceiling', 'rate'] as const)
        if (k in row) expect(typeof row[k], `${row.capability}.${k}`).toBe('string');
      if (row.model === 'take-rate') expect(row.rate).toMatch(/^0\.\d*[1-9]$/);
    }
    expect(r.json.value.capabilities.some((p: any) => p.capability === 'signing.status')).toBe(false);
    const etag = r.headers.get('etag')!;
    expect(r.headers.get('cache-control')).toMatch(/max-age/);
    const again = await fetch(`${base}/pricing`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
  });

  it('answers an unpaid offer-gated call 402 OFFER, mirrored as x402 v2 in PAYMENT-REQUIRED', async () => {
    const { key } = await mintKey(base);
    const r = await call(base, 'POST', '/signings/quote', { key, body: { vin: VIN } });
    expect(r.status).toBe(402);
    const a = anyAnswer.parse(r.json);
    expect(a.type).toBe('OFFER');
    const v = offerValue.parse(r.json.value);
    expect(v).toMatchObject({
      code: 'payment-required',
      capability: 'signing.quote',
      price: { amount: '1.00', currency: 'USD' },
      ceiling: { amount: '1.00', currency: 'USD' },
    });
    expect(v.intent).toMatchObject({
      id: expect.stringMatching(/^pi_/),
      status: 'pending',
      capability: 'signing.quote',
    });
    expect(v.settle).toEqual({ method: 'POST', path: `/intents/${v.intent.id}/settle` });
    const x = JSON.parse(Buffer.from(r.headers.get('payment-required')!, 'base64').toString('utf8'));
    expect(x.x402Version).toBe(2);
    expect(x.resource.url).toMatch(/\/signings\/quote$/);
    expect(x.accepts[0]).toMatchObject({
      scheme: 'exact',
      amount: '1000000',
      network: expect.any(String),
      asset: expect.any(String),
      payTo: expect.any(String),
    });
    expect(x.accepts[0].maxTimeoutSeconds).toBeGreaterThan(0);
    const upto = await call(base, 'POST', '/signings/pay', { key, body: { vin: VIN } });
    const ux = JSON.parse(Buffer.from(upto.headers.get('payment-required')!, 'base64').toString('utf8'));
    expect(ux.accepts[0]).toMatchObject({ scheme: 'upto', amount: '10000000' });
    const state = await call(base, 'GET', `/intents/${v.intent.id}`, { key });
    expect(state.json.value).toMatchObject({
      id: v.intent.id,
      status: 'pending',
      capability: 'signing.quote',
      executions: 0,
    });
  });

  it('is read by both generations of x402 clients: v2 from PAYMENT-REQUIRED, v1 from the 402 body (their own schemas)', async () => {
    const { key } = await mintKey(base);
    for (const path of ['/signings/quote', '/signings/schedule']) {
      // a flat price and a take-rate
      const r = await call(base, 'POST', path, { key, body: { vin: VIN } });
      expect(r.status).toBe(402);
      const v2 = PaymentRequiredV2Schema.safeParse(
        JSON.parse(Buffer.from(r.headers.get('payment-required')!, 'base64').toString('utf8')),
      );
      expect(v2.success, JSON.stringify(v2.error?.issues)).toBe(true);
      // The body is still the OFFER envelope, with x402 v1's members beside it.
      expect(anyAnswer.parse(r.json).type).toBe('OFFER');
      // x402 1.x's own schemas (the `x402` package): the whole body as an x402 response, each requirement on its own.
      const v1 = x402ResponseSchema.safeParse(r.json);
      expect(v1.success, JSON.stringify(v1.error?.issues)).toBe(true);
      expect(r.json.x402Version).toBe(1);
      const requirements = r.json.accepts.map((a: unknown) => PaymentRequirementsSchema.parse(a));
      // USDC has 6 decimals: the ceiling's cents times 10,000, in exact integer arithmetic.
      const ceilingAtomic = String(toCents(r.json.value.ceiling.amount)! * 10_000);
      expect(requirements[0]).toMatchObject({
        scheme: 'exact',
        network: 'base-sepolia',
        maxAmountRequired: ceilingAtomic,
        resource: expect.stringMatching(new RegExp(`${path}$`)),
      });
      // Then what a v1 client does with it: pick the exact Base Sepolia requirement and prepare the payment to sign.
      const chosen = selectPaymentRequirements(requirements, 'base-sepolia', 'exact');
      const unsigned = preparePaymentHeader('0x0000000000000000000000000000000000000001', r.json.x402Version, chosen);
      expect(unsigned.payload.authorization).toMatchObject({ to: requirements[0].payTo, value: ceilingAtomic });
    }
  });

  it('settles once: OK with the meter posted; settling again replays the stored answer and nothing runs twice', async () => {
    const { key, account } = await mintKey(base);
    const offer = await call(base, 'POST', '/signings/quote', { key, body: { vin: VIN } });
    const id = offer.json.value.intent.id;
    expect(await countEvents(m.db, 'Signing.quoted@1', account)).toBe(0); // nothing ran without settlement
    const first = await call(base, 'POST', `/intents/${id}/settle`, { key });
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({
      type: 'OK',
      answers: 'SigningQuote@1',
      meter: { charged: '0.00', posted: true },
    });
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const second = await call(base, 'POST', `/intents/${id}/settle`, { key });
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.json).toEqual(first.json);
    expect(await countEvents(m.db, 'Signing.quoted@1', account)).toBe(1);
    expect(await countEvents(m.db, 'Intent.settled@1', account)).toBe(1);
    const state = await call(base, 'GET', `/intents/${id}`, { key });
    expect(state.json.value).toMatchObject({ status: 'settled', executions: 1, answer: first.json });
  });

  it('runs an intent once under concurrent settles', async () => {
    const { key, account } = await mintKey(base);
    const offer = await call(base, 'POST', '/mcos/fee', { key, body: { vin: VIN } });
    const id = offer.json.value.intent.id;
    const all = await Promise.all(
      Array.from({ length: 6 }, () => call(base, 'POST', `/intents/${id}/settle`, { key })),
    );
    expect(
      all.map((r) => r.status),
      JSON.stringify(all.filter((r) => r.status !== 200).map((r) => r.json)),
    ).toEqual(Array(6).fill(200));
    for (const r of all) expect(r.json).toEqual(all[0]!.json);
    expect(all.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(5);
    expect(await countEvents(m.db, 'Mco.feeCharged@1', account)).toBe(1);
  });

  it('lets the first account that settles an anonymous intent claim it, and refuses every other account', async () => {
    const offer = await call(base, 'POST', '/signings/quote', { body: { vin: VIN } });
    expect(offer.status).toBe(402);
    const id = offer.json.value.intent.id;
    const anon = await call(base, 'POST', `/intents/${id}/settle`);
    expect(anon.status).toBe(401);
    expect(anon.json.value.code).toBe('key-required');
    const a = await mintKey(base);
    const b = await mintKey(base);
    expect((await call(base, 'POST', `/intents/${id}/settle`, { key: a.key })).status).toBe(200);
    const other = await call(base, 'POST', `/intents/${id}/settle`, { key: b.key });
    expect(other.status).toBe(403);
    expect(other.json).toMatchObject({ type: 'BLOCKED', value: { code: 'intent-other-account' } });
    expect((await call(base, 'GET', `/intents/${id}`, { key: b.key })).status).toBe(403);
  });

  it('refuses an expired intent 410, an unknown one 404, and a declined settlement 409, each typed', async () => {
    const { key } = await mintKey(base);
    const exp = await call(base, 'POST', '/signings/quote', {
      key,
      body: { vin: VIN },
      headers: { 'sandbox-trigger': 'offer-expired' },
    });
    expect(exp.status).toBe(402);
    const gone = await call(base, 'POST', `/intents/${exp.json.value.intent.id}/settle`, { key });
    expect(gone.status).toBe(410);
    expect(gone.json.value.code).toBe('intent-expired');
    expect((await call(base, 'GET', `/intents/${exp.json.value.intent.id}`, { key })).json.value.status).toBe(
      'expired',
    );
    const unknown = await call(base, 'POST', '/intents/pi_nope/settle', { key });
    expect(unknown.status).toBe(404);
    expect(unknown.json.value.code).toBe('intent-not-found');
    expect((await call(base, 'GET', '/intents/pi_nope')).json.value.code).toBe('intent-not-found');
    const dec = await call(base, 'POST', '/signings/quote', {
      key,
      body: { vin: VIN },
      headers: { 'sandbox-trigger': 'offer-declined' },
    });
    const declined = await call(base, 'POST', `/intents/${dec.json.value.intent.id}/settle`, { key });
    // Not a 402: a declined intent can no longer be settled, and a 402 would ask an x402 client to pay it.
    expect(declined.status).toBe(409);
    expect(declined.headers.get('payment-required')).toBeNull();
    expect(declined.json).toMatchObject({ type: 'BLOCKED', value: { code: 'offer-declined' } });
    expect((await call(base, 'GET', `/intents/${dec.json.value.intent.id}`, { key })).json.value.status).toBe('failed');
  });

  it('carries the offer-time fail trigger into settlement: the failure event is emitted', async () => {
    const { key, account } = await mintKey(base);
    const offer = await call(base, 'POST', '/signings/pay', {
      key,
      body: { vin: VIN },
      headers: { 'sandbox-trigger': 'fail' },
    });
    const r = await call(base, 'POST', `/intents/${offer.json.value.intent.id}/settle`, { key });
    // The capability's own payment step failed: its answer, a failure (422), not an offer to pay (402).
    expect(r.status).toBe(422);
    expect(r.json.value.code).toBe('payment-failed');
    expect(await countEvents(m.db, 'Signing.payFailed@1', account)).toBe(1);
  });

  it('settles in one round trip under Accept-Price, keeps the 402 above it, and refuses a bad header', async () => {
    const { key, account } = await mintKey(base);
    const ok = await call(base, 'POST', '/signings/quote', {
      key,
      body: { vin: VIN },
      headers: { 'accept-price': '5.00 USD' },
    });
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ type: 'OK', meter: { charged: '0.00', posted: true } });
    const id = ok.headers.get('intent-id')!;
    expect((await call(base, 'GET', `/intents/${id}`, { key })).json.value.status).toBe('settled');
    expect(await countEvents(m.db, 'Signing.quoted@1', account)).toBe(1);
    const low = await call(base, 'POST', '/signings/schedule', {
      key,
      body: { vin: VIN },
      headers: { 'accept-price': '5.00 USD' },
    });
    expect(low.status).toBe(402);
    expect(low.json.type).toBe('OFFER');
    const bad = await call(base, 'POST', '/signings/quote', {
      key,
      body: { vin: VIN },
      headers: { 'accept-price': 'five dollars' },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.value.code).toBe('invalid-price-header');
    expect(bad.json.value.message).toMatch(/5\.00 USD/);
  });

  it('refuses a payment header that is not an x402 payload 402 payment-invalid, at the gate and the settle route alike', async () => {
    const { key } = await mintKey(base);
    const offer = await call(base, 'POST', '/signings/quote', { key, body: { vin: VIN } });
    expect(offer.status).toBe(402);
    const notJson = Buffer.from('not json').toString('base64');
    const noVersion = Buffer.from(JSON.stringify({ payload: {} })).toString('base64');
    const refusals = [
      await call(base, 'POST', '/signings/quote', { body: { vin: VIN }, headers: { 'payment-signature': notJson } }),
      await call(base, 'POST', offer.json.value.settle.path, { key, headers: { 'x-payment': noVersion } }),
    ];
    for (const r of refusals) {
      expect(r.status).toBe(402); // x402's answer to a payment it cannot use (docs/money.md)
      expect(r.json.value).toMatchObject({ code: 'payment-invalid' });
      expect(r.json.value.message).toMatch(/PAYMENT-SIGNATURE or X-PAYMENT/);
      expect(r.json.value.problems.length).toBeGreaterThan(0);
      // A 402 says how to pay: the offer to pay instead, as PAYMENT-REQUIRED and in the body.
      const required = JSON.parse(Buffer.from(r.headers.get('payment-required')!, 'base64').toString('utf8'));
      expect(required.accepts[0].extra.intentId).toBe(r.json.value.offer.intent.id);
      expect(r.json.accepts[0].extra.intentId).toBe(r.json.value.offer.intent.id);
    }
    expect(refusals[0]!.json.value.problems[0].field).toBe('(header PAYMENT-SIGNATURE)');
    // Without the key, another account's intent: that refusal, not an offer this caller cannot pay.
    const theirs = await call(base, 'POST', offer.json.value.settle.path, { headers: { 'x-payment': noVersion } });
    expect(theirs.status, theirs.text).toBe(403);
    expect(theirs.json.value.code).toBe('intent-other-account');
    // On the settle route, its own intent (still pending); on the capability's route, a new offer for the call.
    expect(refusals[1]!.json.value.offer.intent.id).toBe(offer.json.value.intent.id);
    expect(refusals[0]!.json.value.offer.intent).toMatchObject({ status: 'pending', capability: 'signing.quote' });
    // Nothing was settled by either.
    const intent = await call(base, 'GET', `/intents/${offer.json.value.intent.id}`, { key });
    expect(intent.json.value).toMatchObject({ status: 'pending', executions: 0 });
  });

  it('answers the internal intents.create subject with the OFFER and carries the origin to Intent.settled', async () => {
    const { key, account } = await mintKey(base);
    const ctx = {
      requestId: 'req_t',
      account,
      keyId: null,
      environment: 'sandbox' as const,
      trigger: null,
      settled: false,
    };
    const r = await ask(
      m.bus,
      'intentsCreate',
      { capability: 'mco.fee', input: { vin: VIN }, origin: { dealId: 'deal_x', step: 3 } },
      ctx,
    );
    expect(r.status).toBe(402);
    expect(offerValue.parse(r.answer.value).capability).toBe('mco.fee');
    await call(base, 'POST', `/intents/${r.answer.value.intent.id}/settle`, { key });
    const { rows } = await m.db.query<{ payload: any }>(
      `select payload from outbox_events where type = 'Intent.settled@1' and account_id = $1`,
      [account],
    );
    const payload = typeof rows[0]!.payload === 'string' ? JSON.parse(rows[0]!.payload) : rows[0]!.payload;
    expect(payload.data).toEqual({
      intentId: r.answer.value.intent.id,
      capability: 'mco.fee',
      origin: { dealId: 'deal_x', step: 3 },
      answerType: 'OK',
      executionId: expect.stringMatching(/^ex_/),
      charged: '0.00',
    });
  });

  const mandate = (over: Record<string, unknown> = {}) => ({
    id: `mnd_${Math.random().toString(36).slice(2)}`,
    principal: 'acct_principal',
    ceiling: { amount: '5.00', currency: 'USD' },
    perAction: { amount: '2.00', currency: 'USD' },
    expires: '2099-01-01T00:00:00Z',
    tripwires: [],
    ...over,
  });
  const header = (v: unknown) => ({ mandate: Buffer.from(JSON.stringify(v)).toString('base64url') });

  it('never lets concurrent calls under one mandate spend past its ceiling', async () => {
    const { key, account } = await mintKey(base);
    const md = mandate();
    const all = await Promise.all(
      Array.from({ length: 10 }, () =>
        call(base, 'POST', '/signings/quote', { key, body: { vin: VIN }, headers: header(md) }),
      ),
    );
    const statuses = all.map((r) => r.status).sort();
    expect(
      statuses.filter((s) => s === 200),
      JSON.stringify(all.filter((r) => r.status !== 200 && r.status !== 403).map((r) => r.json)),
    ).toHaveLength(5);
    expect(statuses.filter((s) => s === 403)).toHaveLength(5);
    expect(all.find((r) => r.status === 403)!.json.value.code).toBe('mandate-ceiling-exceeded');
    expect(await countEvents(m.db, 'Signing.quoted@1', account)).toBe(5);
    const { rows } = await m.db.query<{ spent: string }>(
      'select spent_cents::text as spent from mandate_spend where mandate_id = $1',
      [md.id],
    );
    expect(rows[0]!.spent).toBe('500');
  });

  it('gives back what a mandate reserved for a call whose answer is BLOCKED, and only that', async () => {
    const { key } = await mintKey(base);
    const md = mandate();
    const spent = async () =>
      (
        await m.db.query<{ spent: string }>(
          'select spent_cents::text as spent from mandate_spend where mandate_id = $1',
          [md.id],
        )
      ).rows[0]!.spent;
    const paid = await call(base, 'POST', '/signings/quote', { key, body: { vin: VIN }, headers: header(md) });
    expect(paid.status).toBe(200);
    expect(await spent()).toBe('100');
    const blocked = await call(base, 'POST', '/signings/quote', {
      key,
      body: { vin: VIN },
      headers: { ...header(md), 'sandbox-trigger': 'blocked' },
    });
    expect(blocked.json.type, JSON.stringify(blocked.json)).toBe('BLOCKED');
    expect(blocked.json.value.code).toBe('sandbox-blocked');
    expect(await spent()).toBe('100');
  });

  it("keeps a mandate's spend per account: another account naming the same principal and id spends its own ledger", async () => {
    const a = await mintKey(base);
    const b = await mintKey(base);
    const md = mandate(); // ceiling 5.00; signing.quote's ceiling is 1.00
    for (let i = 0; i < 5; i++)
      expect(
        (await call(base, 'POST', '/signings/quote', { key: b.key, body: { vin: VIN }, headers: header(md) })).status,
      ).toBe(200);
    expect(
      (await call(base, 'POST', '/signings/quote', { key: b.key, body: { vin: VIN }, headers: header(md) })).json.value
        .code,
    ).toBe('mandate-ceiling-exceeded');
    // Account B spent its ledger to the ceiling; account A's, under the same (principal, id), is untouched.
    const first = await call(base, 'POST', '/signings/quote', { key: a.key, body: { vin: VIN }, headers: header(md) });
    expect(first.status, JSON.stringify(first.json.value)).toBe(200);
    const { rows } = await m.db.query<{ account_id: string; spent: string }>(
      'select account_id, spent_cents::text as spent from mandate_spend where mandate_id = $1 order by spent_cents',
      [md.id],
    );
    expect(rows).toEqual([
      { account_id: a.account, spent: '100' },
      { account_id: b.account, spent: '500' },
    ]);
  });

  it('halts on perAction, expiry and tripwires, and refuses a malformed mandate', async () => {
    const { key } = await mintKey(base);
    const per = await call(base, 'POST', '/signings/schedule', { key, body: { vin: VIN }, headers: header(mandate()) });
    expect(per.status).toBe(403);
    expect(per.json.value.code).toBe('mandate-per-action-exceeded');
    const old = await call(base, 'POST', '/signings/quote', {
      key,
      body: { vin: VIN },
      headers: header(mandate({ expires: '2020-01-01T00:00:00Z' })),
    });
    expect(old.json.value.code).toBe('mandate-expired');
    const trip = await call(base, 'POST', '/mcos/fee', {
      key,
      body: { vin: VIN },
      headers: header(mandate({ tripwires: [{ kind: 'capability-not-in', capabilities: ['signing.quote'] }] })),
    });
    expect(trip.status).toBe(403);
    expect(trip.json.value).toMatchObject({ code: 'tripwire', tripwire: { kind: 'capability-not-in' } });
    const jump = await call(base, 'POST', '/mcos/receive', {
      key,
      body: { vin: VIN },
      headers: header(mandate({ tripwires: [{ kind: 'price-above', amount: '1.00' }] })),
    });
    expect(jump.json.value).toMatchObject({ code: 'tripwire', tripwire: { kind: 'price-above', amount: '1.00' } });
    const bad = await call(base, 'POST', '/signings/quote', {
      key,
      body: { vin: VIN },
      headers: { mandate: 'not-json' },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.value.code).toBe('invalid-mandate');
    const partial = await call(base, 'POST', '/signings/quote', {
      key,
      body: { vin: VIN },
      headers: header({ id: 'x' }),
    });
    expect(partial.status).toBe(400);
    expect(partial.json.value.problems.map((p: any) => p.field)).toContain('ceiling');
  });

  it.runIf(!!capabilityByName('poa.generate'))('requires a mandate for poa.generate when delegated', async () => {
    const { key } = await mintKey(base);
    const c = capabilityByName('poa.generate')!;
    const r = await call(base, c.method, c.path, {
      key,
      body: { vin: VIN, state: 'CA' },
      headers: { 'delegated-for': 'acct_principal' },
    });
    expect(r.status).toBe(403);
    expect(r.json.value.code).toBe('mandate-required');
  });

  it('hands a capability to a human, polls the rail, and shows its result and events once completed', async () => {
    const { key, account } = await mintKey(base);
    const other = await mintKey(base);
    const ctx = {
      requestId: 'req_h',
      account,
      keyId: null,
      environment: 'sandbox' as const,
      trigger: null,
      settled: false,
    };
    const r = await ask(
      m.bus,
      'handoffsCreate',
      {
        verb: 'notarize',
        credential: 'notary',
        capability: 'mco.receive',
        input: { vin: VIN },
        origin: { dealId: 'deal_y', step: 5 },
      },
      ctx,
    );
    expect(r.status).toBe(403);
    expect(r.answer).toMatchObject({
      type: 'BLOCKED',
      value: {
        code: 'NEEDS_HUMAN',
        needs: 'NEEDS_HUMAN',
        verb: 'notarize',
        credential: 'notary',
        terminus: { name: expect.any(String) },
      },
    });
    const id = r.answer.value.handoff.id;
    expect(r.answer.value.handoff).toEqual({ id, status: 'pending', poll: { method: 'GET', path: `/handoffs/${id}` } });
    expect((await call(base, 'GET', `/handoffs/${id}`, { key })).json.value.status).toBe('pending');
    expect(await countEvents(m.db, 'Mco.received@1', account)).toBe(0);
    expect(
      (
        await call(base, 'POST', `/handoffs/${id}/complete`, {
          key,
          body: { outcome: 'completed', credential: 'payer' },
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await call(base, 'POST', `/handoffs/${id}/complete`, {
          key: other.key,
          body: { outcome: 'completed', credential: 'notary' },
        })
      ).status,
    ).toBe(403);
    expect((await call(base, 'GET', `/handoffs/ho_nope`, { key })).json.value.code).toBe('handoff-not-found');
    const done = await call(base, 'POST', `/handoffs/${id}/complete`, {
      key,
      body: { outcome: 'completed', credential: 'notary' },
    });
    expect(done.status).toBe(200);
    expect(done.json.value).toMatchObject({ status: 'completed', result: { type: 'OK', answers: 'McoReceive@1' } });
    const poll = await call(base, 'GET', `/handoffs/${id}`, { key });
    expect(poll.json.value.result).toEqual(done.json.value.result);
    expect(await countEvents(m.db, 'Mco.received@1', account)).toBe(1);
    expect(await countEvents(m.db, 'Handoff.completed@1', account)).toBe(1);
    const again = await call(base, 'POST', `/handoffs/${id}/complete`, {
      key,
      body: { outcome: 'completed', credential: 'notary' },
    });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await countEvents(m.db, 'Mco.received@1', account)).toBe(1);
  });

  it('records a refusal on the rail, and the sandbox triggers complete or refuse at once', async () => {
    const { key, account } = await mintKey(base);
    const ctx = {
      requestId: 'req_r',
      account,
      keyId: null,
      environment: 'sandbox' as const,
      trigger: null,
      settled: false,
    };
    const r = await ask(
      m.bus,
      'handoffsCreate',
      { verb: 'authorize', credential: 'authorizer', capability: null, input: null },
      ctx,
    );
    const id = r.answer.value.handoff.id;
    const refused = await call(base, 'POST', `/handoffs/${id}/complete`, {
      key,
      body: { outcome: 'refused', credential: 'authorizer' },
    });
    expect(refused.json.value.status).toBe('refused');
    expect(await countEvents(m.db, 'Handoff.refused@1', account)).toBe(1);
    const auto = await ask(
      m.bus,
      'handoffsCreate',
      { verb: 'notarize', credential: 'notary', capability: 'mco.receive', input: { vin: VIN } },
      { ...ctx, trigger: 'human-completed' },
    );
    expect(auto.answer.value.handoff.status).toBe('completed');
    const poll = await call(base, 'GET', `/handoffs/${auto.answer.value.handoff.id}`, { key });
    expect(poll.json.value.result.type).toBe('OK');
    const no = await ask(
      m.bus,
      'handoffsCreate',
      { verb: 'notarize', credential: 'notary', capability: 'mco.receive', input: { vin: VIN } },
      { ...ctx, trigger: 'human-refused' },
    );
    expect(no.answer.value.handoff.status).toBe('refused');
  });

  it.runIf(!!capabilityByName('poa.notarize'))('answers poa.notarize 403 NEEDS_HUMAN over HTTP', async () => {
    const { key } = await mintKey(base);
    const c = capabilityByName('poa.notarize')!;
    const r = await call(base, c.method, c.path, { key, body: { documentId: 'doc_any' } });
    expect(r.status).toBe(403);
    expect(r.json.value).toMatchObject({
      code: 'NEEDS_HUMAN',
      needs: 'NEEDS_HUMAN',
      verb: 'notarize',
      credential: 'notary',
      handoff: { status: 'pending' },
    });
  });
  it.runIf(mode === 'distributed')('settles an intent after every process restarted', async () => {
    const { key, account } = await mintKey(base);
    const offer = await call(base, 'POST', '/signings/quote', { key, body: { vin: VIN } });
    const id = offer.json.value.intent.id;
    const services = ['gateway', 'commerce', 'services-pillar', 'data', 'workflows'] as const;
    for (const s of services) await m.h.kill!(s);
    for (const s of services) await m.h.start!(s);
    await waitFor(async () => (await call(base, 'POST', `/intents/${id}/settle`, { key })).status === 200, 30_000, 250);
    expect(await countEvents(m.db, 'Signing.quoted@1', account)).toBe(1);
    expect((await call(base, 'GET', `/intents/${id}`, { key })).json.value.status).toBe('settled');
  });
});
