//! The warehouse engines sqb knows: what each calls itself, and what differs between them that
//! is plain data (how names fold, which types it keeps apart, its sqlparser dialect), one row each.

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

/// What differs between engines that is plain data: one row per engine, read through
/// [`Engine`]'s methods. What needs sqb's types or SQL trees is `engine_rules`'s.
struct Facts {
    /// The name in prose (`Postgres`, `DuckDB`).
    title: &'static str,
    /// An unquoted identifier is stored in lower case.
    folds_unquoted: bool,
    /// Every identifier resolves up to case, quoted or not.
    names_ignore_case: bool,
    /// A query names a relation's database rather than reaching it through the session's.
    queries_name_the_database: bool,
    /// The type a value is cast to for comparing it as text.
    text_type: &'static str,
    /// The type a bound number is cast to for comparing it with any numeric column (DuckDB's
    /// bare DECIMAL would round it to three places).
    bound_number_type: &'static str,
    /// The current time as SQL that compares with any date or time column (DuckDB's `now()` is
    /// zoned, and comparing it with a TIMESTAMP needs the ICU extension).
    now: &'static str,
    /// The bytes that end a `--` comment.
    comment_ends: &'static [u8],
    /// CHAR, VARCHAR(n) and TEXT are stored as distinct types (not all as VARCHAR).
    keeps_string_kinds: bool,
    /// An array's declared size is part of its stored type.
    keeps_array_sizes: bool,
    /// A bare `FLOAT` is double precision.
    bare_float_is_double: bool,
    /// The engine's type names are those of Postgres's `pg_catalog`.
    pg_catalog: bool,
    /// The name of dbt's adapter for it.
    dbt_adapter: &'static str,
    /// The database runs inside sqb's process (a file it opens), not behind a URL.
    in_process: bool,
    /// The schema unqualified names resolve to by default.
    default_schema: &'static str,
    /// The schemes of the URLs it is reached at.
    url_schemes: &'static [&'static str],
    /// The sqlparser dialect its SQL is read in.
    parser: fn() -> Box<dyn sqlparser::dialect::Dialect>,
}

const POSTGRES: Facts = Facts {
    title: "Postgres",
    folds_unquoted: true,
    names_ignore_case: false,
    queries_name_the_database: false,
    text_type: "text",
    bound_number_type: "numeric",
    now: "now()",
    comment_ends: b"\n\r",
    keeps_string_kinds: true,
    keeps_array_sizes: false,
    bare_float_is_double: true,
    pg_catalog: true,
    dbt_adapter: "postgres",
    in_process: false,
    default_schema: "public",
    url_schemes: &["postgres", "postgresql"],
    parser: || Box::new(dialect::Fast::new(PostgreSqlDialect {})),
};

const DUCKDB: Facts = Facts {
    title: "DuckDB",
    folds_unquoted: false,
    names_ignore_case: true,
    queries_name_the_database: true,
    text_type: "VARCHAR",
    bound_number_type: "DOUBLE",
    now: "CAST(now() AS TIMESTAMP)",
    comment_ends: b"\n",
    keeps_string_kinds: false,
    keeps_array_sizes: true,
    bare_float_is_double: false,
    pg_catalog: false,
    dbt_adapter: "duckdb",
    in_process: true,
    default_schema: "main",
    url_schemes: &[],
    parser: || Box::new(dialect::Fast::new(DuckDbDialect {})),
};

impl Engine {
    /// Every engine, in the order reports list them.
    pub const ALL: [Engine; 2] = [Engine::Postgres, Engine::DuckDb];

    /// Its position in [`Engine::ALL`], for tables indexed by engine.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The one place an engine is matched to its facts.
    fn facts(self) -> &'static Facts {
        match self {
            Engine::Postgres => &POSTGRES,
            Engine::DuckDb => &DUCKDB,
        }
    }

    /// The name used in `sqb.toml`, reports and messages.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn parse(name: &str) -> Option<Self> {
        name.parse().ok()
    }

    /// The name in prose: `Postgres`, `DuckDB`.
    pub fn title(self) -> &'static str {
        self.facts().title
    }

    /// The engine of dbt's adapter `name`.
    pub fn of_dbt_adapter(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|e| e.facts().dbt_adapter == name)
    }

    /// Whether an unquoted identifier is stored in lower case (Postgres), rather than as
    /// written (DuckDB).
    pub fn folds_unquoted_names(self) -> bool {
        self.facts().folds_unquoted
    }

    /// The name an identifier written so gets in the catalog.
    pub fn stored_name(self, written: &str, quoted: bool) -> String {
        match !quoted && self.folds_unquoted_names() {
            true => written.to_lowercase(),
            false => written.to_string(),
        }
    }

    /// Whether every identifier resolves up to case, quoted or not (DuckDB), rather than an
    /// unquoted one folding to lower case and a quoted one kept as written (Postgres).
    pub fn names_ignore_case(self) -> bool {
        self.facts().names_ignore_case
    }

    /// Whether two stored names are the same name on this engine.
    pub fn same_name(self, a: &str, b: &str) -> bool {
        match self.names_ignore_case() {
            true => a.eq_ignore_ascii_case(b),
            false => a == b,
        }
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
        self.facts().queries_name_the_database
    }

    /// The type a value is cast to for comparing it as text.
    pub fn text_type(self) -> &'static str {
        self.facts().text_type
    }

    /// The current time as SQL that compares with a DATE, TIMESTAMP or TIMESTAMPTZ column.
    pub fn now(self) -> &'static str {
        self.facts().now
    }

    /// The type a bound number is cast to, to compare it with any numeric column.
    pub fn bound_number_type(self) -> &'static str {
        self.facts().bound_number_type
    }

    /// The bytes that end a `--` comment: PostgreSQL's ends at a carriage return too.
    pub fn comment_ends(self) -> &'static [u8] {
        self.facts().comment_ends
    }

    /// Whether CHAR, VARCHAR(n) and TEXT are stored as types of their own (Postgres), rather
    /// than all as VARCHAR (DuckDB).
    pub fn keeps_string_kinds(self) -> bool {
        self.facts().keeps_string_kinds
    }

    /// Whether an array's declared size is part of its stored type (DuckDB's fixed-size
    /// arrays), rather than ignored (Postgres).
    pub fn keeps_array_sizes(self) -> bool {
        self.facts().keeps_array_sizes
    }

    /// Whether a bare `FLOAT` is double precision (Postgres) rather than single (DuckDB).
    pub fn bare_float_is_double(self) -> bool {
        self.facts().bare_float_is_double
    }

    /// Whether the engine's built-in type names are those of Postgres's `pg_catalog`.
    pub fn has_pg_catalog(self) -> bool {
        self.facts().pg_catalog
    }

    /// Whether the database runs inside sqb's process, opened from a file (DuckDB), rather than
    /// reached at a URL (Postgres).
    pub fn in_process(self) -> bool {
        self.facts().in_process
    }

    /// The schema unqualified names resolve to by default (`public`, `main`).
    pub fn default_schema(self) -> &'static str {
        self.facts().default_schema
    }

    /// Whether `url` is one this engine is reached at: its scheme is the engine's
    /// (`postgres://`, `postgresql://`), whatever follows.
    pub fn takes_url(self, url: &str) -> bool {
        url.split_once("://").is_some_and(|(scheme, _)| {
            self.facts()
                .url_schemes
                .iter()
                .any(|s| s.eq_ignore_ascii_case(scheme))
        })
    }

    /// The URL schemes it is reached at, as a user writes them: `postgres://`.
    pub fn url_forms(self) -> String {
        let forms: Vec<String> = self
            .facts()
            .url_schemes
            .iter()
            .map(|s| format!("`{s}://`"))
            .collect();
        forms.join(" or ")
    }

    /// The sqlparser dialect its SQL is read in (sqlparser's, with the shortcuts of
    /// [`dialect`]).
    pub fn dialect(self) -> Box<dyn sqlparser::dialect::Dialect> {
        (self.facts().parser)()
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
