-- What settlements count (GET /keys/me's `settlements` and `charged`, per account and capability), written in the
-- statement that settles each one (an execution's answer recorded, a paid intent collecting or withholding), guarded
-- like its events: counted exactly once, with the money, whatever process dies where.
create table settlement_usage (
  account_id text not null,
  capability text not null,
  settlements bigint not null default 0,
  charged_cents bigint not null default 0,
  primary key (account_id, capability)
);
