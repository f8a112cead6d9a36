CREATE SCHEMA analytics;
CREATE TYPE mood AS ENUM ('happy', 'sad');
CREATE TABLE analytics.types (
    s STRUCT(a INTEGER, b VARCHAR), m MAP(VARCHAR, INTEGER), l INTEGER[], h HUGEINT,
    e ENUM('x', 'y'), md mood, fa INTEGER[3], u UBIGINT, v VARCHAR, d DECIMAL(18,3), f FLOAT,
    dbl DOUBLE, ts TIMESTAMPTZ, un UNION(n INTEGER, s VARCHAR), big BIGINT NOT NULL
);
