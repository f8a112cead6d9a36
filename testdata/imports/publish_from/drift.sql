-- What tests/imports.rs (imports verify) does to the warehouse after the consumer vendored the
-- snapshot: a published column dropped, one retyped, a published model's relation gone.
ALTER TABLE analytics.fct_orders DROP COLUMN amount;
ALTER TABLE analytics.fct_orders ALTER COLUMN order_id TYPE BIGINT;
DROP TABLE analytics.dim_customers;
