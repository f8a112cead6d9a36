-- Tonight's build of the shop's marts into the "staging" schema, as an orchestrator (dbt
-- with a staging target, a cron job) would make it: `CREATE TABLE AS`, so without NOT NULL.
-- scripts/demo builds it beside migrations/ and publishes it into analytics with
-- `sqb promote --from staging --to prod`, once its contracts and audits hold (docs/promote.md).
CREATE SCHEMA staging;
CREATE TABLE staging.fct_orders AS SELECT * FROM analytics.fct_orders;
INSERT INTO staging.fct_orders VALUES
    (104, 1, TIMESTAMP WITH TIME ZONE '2026-04-06 09:30:00+00', 'placed', 'delivery', 140.00, true);
CREATE TABLE staging.dim_customers AS SELECT * FROM analytics.dim_customers;
