//! The warehouse engines sqb knows, and what each calls itself in messages and reports.

use serde::Serialize;
use std::fmt;

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

    /// The sqlparser dialect its SQL is read in.
    pub fn dialect(self) -> Box<dyn sqlparser::dialect::Dialect> {
        match self {
            Engine::Postgres => Box::new(sqlparser::dialect::PostgreSqlDialect {}),
            Engine::DuckDb => Box::new(sqlparser::dialect::DuckDbDialect {}),
        }
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
