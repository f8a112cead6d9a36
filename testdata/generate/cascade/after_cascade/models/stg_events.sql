SELECT id AS event_id, kind
FROM raw.events
