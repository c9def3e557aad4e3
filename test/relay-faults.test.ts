import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PGlite } from '@electric-sql/pglite';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { EVENT_STREAM } from '@vcs/contract';
import { call, exited, mintKey, paid, serversFor, startHarness, waitFor, type Harness } from './support/harness.ts';
import { startEmbeddedProcess } from './support/embedded-process.ts';
import { startNatsCut } from './support/nats-cut.ts';
import { startReceiver } from './support/receiver.ts';

/**
 * The outbox relay under faults of real processes, in both modes: a process killed -9 after its relay published a
 * batch and before it marked it.
 *  - Distributed: a pillar replica publishes a claimed batch into the stream, never hears the acknowledgement (the
 *    way back from NATS is cut), and is killed while its claim holds. The row waits out the claim, not for ever;
 *    another replica then relays it; the stream keeps one copy (the republish is dropped by its Nats-Msg-Id); the
 *    webhook subscriber gets the event once.
 *  - Embedded: the sole relay leaves a batch's mark to its next statement; the process is killed while the batch's
 *    webhook is being delivered, before that statement. Restarted on the same directory, it publishes the batch
 *    again; the consumers' writes are keyed by event, so the event keeps one delivery, retried under its one id.
 */
const WEBHOOKS = { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_POLL_MS: '50', WEBHOOK_TIMEOUT_MS: '2000' };
Object.assign(process.env, WEBHOOKS);

const VIN = '1HGCM82633A004352';

/** How many messages of `stream` carry `msgId` (the event's id, as the relay publishes it). */
async function copiesInStream(natsUrl: string, stream: string, msgId: string): Promise<number> {
  const nc = await connect({ servers: natsUrl.split(',') });
  try {
    const jsm = await jetstreamManager(nc);
    const { state } = await jsm.streams.info(stream);
    let copies = 0;
    for (let seq = state.first_seq; state.messages > 0 && seq <= state.last_seq; seq++) {
      const m = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
      if (m?.header?.get('Nats-Msg-Id') === msgId) copies++;
    }
    return copies;
  } finally {
    await nc.close();
  }
}

describe.runIf(serversFor('relay faults suite'))(
  'the outbox relay under faults (distributed: needs NATS_URL, DATABASE_URL, REDIS_URL)',
  () => {
    let h: Harness;
    beforeAll(async () => {
      h = await startHarness('distributed');
    }, 120_000);
    afterAll(async () => {
      await h?.stop();
    });

    it('a replica killed -9 while it holds a claim on a batch the stream already has: relayed again after the claim, kept once, delivered once', async () => {
      const env = h.env!;
      const stream = `${EVENT_STREAM}_${env.NATS_NAMESPACE}`;
      const rx = await startReceiver();
      const cut = await startNatsCut(env.NATS_URL!, `${env.NATS_NAMESPACE}.evt.`);
      try {
        const { key, account } = await mintKey(h.baseUrl);
        const reg = await paid(h.baseUrl, '/webhooks/register', key, { url: rx.url });
        expect(reg.status, reg.text).toBe(200);
        const endpointId = reg.json.value.registration.id;
        const sub = await paid(h.baseUrl, '/webhooks/subscribe', key, { endpointId, eventTypes: ['Signing.quoted'] });
        expect(sub.status, sub.text).toBe(200);
        await h.settled();

        // The services pillar's only replica becomes one that reaches NATS through the cut.
        await h.start!('services-pillar', { NATS_URL: cut.url });
        await waitFor(async () => cut.connections() > 0, 60_000, 100);
        await h.kill!('services-pillar'); // the first replica, on NATS directly
        await waitFor(async () => (await call(h.baseUrl, 'GET', `/signings/status?vin=${VIN}`)).status === 200, 60_000);
        expect(cut.cutAt()).toBe(0);

        const quote = await paid(h.baseUrl, '/signings/quote', key, { vin: VIN });
        expect(quote.status, quote.text).toBe(200);
        const row = async () =>
          (
            await h.sql(
              `select id, claimed_until > now() as held, published_at is not null as published
               from outbox_events where type = 'Signing.quoted@1' and account_id = $1`,
              [account],
            )
          )[0] as { id: string; held: boolean; published: boolean } | undefined;

        // Published into the stream, unacknowledged, still claimed: the state the kill is meant to meet.
        await waitFor(async () => cut.cutAt() > 0, 20_000, 20);
        await waitFor(async () => (await copiesInStream(env.NATS_URL!, stream, (await row())!.id)) === 1, 10_000, 100);
        const held = (await row())!;
        expect(held).toMatchObject({ held: true, published: false });
        await h.kill!('services-pillar', 'SIGKILL');
        const killedAt = Date.now();

        // Another replica takes the row once the claim has run out (30 s), relays it, and marks it.
        await h.start!('services-pillar');
        await waitFor(async () => (await row())!.published, 90_000, 250);
        expect(Date.now() - killedAt).toBeLessThan(60_000);
        await waitFor(async () => rx.received.some((r) => r.body.includes(held.id)), 30_000, 100);
        await h.settled();
        expect(await copiesInStream(env.NATS_URL!, stream, held.id)).toBe(1);
        expect(rx.received.filter((r) => r.body.includes(held.id))).toHaveLength(1);
      } finally {
        await cut.close();
        await rx.close();
      }
    }, 180_000);
  },
);

describe('the embedded relay under a kill -9 (the built service, a real process, on a data directory)', () => {
  const parent = mkdtempSync(join(tmpdir(), 'vcs-relay-kill-'));
  const dir = join(parent, 'pglite');
  afterAll(() => rmSync(parent, { recursive: true, force: true }));
  /** The stopped service's rows, read from its directory. */
  const inDirectory = async <T>(sql: string, params: unknown[]): Promise<T[]> => {
    const db = await PGlite.create(dir);
    try {
      return (await db.query<T>(sql, params)).rows;
    } finally {
      await db.close();
    }
  };

  it('killed after publishing a batch, before marking it: published again at the next start, one delivery, one id', async () => {
    let victim: Awaited<ReturnType<typeof startEmbeddedProcess>> | undefined;
    let killedOn = ''; // the event whose delivery met the kill
    // The receiver kills the service as a delivery of Signing.quoted reaches it, before answering: the relay has
    // published that batch within the last tick, and its mark waits for the relay's next statement.
    const rx = await startReceiver((_, body) => {
      if (victim && !killedOn && body.includes('Signing.quoted')) {
        killedOn = JSON.parse(body).id ?? 'unknown';
        victim.child.kill('SIGKILL');
      }
      return 204;
    });
    try {
      victim = await startEmbeddedProcess({ PGLITE_DIR: dir, ...WEBHOOKS });
      const base = victim.base;
      const { key } = await mintKey(base);
      const reg = await paid(base, '/webhooks/register', key, { url: rx.url });
      expect(reg.status, reg.text).toBe(200);
      const endpointId = reg.json.value.registration.id;
      expect(
        (await paid(base, '/webhooks/subscribe', key, { endpointId, eventTypes: ['Signing.quoted'] })).status,
      ).toBe(200);

      // Until a kill meets a batch still unmarked (the relay's tick may mark it first: then again, a new event).
      let event: { id: string; published: boolean } | undefined;
      for (let attempt = 0; attempt < 5 && !event; attempt++) {
        if (attempt) victim = await startEmbeddedProcess({ PGLITE_DIR: dir, ...WEBHOOKS });
        killedOn = '';
        await paid(victim.base, '/signings/quote', key, { vin: VIN }).catch(() => undefined);
        await waitFor(async () => killedOn !== '', 20_000, 20);
        await exited(victim.child);
        const [row] = await inDirectory<{ id: string; published: boolean }>(
          'select id, published_at is not null as published from outbox_events where id = $1',
          [killedOn],
        );
        if (row && !row.published) event = row;
      }
      expect(event, 'a kill between the publish and the mark').toMatchObject({ published: false });
      const id = event!.id;
      const delivered = () => rx.received.filter((r) => r.body.includes(id));
      expect(delivered()).toHaveLength(1);

      // Restarted: the batch is published again and marked; the delivery cut off by the kill is retried, once.
      const again = await startEmbeddedProcess({ PGLITE_DIR: dir, ...WEBHOOKS });
      await waitFor(async () => delivered().length >= 2, 30_000, 50);
      await new Promise((r) => setTimeout(r, 1000)); // time for a wrong third delivery to arrive
      again.child.kill('SIGTERM');
      await exited(again.child);
      expect(delivered()).toHaveLength(2);
      expect(new Set(delivered().map((r) => r.id)).size).toBe(1);
      expect(
        await inDirectory(
          `select o.published_at is not null as published, count(d.id)::int as deliveries,
                  count(*) filter (where d.status = 'delivered')::int as done
             from outbox_events o left join webhook_deliveries d on d.event_id = o.id
            where o.id = $1 group by o.published_at`,
          [id],
        ),
      ).toEqual([{ published: true, deliveries: 1, done: 1 }]);
    } finally {
      if (victim && victim.child.exitCode === null && victim.child.signalCode === null) victim.child.kill('SIGKILL');
      await rx.close();
    }
  }, 240_000);
});
