SELECT id AS event_id, kind, payload, user_id
FROM raw.events
WHERE kind <> 'test'
