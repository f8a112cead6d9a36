SELECT * FROM analytics.ghost
