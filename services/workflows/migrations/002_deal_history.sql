-- replaces: 005_deals.sql
-- The buy workflow: who opened a deal (so the background consumer can act on its behalf),
-- where it stands, and its append-only history of past-tense events.
alter table deals add column if not exists key_id text;
alter table deals add column if not exists environment text not null default 'sandbox';
alter table deals add column if not exists current_step integer;
create index if not exists deals_account_vin on deals(account_id, vin);

create table if not exists deal_events (
  seq bigserial primary key,
  id text not null unique,
  deal_id text not null references deals(id),
  type text not null,
  step integer,
  data jsonb not null,
  occurred_at timestamptz not null default now()
);
create index if not exists deal_events_deal on deal_events(deal_id, seq);
