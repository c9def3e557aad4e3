-- An answer owed to a wallet is looked for among that wallet's payments whose answer it has not received, not among
-- every payment it ever made: a payment's delivered_at (set with its intent's) takes it out of the owed index, so
-- the paid call's first read costs the same on a wallet's ten-thousandth payment as on its first. The states are
-- the table's (libs/contract lifecycles.ts): a payment in flight, or proven.
alter table payments add column delivered_at timestamptz;
update payments p set delivered_at = i.delivered_at
  from intents i where i.id = p.intent_id and i.delivered_at is not null;
drop index if exists payments_owed;
create index payments_owed on payments(lower(payer))
  where delivered_at is null and status in ('held', 'settling', 'unknown', 'settled');
