-- The "dev" namespace of the shop demo: a developer's build that has drifted from the
-- declarations, so that `sqb contract diff --from dev` has something to report.

CREATE SCHEMA dev;

CREATE VIEW dev.stg_customers AS
SELECT id AS customer_id, name, email, created_at
FROM raw.customers;

CREATE VIEW dev.stg_orders AS
SELECT id AS order_id, customer_id, ordered_at, status, fulfillment, amount
FROM raw.orders;

-- amount widened to NUMERIC(14,2), is_large dropped, a new discount column added.
CREATE TABLE dev.fct_orders (
    order_id INTEGER NOT NULL,
    customer_id INTEGER NOT NULL,
    ordered_at TIMESTAMP WITH TIME ZONE NOT NULL,
    status VARCHAR(20) NOT NULL,
    fulfillment VARCHAR(20),
    amount NUMERIC(14,2) NOT NULL,
    discount NUMERIC(12,2)
);

-- dim_customers has not been built in dev yet.
