-- replaces: 004_webhooks.sql
-- Webhook endpoints, subscriptions, deliveries and their attempts (the webhook noun and its delivery worker).
create table webhook_endpoints (
  id text primary key,
  account_id text not null,
  url text not null,
  description text,
  -- `whsec_<base64>`; previous_secret keeps signing beside the new one until previous_until (rotation grace)
  secret text not null,
  previous_secret text,
  previous_until timestamptz,
  status text not null default 'active' check (status in ('active', 'disabled')),
  disabled_reason text,
  -- first failure of the current failing streak; a streak longer than the configured days disables the endpoint
  failing_since timestamptz,
  created_at timestamptz not null default now()
);
create index webhook_endpoints_account on webhook_endpoints(account_id);

create table webhook_subscriptions (
  id text primary key,
  account_id text not null,
  endpoint_id text not null references webhook_endpoints(id),
  event_types text[] not null,
  status text not null default 'active' check (status in ('active', 'unsubscribed')),
  created_at timestamptz not null default now()
);
create index webhook_subscriptions_account on webhook_subscriptions(account_id) where status = 'active';

-- One delivery per (endpoint, event): the fan-out is idempotent however often the event is redelivered.
-- The sender claims due rows with FOR UPDATE SKIP LOCKED and a lease (locked_until), so workers scale out.
create table webhook_deliveries (
  id text primary key,
  account_id text not null,
  endpoint_id text not null references webhook_endpoints(id),
  event_id text not null,
  event_type text not null,
  payload jsonb not null,
  status text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
  attempt_count integer not null default 0,
  next_attempt_at timestamptz,
  locked_until timestamptz,
  created_at timestamptz not null default now(),
  delivered_at timestamptz,
  unique (endpoint_id, event_id)
);
create index webhook_deliveries_due on webhook_deliveries(next_attempt_at) where status = 'pending';
create index webhook_deliveries_account on webhook_deliveries(account_id, created_at);

create table webhook_attempts (
  id bigserial primary key,
  delivery_id text not null references webhook_deliveries(id),
  attempted_at timestamptz not null default now(),
  status_code integer,
  latency_ms integer not null,
  outcome text not null,
  response_snippet text not null default ''
);
create index webhook_attempts_delivery on webhook_attempts(delivery_id, id);

-- Going live: submitted connections (credential encrypted at rest) and the demand signals that rank them.
create table connections (
  id text primary key,
  account_id text not null,
  kind text not null check (kind in ('dealer-system', 'consumer-account')),
  system text not null,
  nouns text[] not null,
  credential_ciphertext bytea not null,
  credential_iv bytea not null,
  credential_tag bytea not null,
  status text not null default 'queued',
  submitted_at timestamptz not null default now()
);
create index connections_system on connections(system);

-- Distinct accounts seen calling each noun (from the event stream), with the last time.
create table noun_demand (
  noun text not null,
  account_id text not null,
  last_seen timestamptz not null,
  primary key (noun, account_id)
);
