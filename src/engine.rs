//! The warehouse engines sqb knows, and what each calls itself in messages and reports.

use serde::Serialize;
use sqlparser::dialect::{DuckDbDialect, PostgreSqlDialect};
use std::fmt;

mod dialect;

/// A warehouse engine. The type system and the SQL dialect depend on it; a project has one.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, strum::IntoStaticStr, strum::EnumString,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Engine {
    Postgres,
    DuckDb,
}

impl Engine {
    /// The name used in `sqb.toml`, reports and messages.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn parse(name: &str) -> Option<Self> {
        name.parse().ok()
    }

    /// Whether every identifier resolves up to case, quoted or not (DuckDB), rather than an
    /// unquoted one folding to lower case and a quoted one kept as written (Postgres).
    pub fn names_ignore_case(self) -> bool {
        matches!(self, Engine::DuckDb)
    }

    /// Whether `written` (`quoted` or not) names the catalog's `stored` name, as the engine
    /// resolves identifiers.
    pub fn names_match(self, written: &str, quoted: bool, stored: &str) -> bool {
        match (self.names_ignore_case(), quoted) {
            (true, _) => written.eq_ignore_ascii_case(stored),
            (false, false) => written.to_lowercase() == stored,
            (false, true) => written == stored,
        }
    }

    /// Whether a query names a relation's database (DuckDB's attached catalogs), rather than
    /// reaching it through the database its session connects to (Postgres).
    pub fn queries_name_the_database(self) -> bool {
        matches!(self, Engine::DuckDb)
    }

    /// The type a value is cast to for comparing it as text.
    pub fn text_type(self) -> &'static str {
        match self {
            Engine::Postgres => "text",
            Engine::DuckDb => "VARCHAR",
        }
    }

    /// The sqlparser dialect its SQL is read in (sqlparser's, with the shortcuts of
    /// [`dialect`]).
    pub fn dialect(self) -> Box<dyn sqlparser::dialect::Dialect> {
        match self {
            Engine::Postgres => Box::new(dialect::Fast::new(PostgreSqlDialect {})),
            Engine::DuckDb => Box::new(dialect::Fast::new(DuckDbDialect {})),
        }
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
