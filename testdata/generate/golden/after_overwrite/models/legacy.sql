SELECT * FROM analytics.legacy
