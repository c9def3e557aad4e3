-- Deliveries carry an event id, not a payload: each event a webhook delivers is stored once, as
-- the bytes the stream gave, and every delivery of it sends exactly those bytes.
create table webhook_events (
  id text primary key,
  account_id text not null,
  body text not null,
  created_at timestamptz not null default now()
);
-- Rows made before this migration keep their jsonb copy and are sent from it; new rows leave it null.
alter table webhook_deliveries alter column payload drop not null;
