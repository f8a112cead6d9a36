//! The warehouse engines sqb knows, and what each calls itself in messages and reports.

use serde::Serialize;
use std::fmt;

/// A warehouse engine. The type system and the SQL dialect depend on it; a project has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    Postgres,
    #[serde(rename = "duckdb")]
    DuckDb,
}

impl Engine {
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::Postgres => "postgres",
            Engine::DuckDb => "duckdb",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "postgres" => Some(Engine::Postgres),
            "duckdb" => Some(Engine::DuckDb),
            _ => None,
        }
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
