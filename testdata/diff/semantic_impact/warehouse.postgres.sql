CREATE SCHEMA analytics;
CREATE TABLE analytics.payments (payment_id INTEGER, method INTEGER);
