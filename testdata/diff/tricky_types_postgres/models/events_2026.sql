SELECT * FROM analytics.events_2026
