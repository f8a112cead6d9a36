//! The column type system: one model for declared and physical type strings of both engines.
//!
//! [`parse`] reads any spelling (`character varying(255)`, `_int4`, `STRUCT(a INTEGER)`) into a
//! [`DataType`]; [`equivalent`] decides, for one engine, whether a declared type is satisfied by
//! a physical one; [`DataType`]'s `Display` writes the canonical portable spelling that
//! `contract generate` writes back and that parses to an equivalent type on both engines.

mod equiv;
mod parse;
mod pg_catalog;

pub use equiv::{equivalent, normalize, same_members, without_sizes};
pub use parse::{parse, TypeParseError};

use std::fmt;

use crate::engine::Engine;

/// A column type. Lengths, precisions and scales are `None` when the spelling leaves them out.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum DataType {
    TinyInt,
    SmallInt,
    Integer,
    BigInt,
    HugeInt,
    UTinyInt,
    USmallInt,
    UInteger,
    UBigInt,
    UHugeInt,
    /// `NUMERIC(precision, scale)`.
    Numeric(Option<(u32, Option<u32>)>),
    /// 4-byte float.
    Real,
    /// 8-byte float.
    Double,
    Varchar(Option<u32>),
    Char(Option<u32>),
    Text,
    Boolean,
    Date,
    Time {
        precision: Option<u32>,
        tz: bool,
    },
    Timestamp {
        precision: Option<u32>,
        tz: bool,
    },
    Interval,
    Uuid,
    Json,
    Jsonb,
    Bytes,
    /// `T[]` (a Postgres array or a DuckDB LIST) or `T[n]` (a DuckDB fixed-size ARRAY).
    Array {
        element: Box<DataType>,
        size: Option<u32>,
    },
    Struct(Vec<(String, DataType)>),
    Map(Box<DataType>, Box<DataType>),
    Union(Vec<(String, DataType)>),
    /// An inline enum, such as DuckDB's `ENUM('a', 'b')`.
    Enum(Vec<String>),
    /// A type sqb keeps opaque: user-defined (Postgres enums, domains, PostGIS `geometry`) or an
    /// engine type with no portable meaning (`inet`, `money`). Lower-cased unless quoted.
    Named(String),
}

impl DataType {
    /// True for `NUMERIC` with no precision (anywhere inside the type).
    pub fn has_unbounded_numeric(&self) -> bool {
        match self {
            DataType::Numeric(None) => true,
            DataType::Array { element, .. } => element.has_unbounded_numeric(),
            DataType::Map(k, v) => k.has_unbounded_numeric() || v.has_unbounded_numeric(),
            DataType::Struct(fields) | DataType::Union(fields) => {
                fields.iter().any(|(_, t)| t.has_unbounded_numeric())
            }
            _ => false,
        }
    }

    /// The opaque names used anywhere inside the type.
    pub fn named_types(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.collect_named(&mut out);
        out
    }

    fn collect_named<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            DataType::Named(name) => out.push(name),
            DataType::Array { element, .. } => element.collect_named(out),
            DataType::Map(k, v) => {
                k.collect_named(out);
                v.collect_named(out);
            }
            DataType::Struct(fields) | DataType::Union(fields) => {
                fields.iter().for_each(|(_, t)| t.collect_named(out))
            }
            _ => {}
        }
    }
}

/// Built-in engine types that sqb does not model but recognises, kept as [`DataType::Named`].
pub const KNOWN_OPAQUE_TYPES: &[&str] = &[
    "bit",
    "bit varying",
    "varbit",
    "bitstring",
    "money",
    "inet",
    "cidr",
    "macaddr",
    "macaddr8",
    "xml",
    "tsvector",
    "tsquery",
    "oid",
    "regclass",
    "name",
    "point",
    "line",
    "lseg",
    "box",
    "path",
    "polygon",
    "circle",
    "int4range",
    "int8range",
    "numrange",
    "tsrange",
    "tstzrange",
    "daterange",
    "int4multirange",
    "int8multirange",
    "nummultirange",
    "tsmultirange",
    "tstzmultirange",
    "datemultirange",
    "pg_lsn",
    "txid_snapshot",
    "pg_snapshot",
    "timestamp_s",
    "timestamp_ms",
    "timestamp_ns",
    "varint",
    "bignum",
    "geometry",
    "geography",
    "citext",
    "hstore",
    "ltree",
    "vector",
    "halfvec",
    "sparsevec",
];

/// Whether an opaque name is an engine or extension type (a type of its own, never another
/// spelling of a modelled one), as opposed to a user-defined type or domain. On Postgres that is
/// every type `pg_catalog` defines, unqualified, qualified (`pg_catalog.xid`) or quoted where
/// its name needs it (`"char"`).
pub fn is_builtin_named(name: &str, engine: Engine) -> bool {
    if KNOWN_OPAQUE_TYPES.contains(&name) {
        return true;
    }
    if !engine.has_pg_catalog() {
        return false;
    }
    let name = name.strip_prefix("pg_catalog.").unwrap_or(name);
    let bare = match name.strip_prefix('"').and_then(|n| n.strip_suffix('"')) {
        Some(inner) if crate::ident::quote_ident(inner) == name => inner,
        Some(_) => return false,
        None => name,
    };
    pg_catalog::PG_CATALOG_TYPES.contains(&bare)
}

/// Whether an opaque name needs no declaration: a built-in engine or extension type, or a
/// schema-qualified user-defined type (`public.order_status`).
pub fn is_recognized_named(name: &str, engine: Engine) -> bool {
    name.contains('.') || is_builtin_named(name, engine)
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use DataType::*;
        match self {
            TinyInt => f.write_str("TINYINT"),
            SmallInt => f.write_str("SMALLINT"),
            Integer => f.write_str("INTEGER"),
            BigInt => f.write_str("BIGINT"),
            HugeInt => f.write_str("HUGEINT"),
            UTinyInt => f.write_str("UTINYINT"),
            USmallInt => f.write_str("USMALLINT"),
            UInteger => f.write_str("UINTEGER"),
            UBigInt => f.write_str("UBIGINT"),
            UHugeInt => f.write_str("UHUGEINT"),
            Numeric(None) => f.write_str("NUMERIC"),
            Numeric(Some((p, None))) => write!(f, "NUMERIC({p})"),
            Numeric(Some((p, Some(s)))) => write!(f, "NUMERIC({p},{s})"),
            Real => f.write_str("REAL"),
            Double => f.write_str("DOUBLE PRECISION"),
            Varchar(None) => f.write_str("VARCHAR"),
            Varchar(Some(n)) => write!(f, "VARCHAR({n})"),
            Char(None) => f.write_str("CHAR"),
            Char(Some(n)) => write!(f, "CHAR({n})"),
            Text => f.write_str("TEXT"),
            Boolean => f.write_str("BOOLEAN"),
            Date => f.write_str("DATE"),
            Time { precision, tz } => {
                f.write_str(if *tz { "TIMETZ" } else { "TIME" })?;
                write_precision(f, *precision)
            }
            Timestamp { precision, tz } => {
                f.write_str(if *tz { "TIMESTAMPTZ" } else { "TIMESTAMP" })?;
                write_precision(f, *precision)
            }
            Interval => f.write_str("INTERVAL"),
            Uuid => f.write_str("UUID"),
            Json => f.write_str("JSON"),
            Jsonb => f.write_str("JSONB"),
            Bytes => f.write_str("BYTEA"),
            Array { element, size } => match size {
                Some(n) => write!(f, "{element}[{n}]"),
                None => write!(f, "{element}[]"),
            },
            Struct(fields) => write_fields(f, "STRUCT", fields),
            Union(fields) => write_fields(f, "UNION", fields),
            Map(k, v) => write!(f, "MAP({k}, {v})"),
            Enum(members) => {
                f.write_str("ENUM(")?;
                for (i, m) in members.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "'{}'", m.replace('\'', "''"))?;
                }
                f.write_str(")")
            }
            Named(name) => write_named(f, name),
        }
    }
}

/// A user-defined or opaque type name: as is where it reads back as itself on every engine,
/// else double-quoted (a quoted `"nchar"` is a user type, not `CHAR`).
fn write_named(f: &mut fmt::Formatter<'_>, name: &str) -> fmt::Result {
    let reads_back = |engine| matches!(parse(name, engine), Ok(DataType::Named(n)) if n == name);
    if Engine::ALL.into_iter().all(reads_back) {
        f.write_str(name)
    } else {
        f.write_str(&crate::ident::quoted(name))
    }
}

fn write_precision(f: &mut fmt::Formatter<'_>, precision: Option<u32>) -> fmt::Result {
    match precision {
        Some(p) => write!(f, "({p})"),
        None => Ok(()),
    }
}

fn write_fields(
    f: &mut fmt::Formatter<'_>,
    kind: &str,
    fields: &[(String, DataType)],
) -> fmt::Result {
    write!(f, "{kind}(")?;
    for (i, (name, ty)) in fields.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{} {ty}", crate::ident::quote_ident(name))?;
    }
    f.write_str(")")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Engine;

    #[test]
    fn parses_catalog_spellings() {
        let pg = Engine::Postgres;
        let cases: &[(&str, DataType)] = &[
            ("character varying(255)", DataType::Varchar(Some(255))),
            (
                "timestamp(3) with time zone",
                DataType::Timestamp {
                    precision: Some(3),
                    tz: true,
                },
            ),
            ("double precision", DataType::Double),
            ("numeric(18,2)", DataType::Numeric(Some((18, Some(2))))),
            (
                "_int4",
                DataType::Array {
                    element: Box::new(DataType::Integer),
                    size: None,
                },
            ),
            (
                "integer[]",
                DataType::Array {
                    element: Box::new(DataType::Integer),
                    size: None,
                },
            ),
            ("\"Weird Type\"", DataType::Named("\"Weird Type\"".into())),
            ("public.Mood", DataType::Named("public.mood".into())),
            ("interval year to month", DataType::Interval),
            ("national character varying(3)", DataType::Varchar(Some(3))),
            ("bit varying(5)", DataType::Named("bit varying".into())),
        ];
        for (text, expected) in cases {
            assert_eq!(&parse(text, pg).unwrap(), expected, "{text}");
        }
    }

    #[test]
    fn parses_duckdb_nested_types() {
        let ty = parse(
            "STRUCT(\"a b\" INTEGER[], m MAP(VARCHAR, ENUM('x', 'y''s')))",
            Engine::DuckDb,
        )
        .unwrap();
        assert_eq!(
            ty.to_string(),
            "STRUCT(\"a b\" INTEGER[], m MAP(VARCHAR, ENUM('x', 'y''s')))"
        );
    }

    #[test]
    fn rejects_malformed_types_with_offsets() {
        let cases: &[(&str, usize)] = &[
            ("VARCHAR(", 8),
            ("NUMERIC(1,2,3)", 7),
            ("NUMERIC(2,5)", 7),
            ("INTEGER[", 8),
            ("INTEGER INTEGER", 8),
            ("", 0),
            ("STRUCT()", 7),
            ("VARCHAR(abc)", 8),
            ("ENUM(a)", 5),
            ("\"unterminated", 0),
            ("INT%", 3),
        ];
        for (text, offset) in cases {
            let err = parse(text, Engine::Postgres).unwrap_err();
            assert_eq!(err.offset, *offset, "{text}: {err}");
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let text = format!("{}INTEGER{}", "LIST(".repeat(10_000), ")".repeat(10_000));
        assert!(parse(&text, Engine::DuckDb).is_err());
    }

    #[test]
    fn canonical_spelling_round_trips_on_both_engines() {
        let samples = [
            "varchar(255)",
            "character varying",
            "text",
            "bpchar(2)",
            "numeric(18,2)",
            "numeric",
            "decimal(10)",
            "real",
            "double precision",
            "float8",
            "int",
            "bigint",
            "smallint",
            "tinyint",
            "hugeint",
            "uhugeint",
            "ubigint",
            "utinyint",
            "boolean",
            "date",
            "time(3)",
            "timetz",
            "timestamp",
            "timestamp(3) with time zone",
            "timestamptz",
            "interval",
            "uuid",
            "json",
            "jsonb",
            "bytea",
            "blob",
            "integer[]",
            "_text",
            "integer[3]",
            "STRUCT(a INTEGER, \"B c\" VARCHAR)",
            "MAP(VARCHAR, DOUBLE)",
            "UNION(n INTEGER, s VARCHAR)",
            "ENUM('a', 'b')",
            "geometry",
            "public.mood",
            "\"Odd Schema\".\"My Type\"",
            "\"Weird Type\"[]",
        ];
        for engine in [Engine::Postgres, Engine::DuckDb] {
            for text in samples {
                let ty = parse(text, engine).unwrap();
                let canonical = ty.to_string();
                let again = parse(&canonical, engine).unwrap();
                assert!(
                    equivalent(&again, &ty, engine),
                    "{text} -> {canonical} on {engine}"
                );
                assert!(
                    equivalent(&ty, &again, engine),
                    "{text} -> {canonical} on {engine}"
                );
                assert_eq!(
                    again.to_string(),
                    canonical,
                    "{text} is not canonical on {engine}"
                );
            }
        }
    }
}
