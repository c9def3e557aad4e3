import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, mintKey, serversFor, startHarness, waitFor, type Harness } from './support/harness.ts';

/**
 * The durable execution under faults, with real processes (distributed): a pillar paused (SIGSTOP) while it runs a
 * settled intent, a completed handoff or a deal step; commerce killed -9 mid-execution. What must hold: the caller is
 * told the outcome is unknown (503 with Retry-After), never "completed" nor 402; the capability commits once; nothing
 * sticks — the reconciler finishes each on its own once the pillar is back.
 */
const VIN = '1HGCM82633A004352';

describe
  .runIf(serversFor('execution faults suite'))
  .sequential('durable executions under faults (distributed: needs NATS_URL, DATABASE_URL, REDIS_URL)', () => {
    let h: Harness;
    let key: string;
    let account: string;
    beforeAll(async () => {
      h = await startHarness('distributed', { busTimeoutMs: 1500 });
      ({ key, account } = await mintKey(h.baseUrl));
    }, 120_000);
    afterAll(async () => {
      await h?.stop();
    });

    const signal = (service: 'services-pillar' | 'data', sig: NodeJS.Signals) => {
      for (const p of h.procs!.get(service) ?? []) p.kill(sig);
    };
    const events = async (type: string) =>
      Number(
        (
          await h.sql('select count(*)::int as n from outbox_events where type = $1 and account_id = $2', [
            type,
            account,
          ])
        )[0].n,
      );
    const commits = async (capability: string) =>
      Number(
        (await h.sql('select count(*)::int as n from capability_commits where capability = $1', [capability]))[0].n,
      );

    it('an intent settled while its pillar is paused: 503 execution-pending with Retry-After, then settled once by itself', async () => {
      const offer = await call(h.baseUrl, 'POST', '/signings/quote', { key, body: { vin: VIN } });
      const id = offer.json.value.intent.id;
      signal('services-pillar', 'SIGSTOP');
      let first;
      try {
        first = await call(h.baseUrl, 'POST', `/intents/${id}/settle`, { key });
      } finally {
        signal('services-pillar', 'SIGCONT');
      }
      expect(first.status, first.text).toBe(503);
      expect(first.json.value.code).toBe('execution-pending');
      expect(Number(first.headers.get('retry-after'))).toBeGreaterThan(0);
      // Nobody retries: the reconciler takes it up once the lease runs out, under the same execution id.
      await waitFor(
        async () => (await call(h.baseUrl, 'GET', `/intents/${id}`, { key })).json.value.status === 'settled',
        20_000,
        200,
      );
      const again = await call(h.baseUrl, 'POST', `/intents/${id}/settle`, { key });
      expect(again.status).toBe(200);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      // The paused pillar's late first attempt ran when it resumed, long before the reconciler's: once everything
      // written has gone through (outbox, consumers, deliveries), a second commit or event would be in the store.
      await h.settled();
      expect(await events('Signing.quoted@1')).toBe(1);
      expect((await call(h.baseUrl, 'GET', `/intents/${id}`, { key })).json.value.executions).toBe(1);
    });

    it('a handoff completed while its pillar is paused and commerce is killed -9: never stuck, completed once', async () => {
      const asked = await call(h.baseUrl, 'POST', '/poas/notarize', { key, body: { documentId: 'doc_fault_1' } });
      expect(asked.status).toBe(403);
      const hid = asked.json.value.handoff.id;
      const before = await commits('poa.notarize');
      signal('services-pillar', 'SIGSTOP');
      let first;
      try {
        const pending = call(h.baseUrl, 'POST', `/handoffs/${hid}/complete`, {
          key,
          body: { outcome: 'completed', credential: 'notary' },
        });
        // Mid-execution: commerce has claimed the run under a lease (the pillar, paused, holds the call).
        await waitFor(
          async () =>
            (
              await h.sql(
                `select 1 from executions where source = 'handoff' and source_id = $1 and status = 'running'`,
                [hid],
              )
            ).length === 1,
          10_000,
          50,
        );
        await h.kill!('commerce', 'SIGKILL');
        first = await pending;
        await h.start!('commerce');
      } finally {
        signal('services-pillar', 'SIGCONT');
      }
      expect(first.status).not.toBe(200);
      await waitFor(
        async () => (await call(h.baseUrl, 'GET', `/handoffs/${hid}`, { key })).json?.value?.status === 'completed',
        30_000,
        250,
      );
      const replay = await call(h.baseUrl, 'POST', `/handoffs/${hid}/complete`, {
        key,
        body: { outcome: 'completed', credential: 'notary' },
      });
      expect(replay.status).toBe(200);
      expect(replay.json.value.result.type).toBe('OK');
      await h.settled();
      expect((await commits('poa.notarize')) - before).toBe(1);
      expect(await events('Handoff.completed@1')).toBe(1);
    });

    it("a deal step whose pillar is paused: 503 in doubt, then the step completes from its execution's event, run once", async () => {
      const opened = await call(h.baseUrl, 'POST', '/buy/deals', {
        key,
        body: { vin: VIN, buyer: { name: 'Ada Lovelace', zip: '94105' } },
      });
      expect(opened.status, opened.text).toBe(200);
      const dealId = opened.json.value.id ?? opened.json.value.dealId;
      const decodesBefore = await commits('vehicle.decode');
      signal('data', 'SIGSTOP');
      let first;
      try {
        first = await call(h.baseUrl, 'POST', `/buy/deals/${dealId}/advance`, { key });
      } finally {
        signal('data', 'SIGCONT');
      }
      expect(first.status, first.text).toBe(503);
      await waitFor(
        async () => {
          const d = await call(h.baseUrl, 'GET', `/buy/deals/${dealId}`, { key });
          return d.json.value.checklist[0].status === 'done';
        },
        30_000,
        250,
      );
      await h.settled();
      expect((await commits('vehicle.decode')) - decodesBefore).toBe(1);
    });
  });
