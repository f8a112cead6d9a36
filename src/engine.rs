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
