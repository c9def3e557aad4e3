-- replaces: 001_core.sql
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
