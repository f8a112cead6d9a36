-- A drift history as sqb wrote it before schema 2 (no `runs.command`, no
-- `findings.audit_name`): one night of `contract diff --from prod` with one finding.
-- tests/drift_history.rs appends an audit run to it (migrating it) and reads it as it is.
CREATE TABLE sqb_history (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL);
CREATE TABLE runs (
    run_id BIGINT PRIMARY KEY,
    run_at TIMESTAMP NOT NULL,
    target VARCHAR NOT NULL,
    engine VARCHAR NOT NULL,
    database_name VARCHAR NOT NULL,
    schema_name VARCHAR NOT NULL,
    sqb_version VARCHAR NOT NULL,
    git_commit VARCHAR,
    resources INTEGER NOT NULL,
    findings INTEGER NOT NULL,
    errors INTEGER NOT NULL,
    warnings INTEGER NOT NULL,
    infos INTEGER NOT NULL
);
CREATE TABLE run_kinds (run_id BIGINT NOT NULL, kind VARCHAR NOT NULL, count INTEGER NOT NULL);
CREATE TABLE findings (
    run_id BIGINT NOT NULL,
    fingerprint VARCHAR NOT NULL,
    resource_type VARCHAR NOT NULL,
    resource_name VARCHAR NOT NULL,
    relation VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,
    column_name VARCHAR,
    severity VARCHAR NOT NULL,
    message VARCHAR NOT NULL
);
INSERT INTO sqb_history VALUES ('format', 'sqb.drift-history'), ('schema_version', '1');
INSERT INTO runs VALUES (1, TIMESTAMP '2026-10-31 02:00:00', 'prod', 'duckdb', 'w', 'analytics',
    '0.1.0', NULL, 4, 1, 1, 0, 0);
INSERT INTO run_kinds VALUES (1, 'type_mismatch', 1);
INSERT INTO findings VALUES (1, '0123456789abcdef0123456789abcdef', 'model', 'order_amounts',
    'w.analytics.order_amounts', 'type_mismatch', 'amount', 'error',
    'declared DECIMAL(12,2), the warehouse has DECIMAL(10,2)');
