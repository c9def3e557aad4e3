-- Exactly once: a capability run under an execution id (a settled intent, a completed handoff, a deal step)
-- records that id in the same transaction as its effects and outbox events. A retry after a lost reply or an
-- expired lease finds the row and answers the stored answer; a stalled first attempt that wakes late cannot
-- insert it a second time, so its transaction rolls back and its effects never land twice.
create table capability_commits (
  execution_id text primary key,
  capability text not null,
  status integer not null,
  answer jsonb not null,
  committed_at timestamptz not null default now()
);
