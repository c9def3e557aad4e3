-- One model of the money (libs/contract lifecycles.ts): a payment is settling (sent, under a lease), unknown (not
-- proven final: decided from the chain), settled, refused (by the facilitator before any broadcast), released (the
-- facilitator never reached: nothing sent) or expired (a block past validBefore with the nonce unused).
update payments set status = 'settling' where status = 'verifying';
alter table payments drop constraint if exists payments_status_check;
alter table payments add constraint payments_status_check
  check (status in ('settling', 'unknown', 'settled', 'refused', 'released', 'expired'));
drop index if exists payments_one_per_intent;
create unique index payments_one_per_intent on payments(intent_id) where status in ('settling', 'settled', 'unknown');
-- The one lease: who may drive the payment now (a request, or the reconciler once it ran out); no time heuristics.
alter table payments add column lease_until timestamptz;
-- Who pays, stored when the payment binds: what the reconciler finishes is run and counted for that account.
alter table payments add column account_id text;
alter table payments add column key_id text;
alter table payments add column environment text;
drop index if exists payments_open;
create index payments_open on payments(lease_until) where status in ('settling', 'unknown');
