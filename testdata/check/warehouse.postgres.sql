CREATE SCHEMA shop;
CREATE SCHEMA analytics;
CREATE TABLE shop.orders (id integer, customer_id integer, amount numeric(10,2), status varchar(20));
CREATE TABLE shop.customers (id integer, email text, name text);
CREATE TABLE analytics.order_totals (customer_id integer, orders bigint, total numeric);
INSERT INTO shop.orders VALUES (1, 1, 12.50, 'placed');
