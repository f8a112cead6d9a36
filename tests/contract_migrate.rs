//! `sqb contract migrate` against real DuckDB files and a real PostgreSQL server: the migration
//! of testdata/migrate is written, applied by the engine itself, and afterwards `contract diff`
//! reports exactly the drift the migration refused; nothing is ever run by sqb.

mod common;

use std::path::Path;

use common::*;

fn sqb_in(root: &Path, url: Option<&str>, args: &[&str]) -> std::process::Output {
    let mut cmd = sqb();
    cmd.arg("--project-dir").arg(root).args(args);
    if let Some(url) = url {
        cmd.env("SQB_DATABASE_URL", url);
    }
    run(&mut cmd)
}

/// The findings `contract diff` still reports, as (resource, kind, column), errors only.
fn drift(root: &Path, url: Option<&str>) -> Vec<(String, String, String)> {
    let out = sqb_in(root, url, &["contract", "diff", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", transcript(&out, root)));
    let mut found = Vec::new();
    for r in report["resources"].as_array().unwrap() {
        for f in r["findings"].as_array().unwrap() {
            if f["severity"] != "info" {
                found.push((
                    r["resource_name"].as_str().unwrap().to_string(),
                    f["kind"].as_str().unwrap().to_string(),
                    f["column"].as_str().unwrap_or("-").to_string(),
                ));
            }
        }
    }
    found.sort();
    found
}

/// What no statement may resolve: a view's column, a column a view outside the project reads,
/// a change of meaning, a narrowing and a NOT NULL the data contradicts.
fn refused() -> Vec<(String, String, String)> {
    let mut r: Vec<(String, String, String)> = [
        ("order_summary", "type_mismatch", "id"),
        ("orders", "nullability_mismatch", "email"),
        ("orders", "type_mismatch", "big"),
        ("orders", "type_mismatch", "customer_id"),
        ("orders", "type_mismatch", "placed_at"),
    ]
    .iter()
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    .collect();
    r.sort();
    r
}

/// Writes the migration, checks that sqb changed nothing, applies it with `apply`, and checks
/// what is left; then a second migration has nothing more to do. Returns the first migration.
fn round_trip(root: &Path, url: Option<&str>, apply: &dyn Fn(&str)) -> String {
    let before = drift(root, url);
    let out = sqb_in(root, url, &["contract", "migrate", "--allow-drop"]);
    assert_eq!(out.status.code(), Some(1), "{}", transcript(&out, root));
    let sql = String::from_utf8(out.stdout).unwrap();
    // Writing a migration runs none of it.
    assert_eq!(drift(root, url), before);
    apply(&sql);
    assert_eq!(drift(root, url), refused());
    let again = sqb_in(root, url, &["contract", "migrate", "--allow-drop"]);
    assert_eq!(again.status.code(), Some(1), "{}", transcript(&again, root));
    let again = String::from_utf8(again.stdout).unwrap();
    assert!(again.contains(": 0 statements for"), "{again}");
    sql
}

#[test]
fn a_migration_applied_by_duckdb_leaves_only_what_it_refused() {
    let case = repo().join("testdata/migrate");
    let tmp = tempfile::tempdir().unwrap();
    case_project(&case, "duckdb", tmp.path());
    let db = tmp.path().join("w.duckdb");
    duckdb_file(&db, &case_warehouse(&case, "duckdb").unwrap());
    let sql = round_trip(tmp.path(), None, &|sql| duckdb_file(&db, sql));
    insta::assert_snapshot!("duckdb", sql);
}

#[test]
fn a_migration_applied_by_postgres_leaves_only_what_it_refused() {
    let Some(db) = TestDb::create("migrate") else {
        return;
    };
    let case = repo().join("testdata/migrate");
    pg_exec(&db.url, &case_warehouse(&case, "postgres").unwrap());
    let tmp = tempfile::tempdir().unwrap();
    case_project(&case, "postgres", tmp.path());
    let sql = round_trip(tmp.path(), Some(&db.url), &|sql| pg_exec(&db.url, sql));
    insta::assert_snapshot!("postgres", sql);
}

/// A project whose tables agree has nothing to migrate, and says so with exit 0; a server that
/// does not answer fails closed, and its password is nowhere in what is printed.
#[test]
fn nothing_to_migrate_exits_0_and_an_unreachable_server_2() {
    let case = repo().join("testdata/migrate");
    let tmp = tempfile::tempdir().unwrap();
    case_project(&case, "duckdb", tmp.path());
    duckdb_file(
        &tmp.path().join("w.duckdb"),
        &case_warehouse(&case, "duckdb").unwrap(),
    );
    let none = sqb_in(
        tmp.path(),
        None,
        &["contract", "migrate", "-s", "source:orders_raw"],
    );
    assert_eq!(
        none.status.code(),
        Some(0),
        "{}",
        transcript(&none, tmp.path())
    );
    assert!(String::from_utf8_lossy(&none.stdout).contains(": 0 statements for 1 relation"));

    let pg = tempfile::tempdir().unwrap();
    case_project(&case, "postgres", pg.path());
    let (url, _) = unreachable_postgres_url();
    let out = sqb_in(
        pg.path(),
        Some(&url),
        &["contract", "migrate", "--connect-timeout", "2"],
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        transcript(&out, pg.path())
    );
    let text = transcript(&out, pg.path());
    assert!(!text.contains("secret-pw"), "{text}");
    assert!(out.stdout.is_empty(), "{text}");
}
