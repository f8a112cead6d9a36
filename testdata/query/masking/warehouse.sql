CREATE SCHEMA shop;
CREATE TABLE shop.customers (
    customer_id INTEGER NOT NULL,
    email VARCHAR NOT NULL,
    referred_by INTEGER
);
INSERT INTO shop.customers VALUES
    (1, 'ada@example.com', NULL),
    (2, 'bob@example.com', 1),
    (3, 'cy@example.com', 1);
CREATE TABLE shop.orders (
    order_id INTEGER NOT NULL,
    customer_id INTEGER NOT NULL,
    amount NUMERIC(10,2) NOT NULL
);
INSERT INTO shop.orders VALUES
    (10, 1, 5.00), (11, 2, 7.00), (12, 2, 8.00), (13, 3, 9.00);
