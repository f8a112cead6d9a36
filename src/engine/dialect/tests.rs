//! The shortcut dialects against sqlparser's own: for every text, the same statements, spans
//! included, or the same error.

use proptest::prelude::*;
use sqlparser::dialect::{Dialect, DuckDbDialect, PostgreSqlDialect};
use sqlparser::parser::Parser;

use crate::engine::Engine;

const ENGINES: [Engine; 2] = [Engine::Postgres, Engine::DuckDb];

fn sqlparser_dialect(engine: Engine) -> Box<dyn Dialect> {
    match engine {
        Engine::Postgres => Box::new(PostgreSqlDialect {}),
        Engine::DuckDb => Box::new(DuckDbDialect {}),
    }
}

/// Statements or error, with every span, as `dialect` parses `sql`.
fn parsed(dialect: &dyn Dialect, sql: &str) -> String {
    format!("{:?}", Parser::parse_sql(dialect, sql))
}

fn agrees(sql: &str) -> Result<(), TestCaseError> {
    for engine in ENGINES {
        let fast = parsed(engine.dialect().as_ref(), sql);
        let slow = parsed(sqlparser_dialect(engine).as_ref(), sql);
        prop_assert_eq!(fast, slow, "{:?} on {:?}", sql, engine);
    }
    Ok(())
}

#[test]
fn the_dialects_keep_sqlparsers_type_ids() {
    assert!(Engine::Postgres.dialect().is::<PostgreSqlDialect>());
    assert!(Engine::DuckDb.dialect().is::<DuckDbDialect>());
}

#[test]
fn shortcut_and_declined_cases_parse_as_sqlparser_parses_them() {
    for sql in [
        "SELECT CAST(s.c00 AS INTEGER) AS c00, CAST(s.c03 AS TEXT[]) AS c03 FROM src AS s",
        "SELECT a, s.b, t.\"Q\", \"x\" FROM t WHERE a = 1 AND s.b IS NULL ORDER BY a DESC",
        "SELECT CASE WHEN a THEN b ELSE c END, a || b, a::int, a + b * c / d % e FROM t",
        "SELECT xml, \"xml\", xml 'x', s.xml FROM t",
        "SELECT foo 'x', a.b 'x', a.b.c, a[1], a.b[1], a ARRAY, f(a), s.f(a) FROM t",
        "SELECT date, s.date, interval, value, status FROM t",
        "SELECT x -> x + 1, a b -> b, list_transform(l, x -> x) FROM t",
        "SELECT CAST() , CAST(a), CAST(a AS), cast(1, 2), CAST (a AS INT), CAST/*c*/(a AS INT) FROM t",
        "SELECT CAST(a AS b.c), CAST(a AS VARCHAR(40)), CAST(a AS DOUBLE PRECISION) FROM t",
        "SELECT CAST((foo 'x') AS INTEGER) FROM t",
        "SELECT CAST(a.b[1] 'x' AS INT), CAST(a AS INT INT), CAST(a AS INT, CAST(a AS) FROM t",
        "SELECT a[1] 'x', a.b[] 'x', a ARRAY 'x', a.b ARRAY[2] 'x' FROM t",
        "SELECT a FROM t UNION SELECT b FROM u",
        "SELECT a.",
        "SELECT a.1 FROM t",
        "SELECT a -- trailing",
        "SELECT a; SELECT b;",
        "SELECT CAST(a AS FROM ) ARRAY 'x'",
        "SELECT CAST(a AS INT) 'x', CAST(a AS b) ARRAY 'x', CAST(s.c AS INT)[1] 'x' FROM t",
        "SELECT CAST(a AS INT) ARRAY, CAST(a AS INT) [1], CAST(a AS 1) 'x' FROM t",
    ] {
        agrees(sql).unwrap();
    }
}

/// Every keyword as a name, after one, inside a dotted chain and as a cast's type, each in a
/// statement of its own (one error would hide the rest): the shortcuts' lookahead sees keywords.
#[test]
fn every_keyword_beside_a_name_parses_alike() {
    for keyword in sqlparser::keywords::ALL_KEYWORDS {
        for sql in [
            format!("SELECT {keyword} FROM t"),
            format!("SELECT x, {keyword} FROM t"),
            format!("SELECT {keyword}.a FROM t"),
            format!("SELECT a {keyword} FROM t"),
            format!("SELECT s.{keyword} FROM t"),
            format!("SELECT a FROM t WHERE a = {keyword}"),
            format!("SELECT CAST({keyword} AS INT) FROM t"),
            format!("SELECT CAST(s.{keyword} AS INT) FROM t"),
            format!("SELECT CAST(a AS {keyword}) FROM t"),
            format!("SELECT a {keyword} -> 1, {keyword} -> 1 FROM t"),
        ] {
            agrees(&sql).unwrap();
        }
    }
}

#[test]
fn deeply_nested_failing_casts_end_and_agree() {
    // A failed shortcut is retried by sqlparser's own path; were the shortcut to parse nested
    // prefixes itself, the retries would compound and this would not end.
    for depth in [10, 20, 24] {
        agrees(&format!("SELECT {}a", "CAST(".repeat(depth))).unwrap();
        agrees(&format!("SELECT {}a AS", "CAST((".repeat(depth))).unwrap();
        agrees(&format!("SELECT {}x", "CAST(a.b ".repeat(depth))).unwrap();
        agrees(&format!("SELECT {}", "CAST(a.b AS INT".repeat(depth))).unwrap();
    }
}

#[test]
fn every_sql_file_in_the_repository_parses_alike() {
    let files = crate::repository_files::with_extension("sql");
    for path in &files {
        agrees(&std::fs::read_to_string(path).unwrap()).unwrap();
    }
    assert!(files.len() > 100, "only {} SQL files found", files.len());
}

const NAMES: &[&str] = &[
    "a", "s.c00", "t.\"Q\"", "\"x\"", "date", "xml", "interval", "s.date", "value", "_x", "a.b.c",
    "cast", "array", "x",
];
const LITERALS: &[&str] = &[
    "1",
    "'x'",
    "DATE '2020-01-01'",
    "foo 'x'",
    "a.b 'x'",
    "NULL",
    "TRUE",
    "E'x'",
    "1.5",
    "a[1] 'x'",
    "a.b[] 'x'",
    "a ARRAY 'x'",
    "xml 'x'",
];
const TYPES: &[&str] = &[
    "INTEGER",
    "TEXT[]",
    "VARCHAR(40)",
    "NUMERIC(12,2)",
    "bench_status",
    "DOUBLE PRECISION",
    "TIMESTAMP WITH TIME ZONE",
    "a.b",
    "INT ARRAY",
];
const OPS: &[&str] = &[
    "=", "<", ">=", "<>", "+", "-", "*", "/", "%", "||", "AND", "OR", "IS", "->", ".", "::", "",
];
/// Pieces for text that is mostly not SQL, to exercise the failure paths.
const PIECES: &[&str] = &[
    "CAST",
    "(",
    ")",
    "a",
    "s",
    ".",
    "c",
    "AS",
    "INT",
    ",",
    "'x'",
    "[",
    "]",
    "1",
    "->",
    "::",
    "FROM",
    "t",
    "xml",
    "date",
    "ARRAY",
    "CASE",
    "WHEN",
    "THEN",
    "END",
    "=",
    "*",
    "CAST(a AS",
    "CAST(s.c AS",
    "foo 'x'",
];

fn pick(options: &'static [&'static str]) -> impl Strategy<Value = String> {
    proptest::sample::select(options).prop_map(str::to_owned)
}

fn expr() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![pick(NAMES), pick(LITERALS)];
    leaf.prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            (inner.clone(), pick(TYPES)).prop_map(|(e, t)| format!("CAST({e} AS {t})")),
            (inner.clone(), pick(TYPES)).prop_map(|(e, t)| format!("{e}::{t}")),
            (inner.clone(), pick(OPS), inner.clone()).prop_map(|(a, o, b)| format!("{a} {o} {b}")),
            (pick(NAMES), inner.clone()).prop_map(|(f, e)| format!("{f}({e})")),
            inner.clone().prop_map(|e| format!("({e})")),
            inner.clone().prop_map(|e| format!("{e}[1]")),
            inner.clone().prop_map(|e| format!("x -> {e}")),
            (inner.clone(), inner.clone(), inner)
                .prop_map(|(a, b, c)| format!("CASE WHEN {a} THEN {b} ELSE {c} END")),
        ]
    })
}

fn query() -> impl Strategy<Value = String> {
    (expr(), expr(), expr(), any::<bool>()).prop_map(|(a, b, w, order)| {
        let tail = if order { " ORDER BY a DESC" } else { "" };
        format!("SELECT {a} AS x, {b} FROM t AS s WHERE {w}{tail}")
    })
}

fn soup() -> impl Strategy<Value = String> {
    proptest::collection::vec(pick(PIECES), 1..30)
        .prop_map(|pieces| format!("SELECT {}", pieces.join(" ")))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn generated_queries_parse_alike(sql in query()) {
        agrees(&sql)?;
    }

    #[test]
    fn generated_token_soup_parses_alike(sql in soup()) {
        agrees(&sql)?;
    }
}
