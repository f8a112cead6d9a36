-- The raw tables the semantic fixture's models read (scripts/dbt-fixture loads them).
create schema raw;

create table raw.customers (id integer, name varchar, segment varchar);
insert into raw.customers values
    (1, 'Ada', 'enterprise'),
    (2, 'Ben', 'smb'),
    (3, 'Cy', 'smb'),
    (4, 'Dee', null),
    (5, 'Eve', 'enterprise');

create table raw.orders (
    id integer, customer_id integer, ordered_at timestamp, status varchar, amount_cents integer
);
insert into raw.orders values
    (1, 1, '2024-01-03 10:00:00', 'completed', 1250),
    (2, 1, '2024-01-03 15:30:00', 'completed', 4999),
    (3, 2, '2024-01-09 09:12:00', 'returned', 2000),
    (4, 3, '2024-01-21 18:45:00', 'completed', 7525),
    (5, 4, '2024-02-01 08:00:00', 'placed', 310),
    (6, 5, '2024-02-02 11:11:00', 'completed', 12000),
    (7, 2, '2024-02-14 20:20:00', null, 999),
    (8, 3, '2024-02-29 23:59:00', 'completed', 5000),
    (9, 1, '2024-03-01 00:00:00', 'shipped', 6575),
    (10, 5, '2024-03-15 12:00:00', 'completed', 1),
    (11, 4, '2024-03-15 13:00:00', 'returned', 8800),
    (12, 2, '2024-03-30 07:07:00', 'completed', 4321);

create table raw.balances (customer_id integer, balance_date date, balance decimal(12, 2));
insert into raw.balances values
    (1, '2024-01-31', 100.00), (1, '2024-02-29', 150.50), (1, '2024-03-31', 90.25),
    (2, '2024-01-31', 20.00), (2, '2024-03-31', 35.00),
    (3, '2024-02-29', 410.10), (3, '2024-03-31', 400.00),
    (4, '2024-01-31', 75.00), (5, '2024-04-30', 12.00);

-- Refunds: paid out (`refunded_at`, the default time of their measures) some time after they
-- were asked for (`requested_at`, the time of the request count); April has refunds and no
-- orders, and one refund is for a customer without a segment.
create table raw.refunds (
    id integer, order_id integer, customer_id integer, requested_at timestamp,
    refunded_at timestamp, reason varchar, amount_cents integer
);
insert into raw.refunds values
    (1, 3, 2, '2024-01-10 10:00:00', '2024-01-12 09:00:00', 'damaged', 2000),
    (2, 11, 4, '2024-03-16 08:00:00', '2024-04-02 10:00:00', 'late', 8800),
    (3, 6, 5, '2024-02-03 12:00:00', '2024-02-03 18:00:00', 'damaged', 1500),
    (4, 7, 2, '2024-02-20 09:00:00', '2024-03-01 00:00:00', null, 999),
    (5, 1, 1, '2024-01-31 23:30:00', '2024-02-01 00:30:00', 'late', 250);
