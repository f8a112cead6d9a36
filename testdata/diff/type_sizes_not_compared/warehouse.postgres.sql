CREATE SCHEMA raw;
CREATE TABLE raw.payments (amount NUMERIC(10,2), note VARCHAR(257), paid_at TIMESTAMP(6));
CREATE TABLE raw.refunds (id BIGINT);
