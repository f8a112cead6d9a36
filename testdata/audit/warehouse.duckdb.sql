CREATE SCHEMA shop;
CREATE SCHEMA analytics;
CREATE TABLE shop.customers (id INTEGER, email VARCHAR, active BOOLEAN);
INSERT INTO shop.customers VALUES
    (1, 'ada@example.com', true), (2, 'bob@example.com', true), (2, 'bob2@example.com', false),
    (NULL, 'nobody@example.com', false), (4, NULL, true), (5, NULL, false), (6, 'ada@example.com', false);
CREATE TABLE shop.orders (id INTEGER, customer_id INTEGER, status VARCHAR, amount DECIMAL(10,2), channel VARCHAR, note VARCHAR);
INSERT INTO shop.orders VALUES
    (1, 1, 'placed', 10.00, 'web', NULL), (2, 2, 'shipped', 950.00, 'web', NULL),
    (3, 99, 'lost', -5.00, 'web', NULL), (4, 99, 'lost', 13.50, 'web', NULL),
    (5, NULL, 'unknown', 20.00, 'web', NULL), (6, 4, NULL, 1000.00, 'web', NULL);
CREATE TABLE shop.events (happened_on DATE);
INSERT INTO shop.events VALUES (CAST(CAST(now() AS TIMESTAMP) AS DATE) - 3), (CAST(CAST(now() AS TIMESTAMP) AS DATE) - 5);
CREATE VIEW analytics.order_amounts AS SELECT o.id AS order_id, o.customer_id, o.amount FROM shop.orders AS o;
