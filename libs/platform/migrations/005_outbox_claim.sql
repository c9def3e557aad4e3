-- A relay claims the rows it publishes until claimed_until, instead of holding a transaction open across the
-- publishes: a claim and a mark are two statements where BEGIN, a locking read, a mark and COMMIT were four.
-- A claim that runs out (its relay died or stalled) is taken again; the stream drops a republish by event id.
alter table outbox_events add column claimed_until timestamptz;
