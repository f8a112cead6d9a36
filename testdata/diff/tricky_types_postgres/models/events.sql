SELECT * FROM analytics.events
