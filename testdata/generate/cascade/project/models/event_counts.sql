SELECT event_id, count(*) AS n
FROM stg_events
GROUP BY event_id
