import { newId, type EventEnvelope } from '@vcs/contract';
import type { Services } from '@vcs/platform';
import { patternMatches } from './match.ts';

/** The endpoints each event goes to, given its account's active subscriptions. */
function targetsOf(evt: EventEnvelope, subscriptions: { endpoint_id: string; event_types: string[] }[]): Set<string> {
  const targets = new Set<string>();
  // A test event goes to the endpoint it names, subscribed or not.
  const target = (evt.data as { targetEndpointId?: string }).targetEndpointId;
  if (evt.type.startsWith('Webhook.emitted@') && target) targets.add(target);
  else for (const s of subscriptions) if (s.event_types.some((p) => patternMatches(p, evt.type))) targets.add(s.endpoint_id);
  // Never tell an endpoint about its own failure: a dead endpoint would otherwise feed itself forever.
  const about = (evt.data as { endpointId?: string }).endpointId;
  if (evt.type.startsWith('Webhook.failed@') && about) targets.delete(about);
  return targets;
}

/**
 * Each event becomes one delivery row per matching endpoint of its account: one read and one insert for a whole
 * batch. Idempotent on (endpoint, event): a redelivered event adds nothing. The rows are the queue; the sender
 * picks them up from Postgres.
 */
export async function fanOut(services: Services, all: EventEnvelope[]): Promise<number> {
  const events = all.filter((e) => e.account);
  if (!events.length) return 0;
  const accounts = [...new Set(events.map((e) => e.account!))];
  const { rows } = await services.db.query<{ account_id: string; endpoint_id: string; event_types: string[] }>(
    `select s.account_id, s.endpoint_id, s.event_types from webhook_subscriptions s join webhook_endpoints e on e.id = s.endpoint_id
      where s.account_id = any($1::text[]) and s.status = 'active' and e.status = 'active'`, [accounts],
  );
  const cols = { id: [] as string[], account: [] as string[], endpoint: [] as string[], event: [] as string[], type: [] as string[], payload: [] as string[] };
  for (const evt of events) {
    for (const endpoint of targetsOf(evt, rows.filter((r) => r.account_id === evt.account))) {
      cols.id.push(newId('delivery')); cols.account.push(evt.account!); cols.endpoint.push(endpoint);
      cols.event.push(evt.id); cols.type.push(evt.type); cols.payload.push(JSON.stringify(evt));
    }
  }
  if (!cols.id.length) return 0;
  // One statement for every target of every event: a wide fan-out costs one round trip, not one per endpoint.
  const r = await services.db.query(
    `insert into webhook_deliveries(id, account_id, endpoint_id, event_id, event_type, payload, next_attempt_at)
     select t.id, t.account_id, t.endpoint_id, t.event_id, t.event_type, t.payload::jsonb, $7
       from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) as t(id, account_id, endpoint_id, event_id, event_type, payload)
      where exists (select 1 from webhook_endpoints e where e.id = t.endpoint_id and e.account_id = t.account_id)
     on conflict (endpoint_id, event_id) do nothing`,
    [cols.id, cols.account, cols.endpoint, cols.event, cols.type, cols.payload, services.clock.now().toISOString()],
  );
  return r.rowCount;
}
