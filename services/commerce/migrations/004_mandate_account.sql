-- replaces: 006_mandate_account.sql
-- A mandate's spend belongs to the account that presents it: the principal and mandate id are the caller's own
-- words, not verified in the sandbox, so another account naming the same pair must not spend it down.
alter table mandate_spend add column account_id text not null default '';
alter table mandate_spend drop constraint mandate_spend_pkey;
alter table mandate_spend add primary key (account_id, principal, mandate_id);
