-- x402's payment-identifier extension: a client's own id for a payment (16-128 characters). The same id with the
-- same payment is the same payment (its stored answer, no second transfer); with another payment it is refused.
alter table payments add column payment_identifier text;
create unique index payments_identifier on payments(payment_identifier) where payment_identifier is not null;
