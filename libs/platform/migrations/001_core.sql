-- Accounts and keys (the keys issue fills in the lifecycle).
create table accounts (
  id text primary key,
  environment text not null check (environment in ('sandbox', 'live')),
  trust_tier text not null default 'anonymous',
  created_at timestamptz not null default now()
);

create table api_keys (
  id text primary key,
  account_id text not null references accounts(id),
  -- visible, non-secret lookup prefix (environment + id fragment); the secret is stored only as a hash
  prefix text not null unique,
  secret_hash bytea not null,
  scopes text[] not null default array['read', 'act'],
  mandate_binding text not null default 'none',
  trust_tier text not null default 'anonymous',
  status text not null default 'active' check (status in ('active', 'superseded', 'revoked')),
  superseded_by text references api_keys(id),
  grace_until timestamptz,
  created_at timestamptz not null default now(),
  last_rotated_at timestamptz,
  expires_at timestamptz,
  revoked_at timestamptz
);
create index api_keys_account on api_keys(account_id);

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

-- Deals of the workflows pillar (the buy-workflow issue adds its steps and history).
create table deals (
  id text primary key,
  account_id text not null,
  workflow text not null,
  vin text not null,
  state text not null,
  checklist jsonb not null,
  buyer jsonb,
  version integer not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index deals_vin on deals(vin);
