SELECT * FROM analytics.payments
