SELECT * FROM analytics.a
