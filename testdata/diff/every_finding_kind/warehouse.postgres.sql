CREATE SCHEMA analytics;
CREATE TABLE analytics.orders (orderid integer NOT NULL, amount bigint, note text, flag boolean, extra integer, code varchar(3));
-- Postgres catalogs always expose a relation's columns: the view `broken` is simply read.
CREATE VIEW analytics.broken AS SELECT 1 AS id;
