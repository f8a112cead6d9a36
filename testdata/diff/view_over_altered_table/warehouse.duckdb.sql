CREATE SCHEMA raw;
CREATE SCHEMA analytics;
CREATE TABLE raw.payments (amount DECIMAL(38,3));
CREATE VIEW analytics.payments AS SELECT amount FROM raw.payments;
ALTER TABLE raw.payments ALTER amount TYPE DECIMAL(10,2);
