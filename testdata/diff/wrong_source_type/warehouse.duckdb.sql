CREATE SCHEMA raw;
CREATE SCHEMA analytics;
CREATE TABLE raw.events (id BIGINT NOT NULL, kind VARCHAR);
CREATE VIEW analytics.stg_events AS SELECT id AS event_id, kind FROM raw.events;
CREATE VIEW analytics.event_counts AS SELECT event_id, count(*) AS n FROM analytics.stg_events GROUP BY event_id;
