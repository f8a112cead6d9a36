CREATE SCHEMA shop;
CREATE SCHEMA analytics;
CREATE TABLE shop.orders (id INTEGER, customer_id INTEGER, amount DECIMAL(10,2), status VARCHAR);
CREATE TABLE shop.customers (id INTEGER, email VARCHAR, name VARCHAR);
CREATE TABLE analytics.order_totals (customer_id INTEGER, orders BIGINT, total DECIMAL(38,2));
INSERT INTO shop.orders VALUES (1, 1, 12.50, 'placed');
