-- An event's bytes are the text its producer wrote: kept as text, published as it is, so the
-- stream, and every webhook body made from it, carries exactly what was emitted. As jsonb the relay had to
-- serialize it again, with jsonb's key order and spacing.
alter table outbox_events alter column payload type text using payload::text;
