//! Reading physical relations from the warehouse, read-only.
//!
//! One [`Introspector`] trait with a Postgres and a DuckDB implementation. Both answer with the
//! same [`PhysicalRelation`] shape, one catalog query per namespace whatever the number of
//! relations; everything engine-specific about catalogs stays inside them.

#[cfg(feature = "duckdb")]
pub mod duckdb;
pub mod postgres;
pub mod redact;

use std::future::Future;
use std::time::Duration;

use serde::Serialize;

/// A database and schema whose relations are read together.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Namespace {
    /// DuckDB catalog or Postgres database; `None` means the connection's own.
    pub database: Option<String>,
    pub schema: String,
}

/// What kind of relation the catalog holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RelationKind {
    Table,
    PartitionedTable,
    View,
    MaterializedView,
    ForeignTable,
}

impl RelationKind {
    /// Whether the catalog knows column nullability (tables do, views do not).
    pub fn knows_nullability(self) -> bool {
        matches!(
            self,
            RelationKind::Table | RelationKind::PartitionedTable | RelationKind::ForeignTable
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            RelationKind::Table => "table",
            RelationKind::PartitionedTable => "partitioned table",
            RelationKind::View => "view",
            RelationKind::MaterializedView => "materialized view",
            RelationKind::ForeignTable => "foreign table",
        }
    }
}

/// A column as the catalog reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct PhysicalColumn {
    /// Exactly as stored: case, spaces, quotes and unicode kept.
    pub name: String,
    /// The full type text as the engine formats it (`character varying(255)`, `INTEGER[]`).
    pub type_text: String,
    /// `Some(false)` for NOT NULL; `None` where the catalog does not know (views).
    pub nullable: Option<bool>,
    /// What the catalog says of a user-defined type; boxed, as most columns have none and a
    /// large diff holds hundreds of thousands of columns.
    pub user_type: Option<Box<UserType>>,
}

/// The catalog's facts about a column's user-defined type (Postgres).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UserType {
    /// Members of a Postgres enum type (or of an array's enum element type).
    pub enum_members: Option<Vec<String>>,
    /// The base type of a Postgres domain.
    pub domain_base: Option<String>,
    /// The schema of a user-defined type (or of an array's element type), where the engine
    /// prints the type unqualified because it is on the search path.
    pub schema: Option<String>,
}

impl PhysicalColumn {
    /// A column of a built-in type.
    pub fn new(name: String, type_text: String, nullable: Option<bool>) -> Self {
        Self {
            name,
            type_text,
            nullable,
            user_type: None,
        }
    }

    pub fn enum_members(&self) -> Option<&[String]> {
        self.user_type.as_ref()?.enum_members.as_deref()
    }

    pub fn domain_base(&self) -> Option<&str> {
        self.user_type.as_ref()?.domain_base.as_deref()
    }

    pub fn type_schema(&self) -> Option<&str> {
        self.user_type.as_ref()?.schema.as_deref()
    }
}

/// A relation as the catalog reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct PhysicalRelation {
    pub name: String,
    pub kind: RelationKind,
    pub columns: Vec<PhysicalColumn>,
    /// Set when the relation exists but its columns could not be read.
    pub unavailable: Option<String>,
}

/// Gives back the spare capacity of the last relation's columns, once they are all read: a large
/// namespace would otherwise keep about a fifth of its columns' memory unused.
pub(crate) fn shrink_last(relations: &mut [PhysicalRelation]) {
    if let Some(last) = relations.last_mut() {
        last.columns.shrink_to_fit();
    }
}

/// Limits for talking to a server.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    pub connect: Duration,
    pub statement: Duration,
}

/// Reads relations from one warehouse.
pub trait Introspector {
    /// The relations among `names` that exist in `namespace`, in any order. A name matches a
    /// relation exactly, or up to case (the caller decides what a case-only match means).
    fn relations(
        &mut self,
        namespace: &Namespace,
        names: &[String],
    ) -> impl Future<Output = Result<Vec<PhysicalRelation>, WarehouseError>> + Send;

    /// The database a namespace without one resolves to.
    fn default_database(&self) -> &str;
}

/// Why the warehouse could not be read. Messages never contain a password.
#[derive(Debug, thiserror::Error)]
pub enum WarehouseError {
    #[error("no Postgres connection URL: set `url` under [connection] or SQB_DATABASE_URL")]
    NoUrl,
    #[error("invalid Postgres connection URL: {0}")]
    BadUrl(String),
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
    #[error("DuckDB database {path} does not exist")]
    DuckDbMissing { path: String },
    #[error("DuckDB database {path} is locked by another process")]
    DuckDbLocked { path: String },
    #[error("could not open DuckDB database {path}: {reason}")]
    DuckDbOpen { path: String, reason: String },
    #[error("DuckDB database `{wanted}` is not the connection's database `{actual}`")]
    DuckDbCatalog { wanted: String, actual: String },
    #[error("this sqb was built without {0} support")]
    Unsupported(&'static str),
}

impl WarehouseError {
    /// What the user can do about it.
    pub fn hint(&self) -> Option<&'static str> {
        Some(match self {
            WarehouseError::NoUrl => "add `url = \"postgres://user@host:5432/db\"` under [connection], or export SQB_DATABASE_URL",
            WarehouseError::BadUrl(_) => "the URL looks like postgres://user:password@host:5432/database",
            WarehouseError::Connect { .. } => "check that the server is running and reachable, and the host and port in the URL",
            WarehouseError::ConnectTimeout { .. } => "check the host and network, or raise --connect-timeout",
            WarehouseError::Auth { .. } => "check the user and password (in the URL, PGPASSWORD or ~/.pgpass)",
            WarehouseError::NoDatabase { .. } => "check the target's `database` and the connection URL",
            WarehouseError::StatementTimeout { .. } => "raise --statement-timeout, or select fewer resources",
            WarehouseError::Permission(_) => "sqb reads only pg_catalog; ask for USAGE on the schema",
            WarehouseError::Query(_) => return None,
            WarehouseError::DuckDbMissing { .. } => "check `path` under [connection]; it is relative to the project root",
            WarehouseError::DuckDbLocked { .. } => "a process is writing to the file; retry when it has finished",
            WarehouseError::DuckDbOpen { .. } => return None,
            WarehouseError::DuckDbCatalog { .. } => "a DuckDB target's `database` must be the file's catalog name, or be left out",
            WarehouseError::Unsupported(_) => "install sqb with its default features",
        })
    }
}

pub use crate::ident::quote_ident;
