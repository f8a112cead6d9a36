CREATE SCHEMA analytics;
CREATE TYPE analytics.mood AS ENUM ('happy', 'sad');
CREATE DOMAIN analytics.positive_int AS integer CHECK (VALUE > 0);
CREATE TABLE analytics.types (
    v255 varchar(255), t text, n numeric(12,2), nb numeric, ts timestamptz, tags text[],
    moods analytics.mood[], m analytics.mood, p analytics.positive_int, u uuid, j jsonb,
    f float8, r real, c char(3), i4 int4[], big bigint NOT NULL
);
CREATE MATERIALIZED VIEW analytics.mv AS SELECT 1::int AS id, 'x'::varchar(10) AS name;
CREATE TABLE analytics.events (id int NOT NULL, at date NOT NULL) PARTITION BY RANGE (at);
CREATE TABLE analytics.events_2026 PARTITION OF analytics.events FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
CREATE EXTENSION file_fdw;
CREATE SERVER files FOREIGN DATA WRAPPER file_fdw;
CREATE FOREIGN TABLE analytics.ft (id integer NOT NULL, name text) SERVER files OPTIONS (filename '/dev/null');
