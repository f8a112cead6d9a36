//! Reading physical relations from the warehouse, read-only.
//!
//! One [`Backend`] trait with a Postgres and a DuckDB implementation. Both answer with the
//! same [`PhysicalRelation`] shape, one catalog query per namespace whatever the number of
//! relations; everything engine-specific about catalogs, statements and connections stays
//! inside them.

#[cfg(feature = "duckdb")]
pub mod duckdb;
pub mod history;
pub mod pool;
pub mod postgres;
pub mod publish;
pub mod session;
pub mod waiting;

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

pub use crate::catalog::{listings, SchemaListing};
use crate::catalog::{Described, Namespace, PhysicalRelation};
use crate::rows::{Rows, Statement};

/// Limits for talking to a server.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    pub connect: Duration,
    pub statement: Duration,
}

/// What one engine does to read a warehouse: its catalog, its statements, its default
/// database, its end. One implementation per engine (`postgres`, `duckdb`), chosen once when a
/// session opens ([`session`]); nothing else in sqb matches on the engine to talk to a database.
pub trait Backend {
    /// The relations among `names` that exist in `namespace`, in any order. A name matches a
    /// relation exactly, or up to case (the caller decides what a case-only match means). One
    /// catalog query per namespace, whatever the number of relations.
    fn relations<'a>(
        &'a mut self,
        namespace: &'a Namespace,
        names: &'a [String],
    ) -> Reply<'a, Vec<PhysicalRelation>>;

    /// Runs one read-only statement in `database` (else the connection's own), its
    /// parameters bound as text, under the statement timeout, and decodes every row.
    fn run<'a>(
        &'a mut self,
        database: Option<&'a str>,
        statement: &'a Statement,
        timeouts: Timeouts,
    ) -> Reply<'a, Rows>;

    /// Runs `statements` as [`Backend::run`] runs each, every one its own answer, in order. An
    /// in-process engine may run them on up to `workers` threads; a server's session runs one
    /// at a time (the session spreads statements over sessions of its own).
    fn run_all<'a>(
        &'a mut self,
        database: Option<&'a str>,
        statements: &'a [Statement],
        timeouts: Timeouts,
        _workers: usize,
    ) -> Reply<'a, Vec<Result<Rows, WarehouseError>>> {
        Box::pin(async move {
            let mut answers = Vec::with_capacity(statements.len());
            for statement in statements {
                answers.push(self.run(database, statement, timeouts).await);
            }
            Ok(answers)
        })
    }

    /// Describes each query's result without running it: its columns' names and types, spelled
    /// as the catalog spells them. A query the engine rejects gets the engine's message, and
    /// the others their answers; a session that fails fails them all. An in-process engine
    /// may bind on up to `workers` threads; a server's session describes one at a time.
    fn describe<'a>(
        &'a mut self,
        database: Option<&'a str>,
        queries: &'a [String],
        timeouts: Timeouts,
        workers: usize,
    ) -> Reply<'a, Vec<Described>>;

    /// The schemas of the connection's own database that hold user relations, each with the
    /// names of its relations, sorted: every schema but the engine's own (`pg_catalog`,
    /// `information_schema`, toast and temporary schemas), empty ones included. One query.
    fn survey(&mut self) -> Reply<'_, Vec<SchemaListing>>;

    /// The database a namespace without one resolves to.
    fn default_database(&self) -> &str;

    /// Ends the session: the connection is dropped, unless the engine has a cheaper end.
    fn close(self: Box<Self>) {}

    /// Another session on the same open database, where the engine has one (an in-process
    /// engine: a connection to the database already loaded), else `None` and the caller opens
    /// one of its own.
    fn fork(&self) -> Option<Result<Box<dyn Backend + Send>, WarehouseError>> {
        None
    }

    /// Whether the session still answers: one round trip for a server, nothing for an
    /// in-process engine. A pool asks before it hands out a session that has been idle.
    fn alive(&mut self) -> Reply<'_, bool> {
        Box::pin(std::future::ready(Ok(true)))
    }

    /// Connects to the default database now, for a session sure to query it, instead of at its
    /// first statement. Nothing for an in-process engine, which [`session::open`] opened.
    fn connect(&mut self) -> Reply<'_, ()> {
        Box::pin(std::future::ready(Ok(())))
    }
}

/// A backend's answer, awaited on the session's own runtime.
pub type Reply<'a, T> = Pin<Box<dyn Future<Output = Result<T, WarehouseError>> + 'a>>;

/// Why the warehouse could not be read. Messages never contain a password.
#[derive(Debug, thiserror::Error)]
pub enum WarehouseError {
    #[error("no Postgres connection URL: set `url` under [connection] or SQB_DATABASE_URL")]
    NoUrl,
    #[error("invalid Postgres connection URL: {0}")]
    BadUrl(String),
    /// A URL whose scheme is not the engine's: refused before anything connects.
    #[error("{source_name} is not a {engine} URL: it must start with {forms}")]
    WrongScheme {
        source_name: &'static str,
        engine: &'static str,
        forms: String,
    },
    #[error("could not connect to {server}: {reason}")]
    Connect { server: String, reason: String },
    #[error("timed out after {seconds}s connecting to {server}")]
    ConnectTimeout { server: String, seconds: u64 },
    #[error("password authentication failed for user `{user}` on {server}")]
    Auth { server: String, user: String },
    #[error("database `{database}` does not exist on {server}")]
    NoDatabase { server: String, database: String },
    #[error("the catalog query timed out after {seconds}s")]
    StatementTimeout { seconds: u64 },
    #[error("permission denied reading the catalog: {0}")]
    Permission(String),
    #[error("catalog query failed: {0}")]
    Query(String),
    #[error("the query timed out after {seconds}s")]
    QueryTimeout { seconds: u64 },
    #[error("the query failed: {0}")]
    Failed(String),
    #[error("DuckDB database {path} does not exist")]
    DuckDbMissing { path: String },
    #[error("DuckDB database {path} is locked by another process, past the connect timeout")]
    DuckDbLocked { path: String },
    #[error("could not open DuckDB database {path}: {reason}")]
    DuckDbOpen { path: String, reason: String },
    #[error("DuckDB database `{wanted}` is not the connection's database `{actual}`")]
    DuckDbCatalog { wanted: String, actual: String },
    #[error("this sqb was built without {0} support")]
    Unsupported(&'static str),
    /// sqb's own machinery (the session's thread, its async runtime) failed: not the warehouse.
    #[error("{0}")]
    Runtime(String),
}

impl WarehouseError {
    /// What the user can do about it.
    pub fn hint(&self) -> Option<&'static str> {
        Some(match self {
            WarehouseError::NoUrl => "add `url = \"postgres://user@host:5432/db\"` under [connection], or export SQB_DATABASE_URL",
            WarehouseError::BadUrl(_) | WarehouseError::WrongScheme { .. } => "the URL looks like postgres://user@host:5432/database (the password in PGPASSWORD or ~/.pgpass)",
            WarehouseError::Connect { .. } => "check that the server is running and reachable, and the host and port in the URL",
            WarehouseError::ConnectTimeout { .. } => "check the host and network, or raise --connect-timeout",
            WarehouseError::Auth { .. } => "check the user and password (in the URL, PGPASSWORD or ~/.pgpass)",
            WarehouseError::NoDatabase { .. } => "check the target's `database` and the connection URL",
            WarehouseError::StatementTimeout { .. } => "raise --statement-timeout, or select fewer resources",
            WarehouseError::Permission(_) => "sqb reads only pg_catalog; ask for USAGE on the schema",
            WarehouseError::Query(_) | WarehouseError::Failed(_) | WarehouseError::Runtime(_) => {
                return None
            }
            WarehouseError::QueryTimeout { .. } => "raise --statement-timeout, or ask for fewer dimensions",
            WarehouseError::DuckDbMissing { .. } => "check `path` under [connection]; it is relative to the project root",
            WarehouseError::DuckDbLocked { .. } => "a process is writing to the file: raise --connect-timeout to wait longer, or retry when it has finished",
            WarehouseError::DuckDbOpen { .. } => return None,
            WarehouseError::DuckDbCatalog { .. } => "a DuckDB target's `database` must be the file's catalog name, or be left out",
            WarehouseError::Unsupported(_) => "install sqb with its default features",
        })
    }
}

pub use crate::ident::quote_ident;
