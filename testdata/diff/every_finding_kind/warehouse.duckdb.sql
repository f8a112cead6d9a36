CREATE SCHEMA analytics;
CREATE TABLE analytics.orders (orderid INTEGER NOT NULL, amount BIGINT, note VARCHAR, flag BOOLEAN, extra INTEGER, code VARCHAR);
CREATE TABLE analytics.base (id INTEGER);
-- DuckDB keeps a view's columns after what it reads is dropped: the view no longer binds.
CREATE VIEW analytics.broken AS SELECT id FROM analytics.base;
DROP TABLE analytics.base;
