//! The history file itself, read and written through DuckDB.

use std::path::Path;
use std::time::{Duration, Instant};

use duckdb::{params, AccessMode, Config, Connection};

use super::{HistoryError, SCHEMA_VERSION};
use crate::drift::{DayCount, FindingRecord, RunRecord, RunStamp, Summary, Track};

const FORMAT: &str = "sqb.drift-history";

const SCHEMA_V1: &str = "
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
INSERT INTO sqb_history VALUES ('format', 'sqb.drift-history'), ('schema_version', '1');";

/// Schema 2: runs of `sqb audit` beside those of `contract diff`, and the audit of an audit's
/// finding. A run of schema 1 was a `contract diff`.
const MIGRATE_V2: &str = "
ALTER TABLE runs ADD COLUMN command VARCHAR DEFAULT 'contract diff';
ALTER TABLE findings ADD COLUMN audit_name VARCHAR;
UPDATE sqb_history SET value = '2' WHERE key = 'schema_version';";

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or(text).to_string()
}

fn is_lock(e: &duckdb::Error) -> bool {
    let text = e.to_string();
    text.contains("Could not set lock") || text.contains("Conflicting lock")
}

/// Opens `path`, retrying while another process holds its lock.
fn open(path: &Path, read_only: bool, timeout: Duration) -> Result<Connection, HistoryError> {
    let shown = path.display().to_string();
    let start = Instant::now();
    loop {
        let mode = match read_only {
            true => AccessMode::ReadOnly,
            false => AccessMode::ReadWrite,
        };
        let attempt = Config::default()
            .access_mode(mode)
            .and_then(|c| Connection::open_with_flags(path, c));
        match attempt {
            Ok(conn) => return Ok(conn),
            Err(e) if is_lock(&e) && start.elapsed() < timeout => {
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) if is_lock(&e) => {
                return Err(HistoryError::Locked {
                    path: shown,
                    seconds: timeout.as_secs(),
                })
            }
            Err(e) => {
                return Err(HistoryError::NotAHistory {
                    path: shown,
                    reason: first_line(&e.to_string()),
                })
            }
        }
    }
}

/// The schema version of an open file; `None` when it has no `sqb_history` table.
fn version(conn: &Connection, path: &Path) -> Result<Option<i64>, HistoryError> {
    let shown = path.display().to_string();
    let tables: i64 = conn
        .query_row(
            "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'sqb_history' AND schema_name = 'main'",
            [],
            |r| r.get(0),
        )
        .map_err(|e| HistoryError::NotAHistory {
            path: shown.clone(),
            reason: first_line(&e.to_string()),
        })?;
    if tables == 0 {
        return Ok(None);
    }
    let read = |key: &str| -> Result<Option<String>, HistoryError> {
        conn.query_row("SELECT value FROM sqb_history WHERE key = ?", [key], |r| {
            r.get(0)
        })
        .map(Some)
        .or_else(|e| match e {
            duckdb::Error::QueryReturnedNoRows => Ok(None),
            e => Err(HistoryError::NotAHistory {
                path: shown.clone(),
                reason: first_line(&e.to_string()),
            }),
        })
    };
    if read("format")?.as_deref() != Some(FORMAT) {
        return Err(HistoryError::NotAHistory {
            path: shown,
            reason: "its sqb_history table does not name the format".into(),
        });
    }
    let version = read("schema_version")?
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| HistoryError::NotAHistory {
            path: shown.clone(),
            reason: "it has no schema version".into(),
        })?;
    Ok(Some(version))
}

/// The schema version of a history this sqb reads (`None`: the file has no `sqb_history`
/// table); one from a newer sqb is an error.
fn history_version(conn: &Connection, path: &Path) -> Result<Option<i64>, HistoryError> {
    match version(conn, path)? {
        Some(v) if v > SCHEMA_VERSION => Err(HistoryError::TooNew {
            path: path.display().to_string(),
            found: v,
        }),
        v => Ok(v),
    }
}

/// A path that is there but is no regular file (a directory, a FIFO, a device) is refused
/// before DuckDB opens it: reading a FIFO would wait forever.
fn special(path: &Path) -> Result<(), HistoryError> {
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => Err(HistoryError::NotAHistory {
            path: path.display().to_string(),
            reason: "it is not a regular file".into(),
        }),
        _ => Ok(()),
    }
}

fn not_ours(path: &Path) -> HistoryError {
    HistoryError::NotAHistory {
        path: path.display().to_string(),
        reason: "it is a DuckDB database without sqb's history tables".into(),
    }
}

/// Appends `run` to the history at `path` (created when absent, migrated to this sqb's schema
/// when older) in one transaction; returns the run's id. A file that is not a history, or is
/// from a newer sqb, is left untouched.
pub fn append(path: &Path, run: &RunRecord, lock_timeout: Duration) -> Result<i64, HistoryError> {
    special(path)?;
    let mut created = false;
    let result = append_to(path, run, lock_timeout, &mut created);
    if result.is_err() && created {
        // A history this run was creating holds nothing: it goes, so the next run starts anew.
        let _ = std::fs::remove_file(path);
        let _ = std::fs::remove_file(format!("{}.wal", path.display()));
    }
    result
}

fn append_to(
    path: &Path,
    run: &RunRecord,
    lock_timeout: Duration,
    created: &mut bool,
) -> Result<i64, HistoryError> {
    let shown = path.display().to_string();
    let write_error = |e: duckdb::Error| HistoryError::Write {
        path: shown.clone(),
        reason: first_line(&e.to_string()),
    };
    let existed = path.exists();
    let mut conn = open(path, false, lock_timeout)?;
    // Another run may have created the file while this one waited for it.
    let found = match history_version(&conn, path)? {
        None if !existed => None,
        None => return Err(not_ours(path)),
        Some(v) => Some(v),
    };
    *created = found.is_none();
    let tx = conn.transaction().map_err(write_error)?;
    // A new file is made as the first schema was, then migrated like any older file.
    if found.is_none() {
        tx.execute_batch(SCHEMA_V1).map_err(write_error)?;
    }
    if found.unwrap_or(1) < 2 {
        tx.execute_batch(MIGRATE_V2).map_err(write_error)?;
    }
    let run_id: i64 = tx
        .query_row("SELECT coalesce(max(run_id), 0) + 1 FROM runs", [], |r| {
            r.get(0)
        })
        .map_err(write_error)?;
    tx.execute(
        "INSERT INTO runs (run_id, run_at, target, engine, database_name, schema_name, sqb_version,
                           git_commit, resources, findings, errors, warnings, infos, command)
         VALUES (?, CAST(? AS TIMESTAMP), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        params![
            run_id,
            run.run_at,
            run.target,
            run.engine,
            run.database,
            run.schema,
            run.sqb_version,
            run.git_commit,
            run.resources as i64,
            run.findings.len() as i64,
            run.errors as i64,
            run.warnings as i64,
            run.infos as i64,
            run.command,
        ],
    )
    .map_err(write_error)?;
    {
        let mut kinds = tx
            .prepare("INSERT INTO run_kinds VALUES (?, ?, ?)")
            .map_err(write_error)?;
        for (kind, count) in &run.by_kind {
            kinds
                .execute(params![run_id, kind, *count as i64])
                .map_err(write_error)?;
        }
        let mut appender = tx.appender("findings").map_err(write_error)?;
        for f in &run.findings {
            appender
                .append_row(params![
                    run_id,
                    f.fingerprint,
                    f.resource_type,
                    f.resource_name,
                    f.relation,
                    f.kind,
                    f.column,
                    f.severity,
                    f.message,
                    f.audit
                ])
                .map_err(write_error)?;
        }
        appender.flush().map_err(write_error)?;
    }
    tx.commit().map_err(write_error)?;
    Ok(run_id)
}

/// The runs of `target` (every target when `None`) at or after `since` (`YYYY-MM-DD HH:MM:SS`,
/// UTC), summarized where the rows are: each fingerprint's first and last run, how many runs had
/// it and its latest fields; each day's last run counted by severity and kind. Opened read-only.
pub fn summarize(
    path: &Path,
    target: Option<&str>,
    since: Option<&str>,
    lock_timeout: Duration,
) -> Result<Summary, HistoryError> {
    let shown = path.display().to_string();
    special(path)?;
    if !path.is_file() {
        return Err(HistoryError::Missing { path: shown });
    }
    let conn = open(path, true, lock_timeout)?;
    let version = history_version(&conn, path)?.ok_or_else(|| not_ours(path))?;
    let read_error = |e: duckdb::Error| HistoryError::Read {
        path: shown.clone(),
        reason: first_line(&e.to_string()),
    };
    // Read-only, a file of schema 1 is read as it is: all its runs were `contract diff`s.
    let (command, audit) = match version {
        1 => ("'contract diff'", "CAST(NULL AS VARCHAR)"),
        _ => ("command", "f.audit_name"),
    };
    // The period's runs, numbered in time order (a backfill may insert an earlier run later).
    conn.execute(
        &format!(
            "CREATE TEMP TABLE period AS
             SELECT run_id, run_at, target, {command} AS command,
                    CAST(row_number() OVER (ORDER BY run_at, run_id) - 1 AS BIGINT) AS seq
               FROM runs
              WHERE (CAST(? AS VARCHAR) IS NULL OR target = ?)
                AND (CAST(? AS VARCHAR) IS NULL OR run_at >= CAST(? AS TIMESTAMP))"
        ),
        params![target, target, since, since],
    )
    .map_err(read_error)?;
    conn.execute_batch(&format!(
        "CREATE TEMP VIEW period_findings AS
         SELECT f.run_id, f.fingerprint, f.resource_type, f.resource_name, f.relation, f.kind,
                f.column_name, f.severity, f.message, {audit} AS audit, p.seq, p.command
           FROM findings f JOIN period p USING (run_id)"
    ))
    .map_err(read_error)?;
    let runs = {
        let mut stmt = conn
            .prepare(
                "SELECT strftime(run_at, '%Y-%m-%d %H:%M:%S'), target, command FROM period ORDER BY seq",
            )
            .map_err(read_error)?;
        let rows = stmt
            .query_map([], |r| {
                Ok(RunStamp {
                    at: r.get(0)?,
                    target: r.get(1)?,
                    command: r.get(2)?,
                })
            })
            .map_err(read_error)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(read_error)?
    };
    let tracks = {
        let mut stmt = conn
            .prepare(
                "SELECT fingerprint, arg_max(resource_type, seq), arg_max(resource_name, seq),
                        arg_max(relation, seq), arg_max(kind, seq), arg_max(column_name, seq),
                        arg_max(severity, seq), arg_max(message, seq), arg_max(audit, seq),
                        arg_max(command, seq), min(seq), max(seq), count(*)
                   FROM period_findings
                  GROUP BY fingerprint
                  ORDER BY min(seq), fingerprint",
            )
            .map_err(read_error)?;
        let rows = stmt
            .query_map([], |r| {
                Ok(Track {
                    finding: FindingRecord {
                        fingerprint: r.get(0)?,
                        resource_type: r.get(1)?,
                        resource_name: r.get(2)?,
                        relation: r.get(3)?,
                        kind: r.get(4)?,
                        column: r.get(5)?,
                        severity: r.get(6)?,
                        message: r.get(7)?,
                        audit: r.get(8)?,
                    },
                    command: r.get(9)?,
                    first: r.get::<_, i64>(10)? as usize,
                    last: r.get::<_, i64>(11)? as usize,
                    runs: r.get::<_, i64>(12)? as usize,
                })
            })
            .map_err(read_error)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(read_error)?
    };
    let days = {
        let mut stmt = conn
            // Each command's last run of the day; a day whose last runs found nothing is a day
            // with nothing open (a row of NULLs).
            .prepare(
                "WITH last_of_day AS (
                     SELECT run_id, strftime(run_at, '%Y-%m-%d') AS day FROM period
                     QUALIFY row_number() OVER (
                         PARTITION BY CAST(run_at AS DATE), command ORDER BY seq DESC) = 1)
                 SELECT d.day, f.severity, f.kind, count(f.run_id)
                   FROM last_of_day d LEFT JOIN findings f USING (run_id)
                  GROUP BY ALL ORDER BY ALL",
            )
            .map_err(read_error)?;
        let rows = stmt
            .query_map([], |r| {
                Ok(DayCount {
                    date: r.get(0)?,
                    severity: r.get(1)?,
                    kind: r.get(2)?,
                    count: r.get::<_, i64>(3)? as usize,
                })
            })
            .map_err(read_error)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(read_error)?
    };
    Ok(Summary { runs, tracks, days })
}
