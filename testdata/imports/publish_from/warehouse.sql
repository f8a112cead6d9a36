-- The producer's prod namespace for tests/imports.rs (publish --from): one relation per
-- published model, as a build would leave them.
CREATE SCHEMA analytics;
CREATE TABLE analytics.fct_orders (
    order_id INTEGER NOT NULL,
    customer_id INTEGER NOT NULL,
    amount NUMERIC(10,2),
    status VARCHAR(255) NOT NULL,
    note VARCHAR(255),
    quantity INTEGER
);
CREATE TABLE analytics.dim_customers (
    customer_id INTEGER NOT NULL,
    name VARCHAR(100) NOT NULL,
    lifetime_orders BIGINT
);
CREATE TABLE analytics.fct_events (
    event_id BIGINT NOT NULL,
    payload VARCHAR(200)
);
