-- One durable execution for every paid or authorised run of a capability: a settled intent (by x402, the key
-- route, Accept-Price or a Mandate), a completed handoff, a deal step. One mechanism claims it under a lease,
-- runs it with its id (the pillar commits its effects under that id once, ever: capability_commits), and records
-- its answer; a reconciler takes up every execution whose lease ran out, so nothing sticks.
create table executions (
  id text primary key,
  source text not null check (source in ('intent', 'handoff', 'deal')),
  source_id text not null,
  capability text not null,
  input jsonb not null,
  ctx jsonb not null,
  origin jsonb,
  -- ready: to be run (again); running: claimed until lease_until; succeeded / failed: its answer is final.
  status text not null check (status in ('ready', 'running', 'succeeded', 'failed')),
  lease_until timestamptz,
  attempts integer not null default 0,
  answer jsonb,
  answer_status integer,
  created_at timestamptz not null,
  finished_at timestamptz,
  unique (source, source_id)
);
create index executions_due on executions(lease_until) where status in ('ready', 'running');
