SELECT * FROM analytics.orders
