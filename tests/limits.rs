//! Inputs at and past the sizes a real project reaches: a 10 MB SQL file, a 1,000-column
//! relation, deeply nested SQL, TOML and types, thousands of files. Each gives a result or a
//! clear, located error; never a crash, a stack overflow or a hang. The time bound on each run
//! is a hang detector, not a performance check (scripts/bench measures speed).

mod common;

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use common::{duckdb_file, run, sqb, transcript, write_files};

const HANG: Duration = Duration::from_secs(300);

const DUCK_HEADER: &str = "name = \"limits\"\ndefault_target = \"prod\"\n\n[connection]\nengine = \"duckdb\"\npath = \"w.duckdb\"\n\n[targets.prod]\nschema = \"main\"\n";

fn sqb_in(root: &Path, args: &[&str]) -> Output {
    let start = Instant::now();
    let out = run(sqb().arg("--project-dir").arg(root).args(args));
    assert!(
        start.elapsed() < HANG,
        "sqb {args:?} took {:?}",
        start.elapsed()
    );
    out
}

fn no_crash(out: &Output, root: &Path) -> String {
    let text = transcript(out, root);
    assert!(
        matches!(out.status.code(), Some(0..=2)),
        "crashed: {:?}\n{text}",
        out.status
    );
    assert!(!text.contains("panicked"), "{text}");
    assert!(!text.contains("stack overflow"), "{text}");
    text
}

#[test]
fn a_ten_megabyte_sql_file_compiles() {
    let tmp = tempfile::tempdir().unwrap();
    // A model filtering on a 10 MB IN list, the shape of a generated allow-list.
    let mut sql = String::from("SELECT id, name\nFROM raw.accounts\nWHERE id IN (");
    let mut i = 0u64;
    while sql.len() < 10 * 1024 * 1024 {
        if i > 0 {
            sql.push_str(", ");
        }
        sql.push_str(&(1_000_000 + i).to_string());
        i += 1;
    }
    sql.push_str(")\n");
    write_files(
        tmp.path(),
        &[
            ("sqb.toml", DUCK_HEADER),
            ("models/allowed.sql", &sql),
            (
                "models/allowed.toml",
                "[columns.id]\ntype = \"BIGINT\"\n\n[columns.name]\ntype = \"TEXT\"\n",
            ),
        ],
    );
    let out = sqb_in(tmp.path(), &["compile"]);
    let text = no_crash(&out, tmp.path());
    assert_eq!(out.status.code(), Some(0), "{text}");
    // And an error at its very end is located there.
    let broken = format!("{})", sql.trim_end());
    std::fs::write(tmp.path().join("models/allowed.sql"), &broken).unwrap();
    let out = sqb_in(tmp.path(), &["compile"]);
    let text = no_crash(&out, tmp.path());
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("models/allowed.sql:3:"), "{text}");
}

fn wide_columns(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("col_{i:04}")).collect()
}

#[test]
fn a_thousand_column_relation_round_trips() {
    let tmp = tempfile::tempdir().unwrap();
    let cols = wide_columns(1000);
    let ddl = format!(
        "CREATE TABLE wide ({});",
        cols.iter()
            .enumerate()
            .map(|(i, c)| format!(
                "{c} {}",
                if i % 2 == 0 {
                    "INTEGER NOT NULL"
                } else {
                    "VARCHAR"
                }
            ))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let sql = format!("SELECT {}\nFROM raw.wide\n", cols.join(",\n    "));
    write_files(
        tmp.path(),
        &[("sqb.toml", DUCK_HEADER), ("models/wide.sql", &sql)],
    );
    duckdb_file(&tmp.path().join("w.duckdb"), &ddl);
    // No declarations: generate writes all 1,000, then diff agrees.
    let out = sqb_in(
        tmp.path(),
        &["contract", "generate", "--from", "prod", "--write"],
    );
    let text = no_crash(&out, tmp.path());
    assert_eq!(out.status.code(), Some(0), "{text}");
    let sidecar = std::fs::read_to_string(tmp.path().join("models/wide.toml")).unwrap();
    assert_eq!(sidecar.matches("[columns.").count(), 1000);
    let out = sqb_in(
        tmp.path(),
        &["contract", "diff", "--from", "prod", "--json"],
    );
    let text = no_crash(&out, tmp.path());
    assert_eq!(out.status.code(), Some(0), "{text}");
    // One declaration drifts: exactly one finding among the 1,000 columns.
    std::fs::write(
        tmp.path().join("models/wide.toml"),
        sidecar.replacen("type = \"INTEGER\"", "type = \"BIGINT\"", 1),
    )
    .unwrap();
    let out = sqb_in(
        tmp.path(),
        &["contract", "diff", "--from", "prod", "--json"],
    );
    let text = no_crash(&out, tmp.path());
    assert_eq!(out.status.code(), Some(1), "{text}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let findings = report["resources"][0]["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{text}");
}

fn compile_case(sql: &str, sidecar: &str) -> (Output, String) {
    let tmp = tempfile::tempdir().unwrap();
    write_files(
        tmp.path(),
        &[
            ("sqb.toml", DUCK_HEADER),
            ("models/deep.sql", sql),
            ("models/deep.toml", sidecar),
        ],
    );
    let out = sqb_in(tmp.path(), &["compile"]);
    let text = no_crash(&out, tmp.path());
    (out, text)
}

#[test]
fn deeply_nested_sql_is_a_clear_error_not_a_stack_overflow() {
    let parens = format!("SELECT {}1{} AS x\n", "(".repeat(5000), ")".repeat(5000));
    let subqueries = format!(
        "SELECT x FROM {}(SELECT 1 AS x){}\n",
        "(SELECT x FROM ".repeat(500),
        " AS t)".repeat(500)
    );
    let cases = format!(
        "SELECT {}1{} AS x\n",
        "CASE WHEN true THEN ".repeat(2000),
        " END".repeat(2000)
    );
    for (what, sql) in [
        ("parentheses", parens),
        ("subqueries", subqueries),
        ("CASE", cases),
    ] {
        let (out, text) = compile_case(&sql, "[columns.x]\ntype = \"INTEGER\"\n");
        assert_eq!(out.status.code(), Some(1), "{what}: {text}");
        assert!(text.contains("models/deep.sql"), "{what}: {text}");
        // sqlparser stops at its recursion limit; for CASE it reports the token where it
        // stopped rather than the limit. Either way: a located syntax error, no overflow.
        assert!(text.contains("error[E056]"), "{what}: {text}");
        if what != "CASE" {
            assert!(text.contains("nested too deeply"), "{what}: {text}");
        }
    }
    // Nesting within the limit still analyses.
    let fine = format!("SELECT {}1{} AS x\n", "(".repeat(20), ")".repeat(20));
    let (out, text) = compile_case(&fine, "[columns.x]\ntype = \"INTEGER\"\n");
    assert_eq!(out.status.code(), Some(0), "{text}");
}

#[test]
fn deeply_nested_toml_and_types_are_clear_errors() {
    let array = format!("tags = {}\"a\"{}\n", "[".repeat(10_000), "]".repeat(10_000));
    let (out, text) = compile_case("SELECT 1 AS x\n", &array);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("models/deep.toml:1:"), "{text}");
    let table = format!(
        "meta = {}1{}\n",
        "{ a = ".repeat(10_000),
        " }".repeat(10_000)
    );
    let (out, text) = compile_case("SELECT 1 AS x\n", &table);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let ty = format!(
        "[columns.x]\ntype = \"{}INTEGER{}\"\n",
        "STRUCT(a ".repeat(5000),
        ")".repeat(5000)
    );
    let (out, text) = compile_case("SELECT 1 AS x\n", &ty);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("models/deep.toml:2:"), "{text}");
}

#[test]
fn thousands_of_files_load() {
    let tmp = tempfile::tempdir().unwrap();
    let mut files: Vec<(String, String)> = vec![("sqb.toml".into(), DUCK_HEADER.into())];
    for i in 0..2500 {
        let dir = format!("models/area_{:02}", i % 50);
        files.push((
            format!("{dir}/m_{i:05}.sql"),
            format!("SELECT {i} AS id, 'x' AS label\n"),
        ));
        files.push((
            format!("{dir}/m_{i:05}.toml"),
            "[columns.id]\ntype = \"INTEGER\"\nnullable = false\n\n[columns.label]\ntype = \"VARCHAR\"\n"
                .into(),
        ));
    }
    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    write_files(tmp.path(), &borrowed);
    let out = sqb_in(tmp.path(), &["compile"]);
    let text = no_crash(&out, tmp.path());
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("compiled 2500 models"), "{text}");
}
