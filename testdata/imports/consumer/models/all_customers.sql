-- Reads every column of dim_customers, with `*`.
SELECT * FROM analytics.dim_customers
