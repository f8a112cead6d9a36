//! Postgres's rules: its aggregates' and operators' result types, its names for unaliased
//! columns, and its spellings in the semantic layer's statements.

mod names;

use sqlparser::ast::Expr;

use super::{integer_or_double, is_integer, is_numeric, numberish, DbtConnection, EngineRules};
use crate::types::DataType;

pub(super) struct Postgres;

impl EngineRules for Postgres {
    fn sum(&self, arg: &DataType) -> Option<DataType> {
        use DataType::*;
        Some(match arg {
            SmallInt | Integer => BigInt,
            BigInt | Numeric(_) => Numeric(None),
            Real => Real,
            Double => Double,
            _ => return None,
        })
    }

    fn mean(&self, arg: &DataType) -> Option<DataType> {
        match arg {
            t if is_integer(t) || is_numeric(t) => Some(DataType::Numeric(None)),
            DataType::Real | DataType::Double => Some(DataType::Double),
            _ => None,
        }
    }

    /// The argument's type without its modifiers (a length, a precision): an aggregate's
    /// result has none.
    fn extreme(&self, arg: &DataType) -> Option<DataType> {
        use DataType::*;
        match arg {
            Numeric(_) => Some(Numeric(None)),
            Varchar(_) => Some(Varchar(None)),
            Timestamp { tz, .. } => Some(Timestamp {
                precision: None,
                tz: *tz,
            }),
            Time { tz, .. } => Some(Time {
                precision: None,
                tz: *tz,
            }),
            Char(_) | Array { .. } | Struct(_) | Named(_) => None,
            t => Some(t.clone()),
        }
    }

    fn arithmetic(&self, l: &DataType, r: &DataType, _: bool, _: bool) -> Option<DataType> {
        integer_or_double(l, r)
            .or_else(|| (numberish(l) && numberish(r)).then_some(DataType::Numeric(None)))
    }

    /// Integer division of integers; raises on a zero divisor.
    fn divide(&self, l: &DataType, r: &DataType) -> Option<DataType> {
        self.arithmetic(l, r, true, false)
    }

    fn text(&self) -> DataType {
        DataType::Text
    }

    fn decimal_literal(&self) -> Option<DataType> {
        Some(DataType::Numeric(None))
    }

    fn grouping(&self) -> DataType {
        DataType::Integer
    }

    fn length(&self) -> DataType {
        DataType::Integer
    }

    /// A timestamp's kind, its precision dropped.
    fn date_trunc(&self, arg: &DataType) -> Option<DataType> {
        match arg {
            DataType::Timestamp { tz, .. } => Some(DataType::Timestamp {
                precision: None,
                tz: *tz,
            }),
            _ => None,
        }
    }

    fn implicit_name(&self, expr: &Expr) -> Option<String> {
        names::postgres(expr).map(|(name, _)| name)
    }

    fn approximate_percentile(&self, _column: &str, _quantile: &str) -> Option<String> {
        // Postgres has no approximate percentile (nor does MetricFlow render one for it).
        None
    }

    fn percentile(&self, column: &str, quantile: &str, discrete: bool) -> String {
        let f = if discrete { "disc" } else { "cont" };
        format!("percentile_{f}({quantile}) WITHIN GROUP (ORDER BY {column})")
    }

    /// Exact: the catalog records each view's dependency on each column it reads.
    fn column_readers(&self, schema: &str, table: &str, column: &str) -> crate::rows::Statement {
        crate::rows::Statement {
            sql: "SELECT DISTINCT vn.nspname || '.' || v.relname \
                  FROM pg_depend d \
                  JOIN pg_rewrite r ON r.oid = d.objid \
                  JOIN pg_class v ON v.oid = r.ev_class \
                  JOIN pg_namespace vn ON vn.oid = v.relnamespace \
                  JOIN pg_class t ON t.oid = d.refobjid \
                  JOIN pg_namespace tn ON tn.oid = t.relnamespace \
                  JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = d.refobjsubid \
                  WHERE d.classid = 'pg_rewrite'::regclass \
                    AND tn.nspname = $1 AND t.relname = $2 AND a.attname::text = $3 \
                    AND v.oid <> t.oid \
                  ORDER BY 1"
                .to_string(),
            params: vec![schema.to_string(), table.to_string(), column.to_string()],
        }
    }

    fn bare_numeric(&self) -> Option<(u32, u32)> {
        None
    }

    fn publish_lock(&self, table: &str, publish: bool) -> Option<String> {
        // SHARE ROW EXCLUSIVE: readers go on, no other writer (or promote) comes in.
        Some(match publish {
            true => format!("LOCK TABLE {table} IN SHARE ROW EXCLUSIVE MODE"),
            false => format!("LOCK TABLE {table} IN SHARE MODE"),
        })
    }

    fn upsert_set(&self, table: &str, columns: &[&str]) -> String {
        let list = |prefix: &str| {
            columns
                .iter()
                .map(|c| format!("{prefix}{}", crate::ident::quoted(c)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        format!(
            "({}) = ROW({}) WHERE ({}) IS DISTINCT FROM ({})",
            list(""),
            list("EXCLUDED."),
            list(&format!("{table}.")),
            list("EXCLUDED.")
        )
    }

    fn sequence_catch_up(
        &self,
        column: &str,
        staged: &crate::table_facts::Name,
        _dest: &crate::table_facts::Name,
        sequence: &crate::table_facts::Name,
    ) -> super::SequenceCatchUp {
        super::SequenceCatchUp::Restart(crate::rows::Statement {
            sql: format!(
                "SELECT top.m + 1 FROM (SELECT max({})::bigint AS m FROM {}) AS top, {} AS q \
                 WHERE top.m >= CASE WHEN q.is_called THEN q.last_value + 1 ELSE q.last_value END",
                crate::ident::quoted(column),
                staged.sql(),
                sequence.sql()
            ),
            params: Vec::new(),
        })
    }

    fn quotient_type(&self) -> &'static str {
        "numeric"
    }

    /// Postgres raises `division by zero` itself.
    fn raise_on_zero(&self, quotient: String, _: &str, _: &str) -> String {
        quotient
    }

    fn truncatable(&self, column: String, _: bool) -> String {
        column
    }

    fn filter_functions(&self) -> &'static [&'static str] {
        &super::COMMON_FILTER_FUNCTIONS
    }

    fn dbt_connection(&self, database: &str) -> DbtConnection {
        DbtConnection {
            key: "url",
            value: format!("postgres://USER@localhost:5432/{database}"),
            comment: "\n# Fill in the warehouse dbt builds; sqb only ever reads it. The password never goes\n# here: it comes from PGPASSWORD or ~/.pgpass, and SQB_DATABASE_URL overrides the URL.\n",
        }
    }
}
