/**
 * A Sandbox-Trigger is honoured or refused: for every capability of the catalog, a trigger its catalog entry does not
 * list answers 400 trigger-not-honoured naming the ones it does, before any gate, and nothing is written; every
 * trigger it lists is honoured. The same on the settle route (the intent's capability decides), over MCP's exec, on a
 * platform route that runs capabilities (a deal's advance), and for every trigger with a live key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capabilities, capabilityByName, catalogTriggers, newId, type Capability } from '@vcs/contract';
import { generateKey } from '@vcs/platform';
import { call, mintKey, startHarness, type Harness } from './support/harness.ts';
import { callThrough, sampleInput, send, WALK_VIN } from './support/capabilityCalls.ts';
import { connectMcp, MCP_CLIENTS } from './support/mcp.ts';

/** Every table a call can write: what "nothing moved" is measured on (usage counters and demand are not moves). */
const TABLES = [
  'accounts',
  'api_keys',
  'api_key_events',
  'intents',
  'handoffs',
  'executions',
  'payments',
  'mandate_spend',
  'deals',
  'deal_events',
  'outbox_events',
  'vin_facts',
  'connections',
  'webhook_endpoints',
  'webhook_subscriptions',
  'webhook_events',
  'webhook_deliveries',
];

const honouredBy = (c: Capability) => c.triggers.map((t) => t.name);
/** Triggers `c` does not list: one another capability honours (the issue's `fail` on signing.quote), and nonsense. */
const unlistedFor = (c: Capability) => [catalogTriggers.find((t) => !honouredBy(c).includes(t))!, 'not-a-trigger'];

// poa.notarize reads the document poa.generate made: generate first, otherwise catalog order.
const ordered = [...capabilities].sort((a, b) => Number(b.name === 'poa.generate') - Number(a.name === 'poa.generate'));

describe('Sandbox-Trigger: honoured or refused (embedded)', () => {
  let h: Harness;
  let live: string;
  let documentId: string | undefined;
  /** Rows in every table, once what was written so far has gone through (events handled, deliveries made). */
  const rows = async () => {
    await h.settled();
    return Object.fromEntries(
      await Promise.all(
        TABLES.map(async (t) => [t, Number((await h.sql(`select count(*)::int as n from ${t}`))[0].n)] as const),
      ),
    );
  };
  beforeAll(async () => {
    h = await startHarness('embedded');
    // A live key: the service mints only sandbox keys, so one is written as commerce writes a key.
    const account = newId('account');
    const { key, prefix, hash } = generateKey('live');
    await h.sql(
      `insert into accounts(id, environment, trust_tier, created_at) values ($1, 'live', 'anonymous', now())`,
      [account],
    );
    await h.sql(
      `insert into api_keys(id, account_id, prefix, secret_hash, scopes, trust_tier, created_at)
       values ($1, $2, $3, $4, $5, 'anonymous', now())`,
      [newId('apiKey'), account, prefix, hash, ['read', 'act']],
    );
    live = key;
  });
  afterAll(async () => {
    await h?.stop();
  });

  /** The 400 a refused trigger answers: the code, the triggers honoured (also in words), the request to send again. */
  const expectRefused = (r: { status: number; json: any }, trigger: string, honoured: string[], path: string) => {
    expect(r.status, JSON.stringify(r.json)).toBe(400);
    expect(r.json).toMatchObject({ type: 'BLOCKED', value: { code: 'trigger-not-honoured', trigger, honoured } });
    for (const t of honoured) expect(r.json.value.message).toContain(t);
    expect(r.json.value.next.path).toBe(path);
    expect(r.json.value.message).toContain(`${r.json.value.next.method} ${path}`);
  };

  it.each(ordered.map((c) => [c.name, c] as const))(
    '%s: an unlisted trigger is 400 naming its triggers, nothing moves; each listed one is honoured',
    async (_name, c) => {
      const key = (await mintKey(h.baseUrl)).key;
      const input = sampleInput(c, { documentId });
      for (const trigger of unlistedFor(c)) {
        const before = await rows();
        const r = await send(h.baseUrl, c, input, key, { 'sandbox-trigger': trigger });
        expectRefused(r, trigger, honouredBy(c), c.path);
        expect(r.json.value.capability).toBe(c.name);
        expect(await rows()).toEqual(before);
      }
      // A live key's call is real: no trigger is honoured on it, not even one every capability lists.
      const before = await rows();
      expectRefused(await send(h.baseUrl, c, input, live, { 'sandbox-trigger': 'empty' }), 'empty', [], c.path);
      expect(await rows()).toEqual(before);

      for (const trigger of honouredBy(c)) {
        const r = await send(h.baseUrl, c, input, key, { 'sandbox-trigger': trigger });
        expect([r.status, r.json?.value?.code], trigger).not.toEqual([400, 'trigger-not-honoured']);
        expect(['OK', 'EMPTY', 'BLOCKED', 'OFFER']).toContain(r.json?.type);
      }
      // Honoured means it acts: `blocked` blocks the call, through its offer or handoff to the answer.
      const blocked = await callThrough(h.baseUrl, c, input, key, { 'sandbox-trigger': 'blocked' });
      expect(blocked.answer).toMatchObject({ type: 'BLOCKED', value: { code: 'sandbox-blocked' } });
      if (c.name === 'poa.generate') {
        const made = await callThrough(h.baseUrl, c, input, key);
        documentId = made.answer.value.id;
      }
    },
  );

  it.each(capabilities.filter((c) => c.gate === 'offer').map((c) => [c.name, c] as const))(
    'POST /intents/{id}/settle of a %s offer: its capability decides which triggers it honours',
    async (_name, c) => {
      const key = (await mintKey(h.baseUrl)).key;
      const offer = await send(h.baseUrl, c, sampleInput(c), key);
      expect(offer.status).toBe(402);
      const { path } = offer.json.value.settle;
      const id = offer.json.value.intent.id;
      for (const trigger of unlistedFor(c)) {
        const before = await rows();
        expectRefused(
          await call(h.baseUrl, 'POST', path, { key, headers: { 'sandbox-trigger': trigger } }),
          trigger,
          honouredBy(c),
          path,
        );
        expect(await rows()).toEqual(before);
      }
      expectRefused(
        await call(h.baseUrl, 'POST', path, { key: live, headers: { 'sandbox-trigger': 'empty' } }),
        'empty',
        [],
        path,
      );
      const intent = await call(h.baseUrl, 'GET', `/intents/${id}`, { key });
      expect(intent.json.value).toMatchObject({ status: 'pending', executions: 0 });
      const blocked = await call(h.baseUrl, 'POST', path, { key, headers: { 'sandbox-trigger': 'blocked' } });
      expect(blocked.json).toMatchObject({ type: 'BLOCKED', value: { code: 'sandbox-blocked' } });
    },
  );

  it("/openapi.json derives each operation's Sandbox-Trigger from the catalog, and names the refusal", async () => {
    const doc = (await call(h.baseUrl, 'GET', '/openapi.json')).json;
    const triggerOf = (op: any) => op.parameters?.find((p: any) => p.name === 'Sandbox-Trigger');
    let listed = 0;
    for (const c of capabilities) {
      const op = doc.paths[c.path]?.[c.method.toLowerCase()];
      if (!op) continue; // sandbox capabilities are not in the document (live operations only)
      expect(triggerOf(op)?.schema.enum, c.name).toEqual(honouredBy(c));
      expect(triggerOf(op).description).toContain('trigger-not-honoured');
      listed++;
    }
    expect(listed).toBeGreaterThan(0);
    const settle = doc.paths['/intents/{intentId}/settle'].post;
    expect(triggerOf(settle).description).toContain('trigger-not-honoured');
    expect(settle['x-vcs-codes']).toContain('trigger-not-honoured');
  });

  it('an unknown intent on the settle route answers as its settlement would, trigger or not', async () => {
    const { key } = await mintKey(h.baseUrl);
    const r = await call(h.baseUrl, 'POST', '/intents/pi_nope/settle', { key, headers: { 'sandbox-trigger': 'fail' } });
    expect([r.status, r.json.value.code]).toEqual([404, 'intent-not-found']);
  });

  it('a live key without a trigger is served; an empty Sandbox-Trigger header is no trigger', async () => {
    const r = await call(h.baseUrl, 'GET', `/signings/status?vin=${WALK_VIN}`, { key: live });
    expect([r.status, r.json.type]).toEqual([200, 'OK']);
    const empty = await call(h.baseUrl, 'GET', `/signings/status?vin=${WALK_VIN}`, {
      headers: { 'sandbox-trigger': '' },
    });
    expect([empty.status, empty.json.type]).toEqual([200, 'OK']);
  });

  it('a refused trigger is not remembered under its Idempotency-Key: sent again without it, the call runs', async () => {
    const { key } = await mintKey(h.baseUrl);
    const idem = { 'idempotency-key': 'triggers-test-1' };
    const refused = await call(h.baseUrl, 'POST', '/signings/schedule', {
      key,
      body: { vin: WALK_VIN },
      headers: { ...idem, 'sandbox-trigger': 'fail' },
    });
    expect(refused.json.value.code).toBe('trigger-not-honoured');
    const again = await call(h.baseUrl, 'POST', '/signings/schedule', { key, body: { vin: WALK_VIN }, headers: idem });
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(again.status).toBe(402);
  });

  it("a deal's advance refuses a trigger no capability honours, naming the catalog's", async () => {
    const { key } = await mintKey(h.baseUrl);
    const opened = await call(h.baseUrl, 'POST', '/buy/deals', {
      key,
      body: { vin: WALK_VIN, buyer: { name: 'B', zip: '94103' } },
    });
    const path = `/buy/deals/${opened.json.value.dealId}/advance`;
    const before = await rows();
    expectRefused(
      await call(h.baseUrl, 'POST', path, { key, body: {}, headers: { 'sandbox-trigger': 'not-a-trigger' } }),
      'not-a-trigger',
      catalogTriggers,
      path,
    );
    expect(await rows()).toEqual(before);
  });

  it.each(MCP_CLIENTS.slice(0, 2).map((k) => [k.name, k] as const))(
    "over MCP exec (%s) a trigger is checked as on HTTP: the code gets the 400's answer",
    async (_name, kind) => {
      const { key } = await mintKey(h.baseUrl);
      const s = await connectMcp(kind, h.baseUrl, key);
      try {
        const before = await rows();
        const r = await s.call('exec', {
          code:
            `const headers = { 'Sandbox-Trigger': 'fail' };\n` +
            `return [await signing.quote({ vin: '${WALK_VIN}' }, { headers }), ` +
            `await signing.status({ vin: '${WALK_VIN}' }, { headers: { 'Sandbox-Trigger': 'empty' } })];`,
        });
        const [quote, status] = JSON.parse(r.result!.content[0]!.text).result;
        expect(quote).toMatchObject({
          type: 'BLOCKED',
          value: {
            code: 'trigger-not-honoured',
            trigger: 'fail',
            honoured: honouredBy(capabilityByName('signing.quote')!),
          },
        });
        expect(status.type).toBe('EMPTY');
        expect(await rows()).toEqual(before);
      } finally {
        await s.close();
      }
    },
  );
});
