-- replaces: 002_keys.sql
-- Append-only history of every key transition (created, minted, rotated, revoked, scoped).
-- Holds ids, prefixes and scopes only: never a secret.
create table api_key_events (
  seq bigserial primary key,
  key_id text not null references api_keys(id),
  account_id text not null references accounts(id),
  type text not null,
  data jsonb not null default '{}'::jsonb,
  occurred_at timestamptz not null
);
create index api_key_events_key on api_key_events(key_id, seq);
