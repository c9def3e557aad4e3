import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { answerSchema, dealValue } from '@vcs/contract';
import { call, mintKey, modes, startHarness, waitFor, type Harness } from './support/harness.ts';

const VIN = '1HGCM82633A004352';
const BUYER = { name: 'Ada Buyer', zip: '94103' };
const dealAnswer = answerSchema(dealValue);

describe.each(modes())('buy deals (%s)', (mode) => {
  let h: Harness;
  let key: string;
  beforeAll(async () => {
    h = await startHarness(mode);
  });
  // A fresh account per test: a capability's own events are attributed per account and VIN.
  beforeEach(async () => {
    key = (await mintKey(h.baseUrl)).key;
  });
  afterAll(async () => {
    await h?.stop();
  });

  const open = async (k = key) => call(h.baseUrl, 'POST', '/buy/deals', { key: k, body: { vin: VIN, buyer: BUYER } });
  const get = async (id: string, k = key) => call(h.baseUrl, 'GET', `/buy/deals/${id}`, { key: k });
  const advance = async (id: string, headers: Record<string, string> = {}) =>
    call(h.baseUrl, 'POST', `/buy/deals/${id}/advance`, { key, headers });
  // The deal moved past `position` and the free steps the event started have finished running.
  const settledPast = async (id: string, position: number) => {
    const d = (await get(id)).json?.value;
    if (!d) return false;
    if (d.state === 'SETTLED') return true;
    return d.currentStep > position && d.checklist[d.currentStep - 1].status !== 'running';
  };
  const startedCount = (deal: any, position: number) =>
    deal.events.filter((e: any) => e.type === 'Deal.stepStarted@1' && e.step === position).length;

  it('opens a deal: id, OPENED, an ordered checklist naming each capability', async () => {
    const r = await open();
    expect(r.status).toBe(200);
    const a = dealAnswer.parse(r.json);
    expect(r.json.answers).toBe('Deal@1');
    if (a.type !== 'OK') throw new Error('not OK');
    expect(a.value.dealId).toMatch(/^deal_/);
    expect(a.value.state).toBe('OPENED');
    expect(a.value.checklist.map((s) => s.capability ?? s.verb)).toEqual([
      'vehicle.decode',
      'frameInspection.order',
      'transport.quote',
      'signing.quote',
      'poa.generate',
      'poa.notarize',
      'authorize',
      'signing.collectSignatures',
      'sign',
      'pay',
      'signing.pay',
      'mco.assign',
    ]);
    expect(a.value.checklist.every((s) => s.status === 'todo')).toBe(true);
    expect(a.value.events.map((e) => e.type)).toEqual(['Deal.opened@1']);
  });

  it('answers a bad body 400 BLOCKED naming each bad field', async () => {
    const r = await call(h.baseUrl, 'POST', '/buy/deals', {
      key,
      body: { vin: '1HGCM82633A004353', buyer: { name: ' ', zip: '9410' } },
    });
    expect(r.status).toBe(400);
    expect(r.json.type).toBe('BLOCKED');
    expect(r.json.value.code).toBe('invalid-input');
    expect(r.json.value.problems.map((p: any) => p.field).sort()).toEqual(['buyer.name', 'buyer.zip', 'vin']);
    const missing = await call(h.baseUrl, 'POST', '/buy/deals', { key, body: {} });
    expect(missing.status).toBe(400);
    expect(missing.json.value.problems.map((p: any) => p.field).sort()).toEqual(['buyer', 'vin']);
    const plus4 = await call(h.baseUrl, 'POST', '/buy/deals', {
      key,
      body: { vin: VIN, buyer: { name: 'B', zip: '94103-1234' } },
    });
    expect(plus4.status).toBe(200);
  });

  it('needs a key, and hides a deal from other accounts (404 deal-not-found)', async () => {
    const anon = await call(h.baseUrl, 'POST', '/buy/deals', { body: { vin: VIN, buyer: BUYER } });
    expect(anon.status).toBe(401);
    const id = (await open()).json.value.dealId;
    const other = (await mintKey(h.baseUrl)).key;
    const r = await get(id, other);
    expect(r.status).toBe(404);
    expect(r.json.value.code).toBe('deal-not-found');
    const adv = await call(h.baseUrl, 'POST', `/buy/deals/${id}/advance`, { key: other });
    expect(adv.status).toBe(404);
    expect((await get('deal_nope')).status).toBe(404);
  });

  it('deal.open opens the same kind of deal through the catalog', async () => {
    const r = await call(h.baseUrl, 'POST', '/deals/open', { key, body: { workflow: 'buy', vin: VIN } });
    expect(r.status).toBe(200);
    expect(r.json.answers).toBe('DealOpen@1');
    const g = await get(r.json.value.dealId);
    expect(g.status).toBe(200);
    expect(g.json.value.state).toBe('OPENED');
    expect(g.json.value.checklist).toHaveLength(12);
  });

  it('a failed step leaves the deal STEP_FAILED and an advance retries it', async () => {
    const id = (await open()).json.value.dealId;
    const bad = await advance(id, { 'sandbox-trigger': 'blocked' });
    expect(bad.status).toBe(422);
    expect(bad.json.value.code).toBe('sandbox-blocked');
    const g = (await get(id)).json.value;
    expect(g.state).toBe('STEP_FAILED');
    expect(g.checklist[0]).toMatchObject({
      status: 'failed',
      attempts: 1,
      outcome: { type: 'BLOCKED', code: 'sandbox-blocked' },
    });
    expect(g.events.map((e: any) => e.type)).toContain('Deal.stepFailed@1');
    await advance(id);
    const after = (await get(id)).json.value;
    expect(after.checklist[0]).toMatchObject({ status: 'done', attempts: 2 });
    expect(after.currentStep).toBeGreaterThan(1);
  });

  it('two concurrent advances never run a step twice', async () => {
    const id = (await open()).json.value.dealId;
    const [a, b] = await Promise.all([advance(id), advance(id)]);
    expect([a.status, b.status].every((s) => [200, 402, 403, 409, 422, 503].includes(s))).toBe(true);
    const deal = (await get(id)).json.value;
    expect(startedCount(deal, 1)).toBe(1);
    expect(deal.checklist[0].status).toBe('done');
    expect(deal.events.filter((e: any) => e.type === 'Deal.stepCompleted@1' && e.step === 1)).toHaveLength(1);
  });

  it('keeps a deal across a restart of the workflows service', async () => {
    const id = (await open()).json.value.dealId;
    await advance(id);
    const before = (await get(id)).json.value;
    if (h.kill && h.start) {
      await h.kill('workflows');
      await h.start('workflows');
      await waitFor(async () => (await get(id)).status === 200);
    }
    const after = (await get(id)).json.value;
    expect(after.checklist).toEqual(before.checklist);
    expect(after.events).toEqual(before.events);
    expect(after.version).toBe(before.version);
  });

  it('a whole purchase, from OPENED to SETTLED, through the public API only (with a restart mid-deal)', async () => {
    const id = (await open()).json.value.dealId;
    let restarted = false;
    for (let guard = 0; guard < 30; guard++) {
      const deal = (await get(id)).json.value;
      if (deal.state === 'SETTLED') break;
      const position = deal.currentStep;
      const r = await advance(id);
      // Mid-deal, the workflows service dies while a handoff is out; the completion arrives while it is down.
      const restart = !restarted && r.status === 403 && !!h.kill && !!h.start;
      if (restart) {
        restarted = true;
        await h.kill!('workflows');
      }
      if (r.status === 402) {
        expect(r.json.type).toBe('OFFER');
        const settle = r.json.value.settle;
        const s = await call(h.baseUrl, settle.method ?? 'POST', settle.path, { key });
        expect(s.status, s.text).toBe(200);
      } else if (r.status === 403) {
        const handoff = r.json.value.handoff ?? r.json.value;
        const c = await call(h.baseUrl, 'POST', `/handoffs/${handoff.id}/complete`, {
          key,
          body: { outcome: 'completed', credential: r.json.value.credential },
        });
        expect(c.status, c.text).toBe(200);
      } else {
        expect(r.status, r.text).toBe(200);
      }
      if (restart) await h.start!('workflows');
      // The completion event moves the deal on by itself (no second advance needed).
      await h.settled();
      expect(await settledPast(id, position)).toBe(true);
    }
    const done = (await get(id)).json.value;
    expect(done.state).toBe('SETTLED');
    expect(done.checklist.every((s: any) => s.status === 'done')).toBe(true);
    for (const s of done.checklist) expect(startedCount(done, s.position)).toBe(1);
    const types = done.events.map((e: any) => e.type);
    expect(types[0]).toBe('Deal.opened@1');
    expect(types.at(-1)).toBe('Deal.settled@1');
    if (h.kill) expect(restarted).toBe(true);
  });

  it('a failed payment leaves the deal STEP_FAILED, and advancing again recovers it', async () => {
    const id = (await open()).json.value.dealId;
    const payAt = 11;
    for (let guard = 0; guard < 30; guard++) {
      const deal = (await get(id)).json.value;
      if (deal.currentStep === payAt) break;
      const r = await advance(id);
      if (r.status === 402) await call(h.baseUrl, 'POST', r.json.value.settle.path, { key });
      else if (r.status === 403)
        await call(h.baseUrl, 'POST', `/handoffs/${(r.json.value.handoff ?? r.json.value).id}/complete`, {
          key,
          body: { outcome: 'completed', credential: r.json.value.credential },
        });
      await h.settled();
      expect(await settledPast(id, deal.currentStep)).toBe(true);
    }
    const fail = { 'sandbox-trigger': 'fail' };
    const offer = await advance(id, fail);
    expect(offer.status).toBe(402);
    await call(h.baseUrl, 'POST', offer.json.value.settle.path, { key, headers: fail });
    await h.settled();
    const failed = (await get(id)).json.value;
    expect(failed.state).toBe('STEP_FAILED');
    expect(failed.checklist[payAt - 1].status).toBe('failed');
    const retry = await advance(id);
    expect(retry.status).toBe(402);
    await call(h.baseUrl, 'POST', retry.json.value.settle.path, { key });
    await h.settled();
    expect((await get(id)).json.value.currentStep).toBe(payAt + 1);
    expect((await get(id)).json.value.checklist[payAt - 1]).toMatchObject({ status: 'done', attempts: 2 });
  });

  it('a declined offer fails its step, and the next advance makes a fresh offer', async () => {
    const id = (await open()).json.value.dealId;
    const first = await advance(id);
    expect(first.status, first.text).toBe(402);
    const declined = await call(h.baseUrl, 'POST', first.json.value.settle.path, {
      key,
      headers: { 'sandbox-trigger': 'offer-declined' },
    });
    expect(declined.json.value.code).toBe('offer-declined');
    const again = await advance(id);
    expect(again.status).toBe(402);
    expect(again.json.value.intent.id).not.toBe(first.json.value.intent.id);
    const deal = (await get(id)).json.value;
    expect(deal.checklist[1]).toMatchObject({ status: 'awaiting', attempts: 2 });
    expect(deal.events.map((e: any) => e.type)).toContain('Deal.stepFailed@1');
  });
});
