//! The one session of sqb that may write: `sqb promote`'s publish, in one transaction.
//!
//! `session::writer` begins the transaction (read-only for `--dry-run`) under a lock timeout;
//! the caller takes the locks, reads the [`Facts`], counts what must be 0, runs the writes one
//! statement at a time, and then [`Writer::commit`]s with a statement of its own. A writer
//! dropped without a commit rolls back: Postgres aborts a transaction whose client went away,
//! and DuckDB one whose connection closed.

#[cfg(feature = "duckdb")]
pub(in crate::warehouse) mod duckdb;
pub(in crate::warehouse) mod postgres;
mod swap_catalog;

use std::time::Duration;

use super::WarehouseError;
use crate::engine::Engine;
use crate::table_facts::{Facts, Name, Step};

/// Why the publish stopped. The transaction is rolled back in every case.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    #[error(transparent)]
    Connect(#[from] WarehouseError),
    #[error("gave up waiting {seconds}s for a lock on `{relation}`{}", holders_text(.holders))]
    LockTimeout {
        relation: String,
        seconds: f64,
        /// Who held a lock on it when sqb gave up: `pid 123 (alice, psql, idle in transaction
        /// for 40s, AccessShareLock)`.
        holders: Vec<String>,
    },
    #[error("the connection to the warehouse was lost during the publish: {0}")]
    Lost(String),
    #[error("`{relation}`: {message}\n  in: {sql}")]
    Statement {
        relation: String,
        sql: String,
        message: String,
    },
}

fn holders_text(holders: &[String]) -> String {
    match holders.len() {
        0 => String::new(),
        _ => format!(": held by {}", holders.join("; ")),
    }
}

impl PublishError {
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            PublishError::Connect(e) => e.hint(),
            PublishError::LockTimeout { .. } => Some(
                "nothing was published; retry when the holder has finished, or raise --lock-timeout",
            ),
            PublishError::Lost(_) => Some("nothing was published: the transaction never committed"),
            PublishError::Statement { .. } => {
                Some("nothing was published: the transaction was rolled back")
            }
        }
    }
}

/// What the destination tables are to be read as: their names, their staged copies', and the
/// columns the contract makes NOT NULL (for a destination created by the publish).
#[derive(Debug, Clone)]
pub struct Wanted {
    pub dest: Name,
    pub staged: Name,
    pub not_null: Vec<String>,
}

/// One engine's write transaction; `session::writer` chooses it by engine.
pub(in crate::warehouse) trait Transaction {
    fn run(&mut self, step: &Step) -> Result<(), PublishError>;
    /// The first column of the first row; `None` without a row (or a NULL).
    fn value(&mut self, step: &Step) -> Result<Option<i64>, PublishError>;
    fn facts(&mut self, wanted: &[Wanted]) -> Result<Vec<Facts>, PublishError>;
    fn commit(self: Box<Self>) -> Result<(), PublishError>;
}

/// A write transaction on the project's warehouse.
pub struct Writer {
    tx: Box<dyn Transaction>,
    pub engine: Engine,
}

impl Writer {
    /// The writer of a transaction `session::writer` began.
    pub(in crate::warehouse) fn new(tx: Box<dyn Transaction>, engine: Engine) -> Writer {
        Writer { tx, engine }
    }

    /// Runs one statement of the plan.
    pub fn run(&mut self, step: &Step) -> Result<(), PublishError> {
        self.tx.run(step)
    }

    /// Runs a count of the plan: its one number.
    pub fn count(&mut self, step: &Step) -> Result<i64, PublishError> {
        Ok(self.tx.value(step)?.unwrap_or(0))
    }

    /// Runs a probe of the plan: its one number, if it returns a row.
    pub fn value(&mut self, step: &Step) -> Result<Option<i64>, PublishError> {
        self.tx.value(step)
    }

    /// What the catalog says about each destination and its staged copy, inside the
    /// transaction.
    pub fn facts(&mut self, wanted: &[Wanted]) -> Result<Vec<Facts>, PublishError> {
        self.tx.facts(wanted)
    }

    /// Commits, as a statement of its own, sent only once every statement before it has
    /// succeeded.
    pub fn commit(self) -> Result<(), PublishError> {
        self.tx.commit()
    }
}

/// A lock wait given up after `seconds`.
fn seconds(d: Duration) -> f64 {
    (d.as_millis() as f64) / 1000.0
}
