-- The shop demo warehouse: raw tables loaded by a tool, and the analytics namespace that the
-- example project's models build (target "prod"). Plain SQL that runs on Postgres and DuckDB.

CREATE SCHEMA raw;
CREATE SCHEMA analytics;

CREATE TABLE raw.customers (
    id INTEGER NOT NULL,
    name VARCHAR(100) NOT NULL,
    email VARCHAR(255),
    created_at TIMESTAMP WITH TIME ZONE NOT NULL
);

CREATE TABLE raw.orders (
    id INTEGER NOT NULL,
    customer_id INTEGER NOT NULL,
    ordered_at TIMESTAMP WITH TIME ZONE NOT NULL,
    status VARCHAR(20) NOT NULL,
    fulfillment VARCHAR(20),
    amount NUMERIC(12,2) NOT NULL
);

INSERT INTO raw.customers VALUES
    (1, 'Ada Lovelace', 'ada@example.com', TIMESTAMP WITH TIME ZONE '2026-01-03 10:00:00+00'),
    (2, 'Grace Hopper', NULL, TIMESTAMP WITH TIME ZONE '2026-02-11 08:30:00+00'),
    (3, 'Edsger Dijkstra', 'ewd@example.com', TIMESTAMP WITH TIME ZONE '2026-03-20 17:45:00+00');

INSERT INTO raw.orders VALUES
    (100, 1, TIMESTAMP WITH TIME ZONE '2026-04-01 09:00:00+00', 'shipped', 'delivery', 120.50),
    (101, 1, TIMESTAMP WITH TIME ZONE '2026-04-03 12:15:00+00', 'placed', 'pickup', 35.00),
    (102, 2, TIMESTAMP WITH TIME ZONE '2026-04-04 18:40:00+00', 'shipped', 'delivery', 89.99),
    (103, 3, TIMESTAMP WITH TIME ZONE '2026-04-05 07:05:00+00', 'cancelled', NULL, 12.00);

CREATE VIEW analytics.stg_customers AS
SELECT id AS customer_id, name, email, created_at
FROM raw.customers;

CREATE VIEW analytics.stg_orders AS
SELECT id AS order_id, customer_id, ordered_at, status, fulfillment, amount
FROM raw.orders;

CREATE TABLE analytics.fct_orders (
    order_id INTEGER NOT NULL,
    customer_id INTEGER NOT NULL,
    ordered_at TIMESTAMP WITH TIME ZONE NOT NULL,
    status VARCHAR(20) NOT NULL,
    fulfillment VARCHAR(20),
    amount NUMERIC(12,2) NOT NULL,
    is_large BOOLEAN NOT NULL
);

INSERT INTO analytics.fct_orders
SELECT order_id, customer_id, ordered_at, status, fulfillment, amount, amount >= 100
FROM analytics.stg_orders;

CREATE TABLE analytics.dim_customers (
    customer_id INTEGER NOT NULL,
    name VARCHAR(100) NOT NULL,
    email VARCHAR(255),
    first_ordered_at TIMESTAMP WITH TIME ZONE,
    order_count BIGINT NOT NULL,
    lifetime_value NUMERIC(14,2) NOT NULL
);

INSERT INTO analytics.dim_customers
SELECT c.customer_id, c.name, c.email, min(o.ordered_at), count(o.order_id),
       CAST(coalesce(sum(o.amount), 0) AS NUMERIC(14,2))
FROM analytics.stg_customers AS c
LEFT JOIN analytics.stg_orders AS o ON o.customer_id = c.customer_id
GROUP BY c.customer_id, c.name, c.email;
