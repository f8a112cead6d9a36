CREATE SCHEMA analytics;
CREATE SCHEMA raw;
CREATE TABLE analytics.orders (
    order_id INTEGER NOT NULL,
    customer_id INTEGER NOT NULL,
    status VARCHAR NOT NULL,
    amount DECIMAL(12,2),
    note VARCHAR,
    "Order Date" DATE,
    "näme" VARCHAR,
    "a.b" INTEGER,
    "1st" INTEGER,
    "quote""d" INTEGER,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE TABLE analytics.items (order_id INTEGER NOT NULL, item_id INTEGER NOT NULL, sku VARCHAR);
CREATE TABLE analytics.customers (customer_id INTEGER NOT NULL, email VARCHAR, tier INTEGER NOT NULL);
CREATE TABLE analytics.payments (payment_id BIGINT NOT NULL, order_id INTEGER, paid_at TIMESTAMP, tags VARCHAR[]);
CREATE TABLE analytics.legacy (id INTEGER, extra VARCHAR);
CREATE TABLE raw.orders (id INTEGER NOT NULL, status VARCHAR, loaded_at TIMESTAMP NOT NULL);
