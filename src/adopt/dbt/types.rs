//! dbt's `data_type` spellings as sqb column types.
//!
//! dbt passes a contract's `data_type` to the warehouse as written, except that with
//! `alias_types` (the default) it first translates the generic names of its `Column` class for
//! the adapter. dbt-postgres and dbt-duckdb keep the base class's one alias, `string` → `text`;
//! every other spelling reaches the warehouse, and sqb's type parser, unchanged.

/// The sqb `type` for a dbt `data_type`, as dbt would send it to an adapter with `alias_types`.
pub fn translate(data_type: &str, alias_types: bool) -> String {
    let spelled = data_type.trim();
    if alias_types && spelled.eq_ignore_ascii_case("string") {
        return "text".to_string();
    }
    spelled.to_string()
}

#[cfg(test)]
mod tests {
    use super::translate;
    use crate::engine::Engine;
    use crate::types::{parse, DataType};

    /// Every spelling of dbt's contract docs and of the fixture project, with what it becomes
    /// and how sqb reads it on each engine.
    #[test]
    fn dbt_spellings_translate_and_parse_per_engine() {
        let table: &[(&str, &str, DataType)] = &[
            ("int", "int", DataType::Integer),
            ("integer", "integer", DataType::Integer),
            ("bigint", "bigint", DataType::BigInt),
            ("string", "text", DataType::Text),
            ("STRING", "text", DataType::Text),
            ("text", "text", DataType::Text),
            ("varchar", "varchar", DataType::Varchar(None)),
            ("varchar(256)", "varchar(256)", DataType::Varchar(Some(256))),
            (
                "numeric(38,3)",
                "numeric(38,3)",
                DataType::Numeric(Some((38, Some(3)))),
            ),
            (
                "decimal(10,2)",
                "decimal(10,2)",
                DataType::Numeric(Some((10, Some(2)))),
            ),
            ("boolean", "boolean", DataType::Boolean),
            ("date", "date", DataType::Date),
            (
                " timestamp ",
                "timestamp",
                DataType::Timestamp {
                    precision: None,
                    tz: false,
                },
            ),
            (
                "timestamptz",
                "timestamptz",
                DataType::Timestamp {
                    precision: None,
                    tz: true,
                },
            ),
        ];
        for (dbt, sqb, parsed) in table {
            assert_eq!(translate(dbt, true), *sqb, "{dbt}");
            for engine in [Engine::Postgres, Engine::DuckDb] {
                assert_eq!(
                    parse(sqb, engine).as_ref(),
                    Ok(parsed),
                    "{dbt} on {engine:?}"
                );
            }
        }
    }

    #[test]
    fn without_alias_types_the_spelling_is_kept() {
        assert_eq!(translate("string", false), "string");
        assert_eq!(translate("varchar(256)", false), "varchar(256)");
    }
}
