-- replaces: 003_money.sql
-- Money and people: payment intents (402 offers), human handoffs, and the spend ledger of delegation mandates.

-- A durable offer (Stripe PaymentIntent style). `settling` is the internal claim taken before the capability
-- runs, so two settles of one intent never both execute it.
create table intents (
  id text primary key,
  account_id text,
  capability text not null,
  input jsonb not null,
  trigger text,
  origin jsonb,
  price jsonb not null,
  ceiling jsonb not null,
  ceiling_cents bigint not null,
  status text not null default 'pending' check (status in ('pending', 'settling', 'settled', 'expired', 'failed')),
  expires_at timestamptz not null,
  claimed_at timestamptz,
  executions integer not null default 0,
  mandate_principal text,
  mandate_id text,
  answer jsonb,
  answer_status integer,
  created_at timestamptz not null default now(),
  settled_at timestamptz
);
create index intents_account on intents(account_id);

-- A NEEDS_HUMAN handoff: the poll rail reads it; completing it may run a capability whose answer is kept here.
create table handoffs (
  id text primary key,
  account_id text,
  verb text not null,
  credential text not null,
  capability text,
  input jsonb,
  trigger text,
  origin jsonb,
  terminus jsonb not null,
  status text not null default 'pending' check (status in ('pending', 'completing', 'completed', 'refused')),
  result jsonb,
  result_status integer,
  created_at timestamptz not null default now(),
  completed_at timestamptz
);
create index handoffs_account on handoffs(account_id);

-- Running total under one mandate, per (principal, mandate id); `digest` pins the mandate's terms at first use.
create table mandate_spend (
  principal text not null,
  mandate_id text not null,
  digest text not null,
  currency text not null,
  ceiling_cents bigint not null,
  spent_cents bigint not null default 0 check (spent_cents <= ceiling_cents),
  updated_at timestamptz not null default now(),
  primary key (principal, mandate_id)
);
