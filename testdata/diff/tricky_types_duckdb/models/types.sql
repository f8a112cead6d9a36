SELECT * FROM analytics.types
