//! The bundled DuckDB's rules: its aggregates' and operators' result types, its names for
//! unaliased columns, and its spellings in the semantic layer's statements.

mod names;

pub use names::DUCKDB_QUOTED_KEYWORDS;

use sqlparser::ast::Expr;

use super::{exact, integer_or_double, is_integer, is_numeric, numberish};
use super::{DbtConnection, EngineRules};
use crate::types::DataType;

pub(super) struct DuckDb;

impl EngineRules for DuckDb {
    fn sum(&self, arg: &DataType) -> Option<DataType> {
        use DataType::*;
        Some(match arg {
            t if is_integer(t) => HugeInt,
            Numeric(Some((_, s))) => Numeric(Some((38, Some(s.unwrap_or(0))))),
            Real | Double => Double,
            _ => return None,
        })
    }

    fn mean(&self, arg: &DataType) -> Option<DataType> {
        match arg {
            t if is_integer(t) || is_numeric(t) => Some(DataType::Double),
            DataType::Real | DataType::Double => Some(DataType::Double),
            _ => None,
        }
    }

    fn extreme(&self, arg: &DataType) -> Option<DataType> {
        Some(arg.clone())
    }

    /// Decimals sized from both sides' precision and scale; a literal mixed into anything but
    /// integers is not modelled (DuckDB sizes it from its value).
    fn arithmetic(
        &self,
        l: &DataType,
        r: &DataType,
        multiply: bool,
        literal: bool,
    ) -> Option<DataType> {
        if literal && !(is_integer(l) && is_integer(r)) {
            return None;
        }
        if let Some(t) = integer_or_double(l, r) {
            return Some(t);
        }
        let ((p1, s1), (p2, s2)) = (exact(l)?, exact(r)?);
        let (p, s) = match multiply {
            true => (p1 + p2, s1 + s2),
            false => {
                let s = s1.max(s2);
                ((p1 - s1).max(p2 - s2) + s + 1, s)
            }
        };
        (p <= 38).then_some(DataType::Numeric(Some((p, Some(s)))))
    }

    /// Always a double; NULL for a zero divisor.
    fn divide(&self, l: &DataType, r: &DataType) -> Option<DataType> {
        (numberish(l) && numberish(r)).then_some(DataType::Double)
    }

    fn text(&self) -> DataType {
        DataType::Varchar(None)
    }

    /// Sized from its digits: not modelled.
    fn decimal_literal(&self) -> Option<DataType> {
        None
    }

    fn grouping(&self) -> DataType {
        DataType::BigInt
    }

    fn length(&self) -> DataType {
        DataType::BigInt
    }

    fn date_trunc(&self, _: &DataType) -> Option<DataType> {
        None
    }

    fn implicit_name(&self, expr: &Expr) -> Option<String> {
        names::duckdb_top(expr)
    }

    fn approximate_percentile(&self, column: &str, quantile: &str) -> Option<String> {
        Some(format!("approx_quantile({column}, {quantile})"))
    }

    fn percentile(&self, column: &str, quantile: &str, discrete: bool) -> String {
        let f = if discrete { "disc" } else { "cont" };
        format!("quantile_{f}({column}, {quantile})")
    }

    /// DuckDB records no dependency of a view on a column, and binds a view when it is read:
    /// a view is taken to read the column when its SQL names both the table and the column (or
    /// selects `*` or `t.*`), as words, whatever their case. It may name a view that does not read it,
    /// never miss one that does.
    fn column_readers(&self, schema: &str, table: &str, column: &str) -> crate::rows::Statement {
        let _ = schema;
        crate::rows::Statement {
            sql: "SELECT schema_name || '.' || view_name FROM duckdb_views() \
                  WHERE NOT internal \
                    AND regexp_matches(sql, $1) \
                    AND (regexp_matches(sql, $2) \
                         OR regexp_matches(sql, '(?i)(select|,)\\s*(distinct\\s+)?([A-Za-z0-9_]+\\.)?\\*')) \
                  ORDER BY 1"
                .to_string(),
            params: vec![word(table), word(column)],
        }
    }

    fn bare_numeric(&self) -> Option<(u32, u32)> {
        Some((18, 3))
    }

    fn publish_lock(&self, _table: &str, _publish: bool) -> Option<String> {
        // The writer opens the file read-write, which no other process can while it is open.
        None
    }

    fn upsert_set(&self, _table: &str, columns: &[&str]) -> String {
        columns
            .iter()
            .map(|c| {
                let c = crate::ident::quoted(c);
                format!("{c} = EXCLUDED.{c}")
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn sequence_catch_up(
        &self,
        column: &str,
        _staged: &crate::table_facts::Name,
        dest: &crate::table_facts::Name,
        sequence: &crate::table_facts::Name,
    ) -> super::SequenceCatchUp {
        // DuckDB cannot set a sequence: it draws as many values as the sequence lags behind.
        super::SequenceCatchUp::Draw(crate::rows::Statement {
            sql: format!(
                "SELECT count(nextval($1)) FROM (SELECT unnest(generate_series(1, \
                 (SELECT greatest(0, max({}) - (SELECT coalesce(q.last_value + q.increment_by, q.start_value) \
                 FROM duckdb_sequences() AS q WHERE q.database_name = current_database() \
                 AND q.schema_name = $2 AND q.sequence_name = $3) + 1) FROM {}))) AS i) AS draws",
                crate::ident::quoted(column),
                dest.sql()
            ),
            params: vec![
                format!("{}.{}", sequence.schema, sequence.name),
                sequence.schema.clone(),
                sequence.name.clone(),
            ],
        })
    }

    fn quotient_type(&self) -> &'static str {
        "double"
    }

    /// A division by zero is NULL on DuckDB: the statement raises it with `error()`.
    fn raise_on_zero(&self, quotient: String, denominator: &str, message: &str) -> String {
        format!("CASE WHEN {denominator} = 0 THEN error({message}) ELSE {quotient} END")
    }

    /// DuckDB truncates a TIMESTAMPTZ only with the ICU extension, which sqb neither bundles
    /// nor downloads: the instant is truncated as UTC wall time instead.
    fn truncatable(&self, column: String, zoned: bool) -> String {
        match zoned {
            true => format!("CAST({column} AS TIMESTAMP)"),
            false => column,
        }
    }

    fn filter_functions(&self) -> &'static [&'static str] {
        &super::COMMON_FILTER_FUNCTIONS
    }

    fn dbt_connection(&self, database: &str) -> DbtConnection {
        DbtConnection {
            key: "path",
            value: format!("{database}.duckdb"),
            comment: "\n# Fill in the warehouse dbt builds; sqb only ever reads it. `path` is the DuckDB file\n# (the `path` of the profiles.yml output): relative paths are from this directory.\n",
        }
    }
}

/// An RE2 pattern matching `name` as a whole word, whatever its case.
fn word(name: &str) -> String {
    let mut escaped = String::with_capacity(name.len() + 8);
    for c in name.chars() {
        if !c.is_alphanumeric() && c != '_' {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    format!("(?i)(^|[^A-Za-z0-9_]){escaped}([^A-Za-z0-9_]|$)")
}

#[cfg(test)]
mod readers_tests {
    use super::word;

    #[test]
    fn a_name_becomes_a_pattern_of_the_whole_word_with_its_punctuation_escaped() {
        assert_eq!(word("a.b"), "(?i)(^|[^A-Za-z0-9_])a\\.b([^A-Za-z0-9_]|$)");
        assert_eq!(
            word("customer_id"),
            "(?i)(^|[^A-Za-z0-9_])customer_id([^A-Za-z0-9_]|$)"
        );
    }
}
