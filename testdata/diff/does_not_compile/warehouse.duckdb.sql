CREATE SCHEMA analytics;
