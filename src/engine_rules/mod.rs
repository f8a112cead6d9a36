//! What an engine's SQL means where sqb's types or SQL trees come in: the result types of
//! aggregates, operators, literals and functions, the name of an unaliased output column, the
//! spellings the semantic layer's statements need, and the connection `import dbt` writes.
//!
//! Each engine's folder implements [`EngineRules`]; [`of`] is the one place an engine is matched
//! to its rules. What is plain data (how names fold, which types it keeps apart, its sqlparser
//! dialect) is a row of [`crate::engine`]'s table. tests/engine_types.rs checks the result-type
//! rules against both engines.

mod duckdb;
mod postgres;

pub use self::duckdb::DUCKDB_QUOTED_KEYWORDS;

use self::duckdb::DuckDb;
use self::postgres::Postgres;

use sqlparser::ast::Expr;

use crate::engine::Engine;
use crate::types::DataType;

/// How a sequence is moved past the published keys.
pub enum SequenceCatchUp {
    /// A probe returning the value to restart at (no row when none is needed): `ALTER
    /// SEQUENCE ... RESTART` is transactional where `setval` is not.
    Restart(crate::rows::Statement),
    /// A statement that draws values until the sequence is past them.
    Draw(crate::rows::Statement),
}

/// One engine's rules. Anything a rule does not cover is `None` (not proven).
pub trait EngineRules: Sync {
    /// `sum(x)`.
    fn sum(&self, arg: &DataType) -> Option<DataType>;
    /// `avg(x)`, and the standard deviations and variances.
    fn mean(&self, arg: &DataType) -> Option<DataType>;
    /// `min(x)` and `max(x)`.
    fn extreme(&self, arg: &DataType) -> Option<DataType>;
    /// `a + b`, `a - b` (`multiply` false) and `a * b`; `literal`: one side is a literal.
    fn arithmetic(
        &self,
        l: &DataType,
        r: &DataType,
        multiply: bool,
        literal: bool,
    ) -> Option<DataType>;
    /// `a / b`.
    fn divide(&self, l: &DataType, r: &DataType) -> Option<DataType>;
    /// The type of a string literal, of `||` and of the string functions.
    fn text(&self) -> DataType;
    /// The type of a decimal literal (`1.5`), where it does not depend on its digits.
    fn decimal_literal(&self) -> Option<DataType>;
    /// `length(s)` and `char_length(s)`.
    fn length(&self) -> DataType;
    /// `grouping(a, ...)`.
    fn grouping(&self) -> DataType;
    /// `date_trunc(unit, t)` of a `t` of this type.
    fn date_trunc(&self, arg: &DataType) -> Option<DataType>;

    /// The name the engine gives `expr` as an unaliased output column, where it is known.
    fn implicit_name(&self, expr: &Expr) -> Option<String>;

    /// The percentile `quantile` (a number's text) of `column` (an expression): interpolated
    /// between the two nearest values, or (`discrete`) the first value at or past it.
    fn percentile(&self, column: &str, quantile: &str, discrete: bool) -> String;
    /// An approximate continuous percentile (MetricFlow's `use_approximate_percentile`), where
    /// the engine has one MetricFlow also renders.
    fn approximate_percentile(&self, column: &str, quantile: &str) -> Option<String>;
    /// The type a numerator is cast to for an exact ratio.
    fn quotient_type(&self) -> &'static str;
    /// The statement listing the views (`schema.name`, one a row) that read `column` of the
    /// table `schema.table`: a column they read cannot be retyped (Postgres refuses) or dropped
    /// (they would break). Names go in as parameters.
    fn column_readers(&self, schema: &str, table: &str, column: &str) -> crate::rows::Statement;
    /// The lock `sqb promote` takes on a table (`table`, quoted) before it publishes: on the
    /// destination (`publish`), or on the staged copy so that it stays as checked; `None`
    /// where the writer holds the whole database.
    fn publish_lock(&self, table: &str, publish: bool) -> Option<String>;
    /// The `SET` list of `ON CONFLICT ... DO UPDATE` that writes `columns` of `table`
    /// (quoted) from `EXCLUDED`, leaving a row that would not change untouched where the
    /// engine can say so.
    fn upsert_set(&self, table: &str, columns: &[&str]) -> String;
    /// How `sqb promote` moves `sequence`, which feeds `column`, past the largest published
    /// key.
    fn sequence_catch_up(
        &self,
        column: &str,
        staged: &crate::table_facts::Name,
        dest: &crate::table_facts::Name,
        sequence: &crate::table_facts::Name,
    ) -> SequenceCatchUp;
    /// The precision and scale of a `NUMERIC` declared without them; `None` where it holds any
    /// number (Postgres).
    fn bare_numeric(&self) -> Option<(u32, u32)>;
    /// `quotient`, failing the statement with `message` (a string literal) where `denominator`
    /// is zero.
    fn raise_on_zero(&self, quotient: String, denominator: &str, message: &str) -> String;
    /// A time column (`zoned`: with a time zone) as `date_trunc` can take it.
    fn truncatable(&self, column: String, zoned: bool) -> String;

    /// The pure scalar functions a filter may call (`semantic::filter`), by their bare names:
    /// none reads a relation, a file, the network, the catalog or a setting, or waits.
    fn filter_functions(&self) -> &'static [&'static str];

    /// The `[connection]` entry `import dbt` writes for a warehouse named `database`, and the
    /// comment above it.
    fn dbt_connection(&self, database: &str) -> DbtConnection;
}

/// The pure scalar functions both engines have, under the same names and meaning.
const COMMON_FILTER_FUNCTIONS: [&str; 16] = [
    "abs",
    "ceil",
    "char_length",
    "coalesce",
    "date_part",
    "date_trunc",
    "floor",
    "greatest",
    "least",
    "length",
    "lower",
    "ltrim",
    "nullif",
    "round",
    "rtrim",
    "upper",
];

/// One `[connection]` key and value, and what the user should fill in.
pub struct DbtConnection {
    pub key: &'static str,
    pub value: String,
    pub comment: &'static str,
}

/// The rules of `engine`.
pub fn of(engine: Engine) -> &'static dyn EngineRules {
    match engine {
        Engine::Postgres => &Postgres,
        Engine::DuckDb => &DuckDb,
    }
}

/// The precision and scale of an exact number: a decimal's own, an integer's as the decimal
/// DuckDB widens it to.
fn exact(t: &DataType) -> Option<(u32, u32)> {
    match t {
        DataType::TinyInt => Some((3, 0)),
        DataType::SmallInt => Some((5, 0)),
        DataType::Integer => Some((10, 0)),
        DataType::BigInt => Some((19, 0)),
        DataType::HugeInt => Some((38, 0)),
        DataType::Numeric(Some((p, s))) => Some((*p, s.unwrap_or(0))),
        _ => None,
    }
}

pub fn is_integer(t: &DataType) -> bool {
    matches!(
        t,
        DataType::TinyInt | DataType::SmallInt | DataType::Integer | DataType::BigInt
    )
}

fn is_numeric(t: &DataType) -> bool {
    matches!(t, DataType::Numeric(_))
}

/// An integer, a decimal or a double.
fn numberish(t: &DataType) -> bool {
    is_integer(t) || is_numeric(t) || matches!(t, DataType::Double)
}

/// What both engines' `+`, `-` and `*` give: the wider of two integers, a double with any other
/// number. `None` where the engines differ.
fn integer_or_double(l: &DataType, r: &DataType) -> Option<DataType> {
    if is_integer(l) && is_integer(r) {
        return Some(wider_integer(l, r));
    }
    let is_double = |t: &DataType| matches!(t, DataType::Double);
    ((is_double(l) || is_double(r)) && numberish(l) && numberish(r)).then_some(DataType::Double)
}

/// `a % b` of two integers, on both engines: the wider one.
pub fn modulo(l: &DataType, r: &DataType) -> Option<DataType> {
    (is_integer(l) && is_integer(r)).then(|| wider_integer(l, r))
}

fn wider_integer(l: &DataType, r: &DataType) -> DataType {
    let rank = |t: &DataType| exact(t).map_or(0, |(p, _)| p);
    match rank(l) >= rank(r) {
        true => l.clone(),
        false => r.clone(),
    }
}

/// The type CASE, COALESCE and the like resolve their branches to, on both engines: one type
/// they all have (Postgres keeps its modifiers only then), or the widest of integers. `None`
/// when any branch's type is unknown.
pub fn common(types: &[Option<DataType>]) -> Option<DataType> {
    let first = types.first()?.as_ref()?;
    let mut out = first.clone();
    for t in &types[1..] {
        let t = t.as_ref()?;
        out = match (&out, t) {
            (a, b) if a == b => out.clone(),
            (a, b) if is_integer(a) && is_integer(b) => wider_integer(a, b),
            _ => return None,
        };
    }
    Some(out)
}
