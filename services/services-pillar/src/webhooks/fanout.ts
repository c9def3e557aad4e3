import { newId, type EventEnvelope } from '@vcs/contract';
import { dec, type Services } from '@vcs/platform';
import { patternMatches } from './match.ts';

/**
 * Consumes the event stream and turns each event into one delivery row per matching endpoint of the
 * event's account. Idempotent on (endpoint, event): a redelivered event adds nothing. The rows are the
 * queue; the sender picks them up from Postgres.
 */
export async function startFanout(services: Services, onNewWork: () => void) {
  return services.bus.consumeEvents({ durable: 'webhook-fanout', filter: 'evt.>' }, async (d) => {
    const evt = JSON.parse(dec.decode(d.data)) as EventEnvelope;
    if (!evt.account) { d.ack(); return; }
    const created = await fanOut(services, evt);
    d.ack();
    if (created) onNewWork();
  });
}

export async function fanOut(services: Services, evt: EventEnvelope): Promise<number> {
  const { rows } = await services.db.query<{ id: string; endpoint_id: string; event_types: string[] }>(
    `select s.id, s.endpoint_id, s.event_types from webhook_subscriptions s join webhook_endpoints e on e.id = s.endpoint_id
      where s.account_id = $1 and s.status = 'active' and e.status = 'active'`, [evt.account],
  );
  const targets = new Set<string>();
  // A test event goes to the endpoint it names, subscribed or not.
  const target = (evt.data as { targetEndpointId?: string }).targetEndpointId;
  if (evt.type.startsWith('Webhook.emitted@') && target) targets.add(target);
  else for (const r of rows) if (r.event_types.some((p) => patternMatches(p, evt.type))) targets.add(r.endpoint_id);
  // Never tell an endpoint about its own failure: a dead endpoint would otherwise feed itself forever.
  const about = (evt.data as { endpointId?: string }).endpointId;
  if (evt.type.startsWith('Webhook.failed@') && about) targets.delete(about);
  if (!targets.size) return 0;
  // One statement for every target: a wide fan-out costs one round trip, not one per endpoint.
  const ids = [...targets];
  const r = await services.db.query(
    `insert into webhook_deliveries(id, account_id, endpoint_id, event_id, event_type, payload, next_attempt_at)
     select t.id, $2, t.endpoint_id, $3, $4, $5, $6
       from unnest($1::text[], $7::text[]) as t(id, endpoint_id)
      where exists (select 1 from webhook_endpoints e where e.id = t.endpoint_id and e.account_id = $2)
     on conflict (endpoint_id, event_id) do nothing`,
    [ids.map(() => newId('delivery')), evt.account, evt.id, evt.type, JSON.stringify(evt), services.clock.now().toISOString(), ids],
  );
  const created = r.rowCount;
  return created;
}
