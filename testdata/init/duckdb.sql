-- The DuckDB warehouse for `sqb init`: tables and a view in `main`, one table in `raw`.
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE customers (
    id INTEGER PRIMARY KEY,
    name VARCHAR NOT NULL,
    mood mood,
    tags VARCHAR[],
    balance DECIMAL(18, 3),
    created_at TIMESTAMPTZ NOT NULL
);
CREATE TABLE orders (id BIGINT NOT NULL, customer_id INTEGER NOT NULL, amount DECIMAL(10, 2), placed_on DATE);
CREATE VIEW big_orders AS SELECT * FROM orders WHERE amount > 100;
CREATE SCHEMA raw;
CREATE TABLE raw.payments (id BIGINT, "Amount" DOUBLE, props STRUCT(a INTEGER, b VARCHAR));
