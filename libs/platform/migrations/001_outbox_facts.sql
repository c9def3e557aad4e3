-- replaces: 001_core.sql
-- Transactional outbox: an event row is written in the same transaction as the change that caused it,
-- then relayed to the JetStream stream with Nats-Msg-Id = id (so a replayed relay never doubles it).
create table outbox_events (
  seq bigserial primary key,
  id text not null unique,
  type text not null,
  subject text not null,
  account_id text,
  vin text,
  payload jsonb not null,
  created_at timestamptz not null default now(),
  published_at timestamptz
);
create index outbox_unpublished on outbox_events(seq) where published_at is null;
create index outbox_vin on outbox_events(vin);

-- Facts posted by capabilities that ran for a VIN: the VIN record is read from here.
create table vin_facts (
  vin text not null,
  noun text not null,
  capability text not null,
  account_id text,
  answer text not null,
  value jsonb not null,
  posted_at timestamptz not null default now(),
  primary key (vin, capability)
);
