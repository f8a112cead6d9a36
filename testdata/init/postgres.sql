-- A small existing warehouse for `sqb init`: two schemas with relations of every kind sqb
-- reads (tables, a view, a materialized view, a partitioned table), an enum, an array, a bare
-- numeric, a mixed-case table with a space, and an empty schema.
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');

CREATE TABLE customers (
    id serial PRIMARY KEY,
    name varchar(100) NOT NULL,
    email text,
    mood mood,
    tags text[],
    balance numeric,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE orders (
    id bigint PRIMARY KEY,
    customer_id integer NOT NULL REFERENCES customers (id),
    amount numeric(10, 2) NOT NULL,
    placed_on date
);

CREATE TABLE "Order Items" ("OrderId" bigint, qty smallint NOT NULL);

CREATE TABLE events (id bigint NOT NULL, at date NOT NULL, payload jsonb) PARTITION BY RANGE (at);
CREATE TABLE events_2026 PARTITION OF events FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');

CREATE VIEW big_orders AS SELECT * FROM orders WHERE amount > 100;
CREATE MATERIALIZED VIEW order_totals AS
    SELECT customer_id, sum(amount) AS total FROM orders GROUP BY customer_id;

CREATE SCHEMA staging;
CREATE TABLE staging.orders (id bigint, raw jsonb);

CREATE SCHEMA empty_one;
