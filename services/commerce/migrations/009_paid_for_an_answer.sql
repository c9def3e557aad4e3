-- Paying only for an answer (libs/contract lifecycles.ts): a payment the facilitator verified is held, unsent, while
-- its intent's capability runs; then it is sent (settling) or voided (the answer not worth its price: nothing moves).
-- An intent whose answer is worth its price is charging (the answer stored and withheld) until its payment is
-- proven. A payment that never reached the facilitator is not a state of its own any more: nothing was sent, so the
-- rows of that kind are let go (the same payment presented again is verified afresh).
delete from payments where status = 'released';
alter table payments drop constraint if exists payments_status_check;
alter table payments add constraint payments_status_check
  check (status in ('held', 'settling', 'unknown', 'settled', 'voided', 'refused', 'expired'));
drop index if exists payments_one_per_intent;
create unique index payments_one_per_intent on payments(intent_id) where status in ('held', 'settling', 'unknown', 'settled');
drop index if exists payments_open;
create index payments_open on payments(lease_until) where status in ('held', 'settling', 'unknown');
alter table intents drop constraint if exists intents_status_check;
alter table intents add constraint intents_status_check
  check (status in ('pending', 'settling', 'charging', 'settled', 'failed', 'expired'));
-- When a paid answer reached its payer (the request that paid got it, or a later one). Paid for and never delivered,
-- it is owed: the same wallet's next payment for the same capability and input is answered with it, unsettled.
alter table intents add column delivered_at timestamptz;
create index payments_owed on payments(lower(payer)) where status in ('held', 'settling', 'unknown', 'settled');
