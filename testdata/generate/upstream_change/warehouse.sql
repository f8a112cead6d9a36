CREATE SCHEMA analytics;
CREATE SCHEMA raw;
CREATE TABLE raw.payments (amount VARCHAR);
CREATE TABLE analytics.amounts (amount VARCHAR);
CREATE TABLE analytics.totals (amount INTEGER);
