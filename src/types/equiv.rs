//! Engine-aware type equivalence: does a physical column satisfy a declared type?
//!
//! The rules: both sides are first normalized for the engine (DuckDB keeps every string type as a
//! length-less VARCHAR; Postgres ignores array sizes and defaults time precision to 6). Then a
//! length, precision, scale or array size is compared only when the declaration states it.

use super::DataType;
use crate::engine::Engine;

/// The default fractional-second precision of TIME and TIMESTAMP on both engines.
const DEFAULT_TIME_PRECISION: u32 = 6;

/// The type as `engine` stores it: what a catalog could report for a column declared so.
pub fn normalize(ty: &DataType, engine: Engine) -> DataType {
    use DataType::*;
    match ty {
        Varchar(_) | Char(_) | Text if !engine.keeps_string_kinds() => Varchar(None),
        // NUMERIC(p) is NUMERIC(p,0) in SQL.
        Numeric(Some((p, None))) => Numeric(Some((*p, Some(0)))),
        Array { element, size } => Array {
            element: Box::new(normalize(element, engine)),
            size: size.filter(|_| engine.keeps_array_sizes()),
        },
        Struct(fields) => Struct(normalize_fields(fields, engine)),
        Union(fields) => Union(normalize_fields(fields, engine)),
        Map(k, v) => Map(
            Box::new(normalize(k, engine)),
            Box::new(normalize(v, engine)),
        ),
        other => other.clone(),
    }
}

fn normalize_fields(fields: &[(String, DataType)], engine: Engine) -> Vec<(String, DataType)> {
    fields
        .iter()
        .map(|(n, t)| (n.clone(), normalize(t, engine)))
        .collect()
}

/// The type with every length, precision, scale and array size dropped: what dbt's contracts
/// compare (`settings.compare_type_size = false`).
pub fn without_sizes(ty: &DataType) -> DataType {
    use DataType::*;
    let fields = |fields: &[(String, DataType)]| {
        fields
            .iter()
            .map(|(n, t)| (n.clone(), without_sizes(t)))
            .collect()
    };
    match ty {
        Numeric(_) => Numeric(None),
        Varchar(_) => Varchar(None),
        Char(_) => Char(None),
        Time { tz, .. } => Time {
            precision: None,
            tz: *tz,
        },
        Timestamp { tz, .. } => Timestamp {
            precision: None,
            tz: *tz,
        },
        Array { element, .. } => Array {
            element: Box::new(without_sizes(element)),
            size: None,
        },
        Struct(f) => Struct(fields(f)),
        Union(f) => Union(fields(f)),
        Map(k, v) => Map(Box::new(without_sizes(k)), Box::new(without_sizes(v))),
        other => other.clone(),
    }
}

/// Whether a column of type `physical` satisfies the declaration `declared` on `engine`.
pub fn equivalent(declared: &DataType, physical: &DataType, engine: Engine) -> bool {
    satisfies(
        &normalize(declared, engine),
        &normalize(physical, engine),
        engine,
    )
}

fn satisfies(declared: &DataType, physical: &DataType, engine: Engine) -> bool {
    use DataType::*;
    match (declared, physical) {
        (Numeric(d), Numeric(p)) => d.is_none() || d == p,
        // An unbounded VARCHAR and TEXT are the same thing; a stated length must match.
        (Varchar(None), Varchar(_) | Text) | (Text, Varchar(None) | Text) => true,
        (Varchar(Some(d)), Varchar(Some(p))) => d == p,
        (Char(d), Char(p)) => d.is_none() || d == p,
        (
            Time {
                precision: dp,
                tz: dz,
            },
            Time {
                precision: pp,
                tz: pz,
            },
        )
        | (
            Timestamp {
                precision: dp,
                tz: dz,
            },
            Timestamp {
                precision: pp,
                tz: pz,
            },
        ) => dz == pz && precision_matches(*dp, *pp),
        (
            Array {
                element: de,
                size: ds,
            },
            Array {
                element: pe,
                size: ps,
            },
        ) => (ds.is_none() || ds == ps) && satisfies(de, pe, engine),
        (Struct(d), Struct(p)) | (Union(d), Union(p)) => fields_match(d, p, engine),
        (Map(dk, dv), Map(pk, pv)) => satisfies(dk, pk, engine) && satisfies(dv, pv, engine),
        (Enum(d), Enum(p)) => same_members(d, p),
        (Named(d), Named(p)) => named_match(d, p),
        (d, p) => d == p,
    }
}

fn precision_matches(declared: Option<u32>, physical: Option<u32>) -> bool {
    match declared {
        None => true,
        Some(d) => d == physical.unwrap_or(DEFAULT_TIME_PRECISION),
    }
}

fn fields_match(
    declared: &[(String, DataType)],
    physical: &[(String, DataType)],
    engine: Engine,
) -> bool {
    declared.len() == physical.len()
        && declared
            .iter()
            .zip(physical)
            .all(|((dn, dt), (pn, pt))| dn.eq_ignore_ascii_case(pn) && satisfies(dt, pt, engine))
}

/// Enums compare by their set of members.
pub fn same_members(a: &[String], b: &[String]) -> bool {
    let mut a: Vec<&String> = a.iter().collect();
    let mut b: Vec<&String> = b.iter().collect();
    a.sort();
    b.sort();
    a == b
}

/// Opaque names match when equal, or when one is unqualified and equals the other's last part.
fn named_match(declared: &str, physical: &str) -> bool {
    if declared == physical {
        return true;
    }
    let last = |s: &str| s.rsplit('.').next().unwrap_or(s).to_string();
    (!declared.contains('.') || !physical.contains('.')) && last(declared) == last(physical)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::parse;

    fn eq(declared: &str, physical: &str, engine: Engine) -> bool {
        let d = parse(declared, engine).unwrap();
        let p = parse(physical, engine).unwrap();
        equivalent(&d, &p, engine)
    }

    const PG: Engine = Engine::Postgres;
    const DUCK: Engine = Engine::DuckDb;

    #[test]
    fn postgres_equivalence_table() {
        let cases: &[(&str, &str, bool)] = &[
            ("VARCHAR(255)", "character varying(255)", true),
            ("VARCHAR(255)", "character varying(100)", false),
            ("VARCHAR(255)", "text", false),
            ("VARCHAR", "character varying(40)", true),
            ("VARCHAR", "text", true),
            ("TEXT", "character varying", true),
            ("TEXT", "character varying(10)", false),
            ("STRING", "text", true),
            ("CHAR(3)", "character(3)", true),
            ("CHAR(3)", "bpchar(3)", true),
            ("CHAR(3)", "character varying(3)", false),
            ("NUMERIC", "numeric(18,2)", true),
            ("NUMERIC(18,2)", "numeric(18,2)", true),
            ("DECIMAL(18,2)", "numeric(18,3)", false),
            ("NUMERIC(10)", "numeric(10,0)", true),
            ("NUMERIC(18,2)", "numeric", false),
            ("FLOAT", "double precision", true),
            ("FLOAT", "real", false),
            ("FLOAT(24)", "real", true),
            ("FLOAT8", "double precision", true),
            ("REAL", "float4", true),
            ("INT", "integer", true),
            ("INT4", "integer", true),
            ("INTEGER", "bigint", false),
            ("INT8", "bigint", true),
            ("INT2", "smallint", true),
            ("BOOL", "boolean", true),
            ("TIMESTAMPTZ", "timestamp with time zone", true),
            ("TIMESTAMPTZ", "timestamp without time zone", false),
            ("TIMESTAMP", "timestamp(3) without time zone", true),
            ("TIMESTAMP(3)", "timestamp(3) without time zone", true),
            ("TIMESTAMP(3)", "timestamp without time zone", false),
            ("TIMESTAMP(6)", "timestamp without time zone", true),
            ("TIME", "time without time zone", true),
            ("TIMETZ", "time with time zone", true),
            ("INTERVAL", "interval", true),
            ("UUID", "uuid", true),
            ("JSON", "jsonb", false),
            ("JSONB", "jsonb", true),
            ("BYTEA", "bytea", true),
            ("INTEGER[]", "integer[]", true),
            ("INTEGER[]", "_int4", true),
            ("INTEGER[3]", "integer[]", true),
            ("TEXT[]", "character varying(10)[]", false),
            ("INTEGER[]", "bigint[]", false),
            ("order_status", "order_status", true),
            ("order_status[]", "_order_status", true),
            ("public.order_status", "order_status", true),
            ("geometry", "geometry(Point,4326)", true),
            ("geometry", "geography", false),
        ];
        for (declared, physical, expected) in cases {
            assert_eq!(
                eq(declared, physical, PG),
                *expected,
                "{declared} vs {physical} on postgres"
            );
        }
    }

    #[test]
    fn duckdb_equivalence_table() {
        let cases: &[(&str, &str, bool)] = &[
            ("VARCHAR(255)", "VARCHAR", true),
            ("TEXT", "VARCHAR", true),
            ("CHAR(3)", "VARCHAR", true),
            ("STRING", "VARCHAR", true),
            ("FLOAT", "FLOAT", true),
            ("FLOAT", "DOUBLE", false),
            ("DOUBLE PRECISION", "DOUBLE", true),
            ("FLOAT8", "DOUBLE", true),
            ("NUMERIC", "DECIMAL(18,3)", true),
            ("NUMERIC(18,2)", "DECIMAL(18,3)", false),
            ("HUGEINT", "HUGEINT", true),
            ("HUGEINT", "BIGINT", false),
            ("UBIGINT", "UBIGINT", true),
            ("UTINYINT", "UTINYINT", true),
            ("TINYINT", "UTINYINT", false),
            ("INTEGER[]", "INTEGER[]", true),
            ("INTEGER[3]", "INTEGER[3]", true),
            ("INTEGER[3]", "INTEGER[]", false),
            ("INTEGER[]", "INTEGER[3]", true),
            ("LIST(INTEGER)", "INTEGER[]", true),
            (
                "STRUCT(a INTEGER, b VARCHAR)",
                "STRUCT(a INTEGER, b VARCHAR)",
                true,
            ),
            (
                "STRUCT(a INTEGER, b TEXT)",
                "STRUCT(a INTEGER, b VARCHAR)",
                true,
            ),
            ("STRUCT(a INTEGER)", "STRUCT(a BIGINT)", false),
            (
                "STRUCT(a INTEGER, b INTEGER)",
                "STRUCT(b INTEGER, a INTEGER)",
                false,
            ),
            ("MAP(VARCHAR, INTEGER)", "MAP(VARCHAR, INTEGER)", true),
            ("MAP(VARCHAR, INTEGER)", "MAP(VARCHAR, BIGINT)", false),
            (
                "UNION(n INTEGER, s VARCHAR)",
                "UNION(n INTEGER, s VARCHAR)",
                true,
            ),
            ("ENUM('a', 'b')", "ENUM('b', 'a')", true),
            ("ENUM('a', 'b')", "ENUM('a', 'c')", false),
            ("BLOB", "BLOB", true),
            ("BYTEA", "BLOB", true),
            ("TIMESTAMP WITH TIME ZONE", "TIMESTAMP WITH TIME ZONE", true),
            ("TIMESTAMPTZ", "TIMESTAMP", false),
            ("DATETIME", "TIMESTAMP", true),
            ("BOOL", "BOOLEAN", true),
            ("LOGICAL", "BOOLEAN", true),
            ("JSON", "JSON", true),
            ("UUID", "UUID", true),
            ("TIMESTAMP_NS", "TIMESTAMP", false),
        ];
        for (declared, physical, expected) in cases {
            assert_eq!(
                eq(declared, physical, DUCK),
                *expected,
                "{declared} vs {physical} on duckdb"
            );
        }
    }

    #[test]
    fn without_sizes_only_names_are_compared() {
        let pairs = [
            ("varchar(256)", "varchar(257)", true),
            ("numeric(38,3)", "numeric(10,2)", true),
            ("timestamp(3)", "timestamp", true),
            ("varchar(10)", "text", true),
            ("integer", "bigint", false),
            ("timestamp", "timestamptz", false),
        ];
        for engine in [Engine::Postgres, Engine::DuckDb] {
            for (declared, physical, agree) in pairs {
                let d = without_sizes(&parse(declared, engine).unwrap());
                let p = without_sizes(&parse(physical, engine).unwrap());
                assert_eq!(equivalent(&d, &p, engine), agree, "{declared} / {physical}");
            }
        }
        assert!(!equivalent(
            &parse("varchar(256)", Engine::Postgres).unwrap(),
            &parse("varchar(257)", Engine::Postgres).unwrap(),
            Engine::Postgres
        ));
    }

    #[test]
    fn float_means_different_sizes_per_engine() {
        assert_eq!(parse("float", PG).unwrap(), DataType::Double);
        assert_eq!(parse("float", DUCK).unwrap(), DataType::Real);
    }
}
