SELECT u.email, count(*) AS events, max(e.id) AS last_event_id
FROM raw.events AS e
JOIN raw.users AS u ON u.id = e.user_id
GROUP BY u.email
