SELECT * FROM analytics.broken
