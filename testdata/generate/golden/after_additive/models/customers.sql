SELECT * FROM analytics.customers
