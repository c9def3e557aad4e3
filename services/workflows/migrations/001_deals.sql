-- replaces: 001_core.sql
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
