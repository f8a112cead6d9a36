CREATE SCHEMA shop;
CREATE TABLE shop.orders (
    order_id INTEGER NOT NULL,
    customer_id INTEGER NOT NULL,
    ordered_on DATE NOT NULL,
    amount NUMERIC(10,2) NOT NULL,
    quantity INTEGER NOT NULL,
    rush BOOLEAN,
    shipped_on DATE
);
INSERT INTO shop.orders VALUES
    (1, 7, DATE '2026-01-01', 10.00, 2, TRUE, DATE '2026-01-03'),
    (2, 7, DATE '2026-01-02', 30.00, 1, NULL, DATE '2026-02-01'),
    (3, 8, DATE '2026-01-02', 5.50, 5, TRUE, DATE '2026-01-03'),
    (4, 9, DATE '2026-02-10', 12.25, 3, NULL, NULL),
    (5, 8, DATE '2026-02-11', 0.75, 1, NULL, DATE '2026-02-12');
CREATE TABLE shop.balances (
    customer_id INTEGER NOT NULL,
    as_of DATE NOT NULL,
    balance NUMERIC(10,2) NOT NULL
);
INSERT INTO shop.balances VALUES
    (7, DATE '2026-01-01', 100.00), (7, DATE '2026-01-31', 60.00),
    (8, DATE '2026-01-31', 5.00), (8, DATE '2026-02-28', 9.00);
CREATE TABLE shop.refunds (
    order_id INTEGER NOT NULL,
    customer_id INTEGER NOT NULL,
    refunded_on DATE NOT NULL,
    amount NUMERIC(10,2) NOT NULL
);
INSERT INTO shop.refunds VALUES
    (2, 7, DATE '2026-02-03', 30.00), (3, 8, DATE '2026-02-20', 2.50), (5, 8, DATE '2026-03-01', 0.75);
CREATE TABLE shop.calendar AS
SELECT CAST(d AS DATE) AS day,
    CAST(date_trunc('month', d + INTERVAL '20 day') AS DATE) AS fiscal_month
FROM generate_series(DATE '2025-12-30', DATE '2026-02-15', INTERVAL '1 day') AS t(d);
