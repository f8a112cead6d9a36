CREATE SCHEMA raw;
CREATE TABLE raw.payments (amount DECIMAL(10,2), note VARCHAR, paid_at TIMESTAMP);
CREATE TABLE raw.refunds (id BIGINT);
