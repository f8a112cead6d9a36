SELECT * FROM analytics.ft
