CREATE SCHEMA raw;
CREATE SCHEMA analytics;
-- The loader widened the key; the models' tables were built before, and are rebuilt later.
CREATE TABLE raw.events (id BIGINT NOT NULL, kind VARCHAR);
CREATE TABLE analytics.stg_events (event_id INTEGER, kind VARCHAR);
CREATE TABLE analytics.event_counts (event_id INTEGER, n BIGINT);
