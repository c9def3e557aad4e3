-- The trace an event was written in: its W3C traceparent, published with the event as a message
-- header so its consumers continue that trace. Null when tracing is off.
alter table outbox_events add column traceparent text;
