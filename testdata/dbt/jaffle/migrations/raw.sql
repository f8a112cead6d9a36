-- The raw tables the jaffle dbt project reads, with a few rows; portable to DuckDB and Postgres.
create schema raw;

create table raw.customers (
    id integer not null,
    first_name text,
    last_name text,
    email varchar(256),
    created_at timestamp
);

create table raw.orders (
    id integer not null,
    customer_id integer,
    status text,
    ordered_at timestamp,
    amount_cents integer
);

create table raw.payments (
    id integer not null,
    order_id integer,
    method text,
    amount numeric(38, 3)
);

-- Each column as dbt's DDL spells the data_type of sources/types (`string` becomes `text`).
create table raw.types (
    c_int int,
    c_integer integer,
    c_bigint bigint,
    c_string text,
    c_text text,
    c_varchar varchar,
    c_varchar_256 varchar(256),
    c_numeric numeric(38,3),
    c_decimal decimal(10,2),
    c_float float,
    c_float8 float8,
    c_boolean boolean,
    c_date date,
    c_timestamp timestamp,
    c_timestamptz timestamptz
);

insert into raw.customers values
    (1, 'Ada', 'Lovelace', 'ada@example.com', '2026-01-02 10:00:00'),
    (2, 'Alan', 'Turing', 'alan@example.com', '2026-01-03 11:00:00');

insert into raw.orders values
    (10, 1, 'completed', '2026-02-01 09:00:00', 1250),
    (11, 1, 'returned', '2026-02-03 09:30:00', 800),
    (12, 2, 'placed', '2026-02-04 12:00:00', 4300);

insert into raw.payments values
    (100, 10, 'card', 12.500),
    (101, 11, 'coupon', 8.000),
    (102, 12, 'card', 43.000);
