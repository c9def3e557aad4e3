-- The trace of the event's fan-out: each delivery of the event continues it. Null when tracing is off.
alter table webhook_events add column traceparent text;
