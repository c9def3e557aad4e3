import { newId, type EventEnvelope } from '@vcs/contract';
import type { Services } from '@vcs/platform';
import { patternMatches } from './match.ts';

/** The endpoints each event goes to, given its account's active subscriptions. */
function targetsOf(evt: EventEnvelope, subscriptions: { endpoint_id: string; event_types: string[] }[]): Set<string> {
  const targets = new Set<string>();
  // A test event goes to the endpoint it names, subscribed or not.
  const target = (evt.data as { targetEndpointId?: string }).targetEndpointId;
  if (evt.type.startsWith('Webhook.emitted@') && target) targets.add(target);
  else
    for (const s of subscriptions)
      if (s.event_types.some((p) => patternMatches(p, evt.type))) targets.add(s.endpoint_id);
  // Never tell an endpoint about its own failure: a dead endpoint would otherwise feed itself forever.
  const about = (evt.data as { endpointId?: string }).endpointId;
  if (evt.type.startsWith('Webhook.failed@') && about) targets.delete(about);
  return targets;
}

/** An event as the stream gave it: parsed, and its bytes (as text), which are what a webhook delivers. */
export interface StreamEvent {
  evt: EventEnvelope;
  body: string;
  /** The trace its deliveries continue (tracing.ts), when there is one. */ traceparent?: string;
}

/**
 * Each event becomes one delivery row per matching endpoint of its account, and the event itself one row of
 * `webhook_events` (its bytes, once, however many endpoints take it): one read and one statement for a whole
 * batch. Idempotent on (endpoint, event): a redelivered event adds nothing. The rows are the queue; the sender
 * picks them up from Postgres.
 */
export async function fanOut(services: Services, all: StreamEvent[]): Promise<number> {
  const events = all.filter((e) => e.evt.account);
  if (!events.length) return 0;
  const bodies = new Map(events.map((e) => [e.evt.id, e]));
  const accounts = [...new Set(events.map((e) => e.evt.account!))];
  const { rows } = await services.db.query<{ account_id: string; endpoint_id: string; event_types: string[] }>(
    `select s.account_id, s.endpoint_id, s.event_types
       from webhook_subscriptions s join webhook_endpoints e on e.id = s.endpoint_id
      where s.account_id = any($1::text[]) and s.status = 'active' and e.status = 'active'`,
    [accounts],
  );
  const cols = {
    id: [] as string[],
    account: [] as string[],
    endpoint: [] as string[],
    event: [] as string[],
    type: [] as string[],
  };
  const stored = {
    id: [] as string[],
    account: [] as string[],
    body: [] as string[],
    traceparent: [] as (string | null)[],
  };
  for (const { evt, body, traceparent } of events) {
    const targets = targetsOf(
      evt,
      rows.filter((r) => r.account_id === evt.account),
    );
    if (targets.size && bodies.delete(evt.id)) {
      stored.id.push(evt.id);
      stored.account.push(evt.account!);
      stored.body.push(body);
      stored.traceparent.push(traceparent ?? null);
    }
    for (const endpoint of targets) {
      cols.id.push(newId('delivery'));
      cols.account.push(evt.account!);
      cols.endpoint.push(endpoint);
      cols.event.push(evt.id);
      cols.type.push(evt.type);
    }
  }
  if (!cols.id.length) return 0;
  // One statement for every target of every event: a wide fan-out costs one round trip, not one per endpoint.
  const r = await services.db.query(
    `with stored as (
       insert into webhook_events(id, account_id, body, traceparent)
       select * from unnest($7::text[], $8::text[], $9::text[], $10::text[])
       on conflict (id) do nothing)
     insert into webhook_deliveries(id, account_id, endpoint_id, event_id, event_type, next_attempt_at)
     select t.id, t.account_id, t.endpoint_id, t.event_id, t.event_type, $6
       from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
            as t(id, account_id, endpoint_id, event_id, event_type)
      where exists (select 1 from webhook_endpoints e where e.id = t.endpoint_id and e.account_id = t.account_id)
     on conflict (endpoint_id, event_id) do nothing`,
    [
      cols.id,
      cols.account,
      cols.endpoint,
      cols.event,
      cols.type,
      services.clock.now().toISOString(),
      stored.id,
      stored.account,
      stored.body,
      stored.traceparent,
    ],
  );
  return r.rowCount;
}
