CREATE SCHEMA raw;
CREATE SCHEMA analytics;
CREATE TABLE raw.orders_raw (id INTEGER);
CREATE TABLE analytics.orders (id INTEGER, customer_id INTEGER, amount NUMERIC(10,2), status VARCHAR(40), big BIGINT, email VARCHAR, placed_at TIMESTAMP, legacy_flag BOOLEAN);
INSERT INTO analytics.orders VALUES
    (1, 10, 12.50, 'placed', 1, 'a@example.com', TIMESTAMP '2026-01-01 10:00:00', true),
    (2, 11, 99.99, 'shipped', 3000000000, NULL, TIMESTAMP '2026-01-02 10:00:00', false);
CREATE VIEW analytics.order_summary AS SELECT id FROM analytics.orders;
-- A reader outside the project: customer_id cannot be retyped under it.
CREATE VIEW analytics.orders_by_customer AS SELECT customer_id, count(*) AS n FROM analytics.orders GROUP BY customer_id;
