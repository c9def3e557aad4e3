-- x402 payments: each authorisation (network, asset, payer, nonce) is bound to one intent only, and an intent has at
-- most one payment in flight or settled. `unknown` is a settlement whose outcome the facilitator did not tell: the
-- reconciler decides it from the chain (the token's authorizationState) and never lets it become a second charge.
create table payments (
  id text primary key,
  intent_id text not null,
  network text not null,
  asset text not null,
  pay_to text not null,
  payer text not null,
  nonce text not null,
  amount_atomic text not null,
  valid_before text not null,
  x402_version integer not null,
  payload jsonb not null,
  requirements jsonb not null,
  status text not null check (status in ('verifying', 'settling', 'settled', 'unknown', 'refused', 'expired')),
  reason text,
  transaction text,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
-- One authorisation, one intent: addresses and nonces compare without case (EIP-55 case is only a checksum).
create unique index payments_authorization on payments(network, lower(asset), lower(payer), lower(nonce));
create unique index payments_one_per_intent on payments(intent_id) where status in ('verifying', 'settling', 'settled', 'unknown');
create index payments_open on payments(updated_at) where status in ('verifying', 'settling', 'unknown');

-- What a settlement collected (cents of the offer's currency) and the payment that paid it.
alter table intents add column charged_cents bigint not null default 0;
alter table intents add column payment_id text;
