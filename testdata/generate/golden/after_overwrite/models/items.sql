SELECT * FROM analytics.items
