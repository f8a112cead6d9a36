//! The drift history (`contract diff --history FILE`, `audit --history FILE`): an embedded
//! DuckDB file of sqb's own, never the warehouse, that each run appends to and `sqb drift
//! report` reads.
//!
//! The file carries its format and schema version in `sqb_history`; a file without that table
//! is not a history and is never written to (nor is one from a newer sqb). An older file is
//! migrated in the same transaction as the run that finds it (schema 2 added the run's command
//! and the audit of a finding); reading leaves it as it is.
//! Each run is one transaction. A file another process holds is retried until a timeout, so two
//! runs at once both land.

#[cfg(not(feature = "duckdb"))]
use crate::drift::{RunRecord, Summary};

/// The schema this sqb writes and reads.
pub const SCHEMA_VERSION: i64 = 2;

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("{path} is not a drift history: {reason}")]
    NotAHistory { path: String, reason: String },
    #[error("{path} was written by a newer sqb (history schema {found}; this sqb knows up to {SCHEMA_VERSION})")]
    TooNew { path: String, found: i64 },
    #[error("{path} does not exist")]
    Missing { path: String },
    #[error("timed out after {seconds} s waiting for {path}: another process holds it")]
    Locked { path: String, seconds: u64 },
    #[error("could not write the drift history {path}: {reason}")]
    Write { path: String, reason: String },
    #[error("could not read the drift history {path}: {reason}")]
    Read { path: String, reason: String },
    #[error("this sqb was built without DuckDB, and the drift history is a DuckDB file (install sqb with its default features)")]
    Unsupported,
}

#[cfg(feature = "duckdb")]
mod file;
#[cfg(feature = "duckdb")]
pub use file::{append, summarize};

/// Appends `run`; this build has no DuckDB to write the file with.
#[cfg(not(feature = "duckdb"))]
pub fn append(
    _: &std::path::Path,
    _: &RunRecord,
    _: std::time::Duration,
) -> Result<i64, HistoryError> {
    Err(HistoryError::Unsupported)
}

/// Summarizes the history; this build has no DuckDB to read the file with.
#[cfg(not(feature = "duckdb"))]
pub fn summarize(
    _: &std::path::Path,
    _: Option<&str>,
    _: Option<&str>,
    _: std::time::Duration,
) -> Result<Summary, HistoryError> {
    Err(HistoryError::Unsupported)
}
