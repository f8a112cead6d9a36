SELECT * FROM analytics.types_drift
