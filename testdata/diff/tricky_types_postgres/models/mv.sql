SELECT * FROM analytics.mv
