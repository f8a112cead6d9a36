//! `sqb contract check` against real DuckDB files and a real PostgreSQL server: each model of
//! testdata/check described by the engine without running it, compared with its contract;
//! which columns only the warehouse proves; a model whose SQL the engine rejects, at its line;
//! and what cannot run failing closed.

mod common;

use std::path::Path;

use common::*;

fn check(root: &Path, url: Option<&str>, args: &[&str]) -> std::process::Output {
    check_with(sqb(), root, url, args)
}

fn check_with(
    mut cmd: std::process::Command,
    root: &Path,
    url: Option<&str>,
    args: &[&str],
) -> std::process::Output {
    cmd.arg("--project-dir")
        .arg(root)
        .args(["contract", "check"])
        .args(args);
    if let Some(url) = url {
        cmd.env("SQB_DATABASE_URL", url);
    }
    run(&mut cmd)
}

fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// What every engine must say of testdata/check: the findings by model, and each model's proof.
fn assert_report(report: &serde_json::Value) {
    let resource = |name: &str| {
        report["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["resource_name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {report:#}"))
            .clone()
    };
    let kinds = |name: &str| -> Vec<(String, String)> {
        resource(name)["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["severity"] != "info")
            .map(|f| {
                (
                    f["kind"].as_str().unwrap().to_string(),
                    f["column"].as_str().unwrap_or("-").to_string(),
                )
            })
            .collect()
    };
    let pair = |k: &str, c: &str| vec![(k.to_string(), c.to_string())];
    for agreeing in ["order_totals", "casted", "staged", "never_run"] {
        assert_eq!(kinds(agreeing), vec![], "{agreeing}: {report:#}");
        assert_eq!(resource(agreeing)["status"], "agrees");
    }
    assert_eq!(kinds("customer_emails"), pair("type_mismatch", "email"));
    assert_eq!(kinds("reads_unbuilt"), pair("sql_rejected", "-"));
    let rejected = &resource("reads_unbuilt")["findings"][0];
    assert_eq!(rejected["location"]["file"], "models/reads_unbuilt.sql");
    assert_eq!(rejected["location"]["line"], 3, "{rejected:#}");
    assert!(resource("reads_unbuilt").get("proof").is_none());
    let proof = resource("customer_emails")["proof"].clone();
    assert_eq!(
        proof["offline"],
        serde_json::json!(["customer_id", "total"])
    );
    assert_eq!(proof["warehouse_only"], serde_json::json!(["email"]));
    // sqb's own analysis and the engines never disagree on this project.
    assert_eq!(report["summary"]["by_kind"]["analysis_disagreement"], 0);
    for r in report["resources"].as_array().unwrap() {
        if let Some(p) = r.get("proof") {
            assert_eq!(p["disagreeing"], serde_json::json!([]), "{r:#}");
        }
    }
}

#[test]
fn every_model_is_described_and_checked_on_duckdb() {
    let case = repo().join("testdata/check");
    let tmp = tempfile::tempdir().unwrap();
    case_project(&case, "duckdb", tmp.path());
    let db = tmp.path().join("w.duckdb");
    duckdb_file(&db, &case_warehouse(&case, "duckdb").unwrap());
    // The oracle that `never_run` cannot run: had the check run it, it would have failed.
    let conn = duckdb::Connection::open(&db).unwrap();
    let sql = std::fs::read_to_string(case.join("models/never_run.sql")).unwrap();
    assert!(conn
        .prepare(&sql)
        .and_then(|mut s| s.query([])?.next().map(|_| ()))
        .is_err());
    drop(conn);
    let text = check(tmp.path(), None, &[]);
    insta::assert_snapshot!(
        "duckdb_text",
        expect_exit(&text, 1, "contract check", tmp.path())
    );
    let out = check(tmp.path(), None, &["--json"]);
    assert_eq!(out.status.code(), Some(1));
    assert_report(&json(&out));
    // A selection of agreeing models passes.
    let ok = check(tmp.path(), None, &["-s", "order_totals", "-s", "never_run"]);
    expect_exit(
        &ok,
        0,
        "contract check -s order_totals -s never_run",
        tmp.path(),
    );
}

#[test]
fn every_model_is_described_and_checked_on_postgres() {
    let Some(db) = TestDb::create("contract_check") else {
        return;
    };
    let case = repo().join("testdata/check");
    pg_exec(&db.url, &case_warehouse(&case, "postgres").unwrap());
    let tmp = tempfile::tempdir().unwrap();
    case_project(&case, "postgres", tmp.path());
    let text = check(tmp.path(), Some(&db.url), &[]);
    let shown = expect_exit(&text, 1, "contract check", tmp.path()).replace(&db.name, "[DB]");
    insta::assert_snapshot!("postgres_text", shown);
    // Postgres points at the reference itself.
    assert!(shown.contains("models/reads_unbuilt.sql:3:6:"), "{shown}");
    let out = check(tmp.path(), Some(&db.url), &["--json", "--connections", "3"]);
    assert_eq!(out.status.code(), Some(1));
    assert_report(&json(&out));
    // The session is read-only and nothing ran: the table `never_run` reads is as it was.
    assert_eq!(
        pg_strings(&db.url, "SELECT count(*)::text FROM shop.orders"),
        ["1"]
    );
}

/// A check that cannot run is an error (exit 2), never a pass: an unreachable server, a
/// missing DuckDB file, a selection without a model, an unknown target.
#[test]
fn a_check_that_cannot_run_fails_closed() {
    let case = repo().join("testdata/check");
    let tmp = tempfile::tempdir().unwrap();
    case_project(&case, "duckdb", tmp.path());
    let missing = check(tmp.path(), None, &[]);
    let missing = expect_exit(&missing, 2, "contract check", tmp.path());
    duckdb_file(
        &tmp.path().join("w.duckdb"),
        &case_warehouse(&case, "duckdb").unwrap(),
    );
    let sources = check(tmp.path(), None, &["-s", "source:orders"]);
    let sources = expect_exit(&sources, 2, "contract check -s source:orders", tmp.path());
    let target = check(tmp.path(), None, &["--from", "staging"]);
    let target = expect_exit(&target, 2, "contract check --from staging", tmp.path());
    let pg = tempfile::tempdir().unwrap();
    case_project(&case, "postgres", pg.path());
    let (url, port) = unreachable_postgres_url();
    let unreachable = check(pg.path(), Some(&url), &["--connect-timeout", "2"]);
    let unreachable = expect_exit(&unreachable, 2, "contract check", pg.path());
    assert!(!unreachable.contains("secret-pw"), "{unreachable}");
    insta::assert_snapshot!(
        "cannot_run",
        [
            missing,
            sources,
            target,
            unreachable.replace(&port.to_string(), "[PORT]")
        ]
        .join("\n")
    );
}

/// sqb's offline analysis and the engine never disagree on TPC-H's 22 queries (testdata/tpch)
/// or on TPC-DS's (testdata/tpcds): a disagreement would be a defect of sqb's analysis. How
/// much the analysis proves by itself is pinned too, so that it does not quietly shrink.
fn agrees(out: &std::process::Output, root: &Path, models: usize, proved_offline: usize) {
    let report = json(out);
    assert_eq!(out.status.code(), Some(0), "{}", transcript(out, root));
    assert_eq!(report["summary"]["resources"], models);
    assert_eq!(
        report["summary"]["by_kind"]["analysis_disagreement"], 0,
        "{report:#}"
    );
    let mut offline = 0;
    for r in report["resources"].as_array().unwrap() {
        assert_eq!(r["proof"]["disagreeing"], serde_json::json!([]), "{r:#}");
        offline += r["proof"]["offline"].as_array().unwrap().len();
    }
    assert_eq!(offline, proved_offline, "{report:#}");
}

#[test]
fn the_analysis_agrees_with_duckdb_on_tpch() {
    let case = repo().join("testdata/tpch");
    let tmp = tempfile::tempdir().unwrap();
    case_project(&case, "duckdb", tmp.path());
    duckdb_file(
        &tmp.path().join("w.duckdb"),
        &case_warehouse(&case, "duckdb").unwrap(),
    );
    let out = check(tmp.path(), None, &["--json"]);
    agrees(&out, tmp.path(), 22, 61);
    // With the cache on, a second check reuses the analyses the first one left in it (and
    // parses no model to rewrite it), and says exactly what a check without any cache says.
    let cached = || {
        let mut cmd = sqb();
        cmd.env_remove("SQB_NO_CACHE");
        cmd
    };
    let first = check_with(cached(), tmp.path(), None, &["--json"]);
    let warm = check_with(cached(), tmp.path(), None, &["-v", "--json"]);
    let log = String::from_utf8_lossy(&warm.stderr);
    let reused: usize = log
        .split("reused=")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no reuse logged: {log}"));
    assert_eq!(reused, 22, "{log}");
    let cold = check(tmp.path(), None, &["--no-cache", "--json"]);
    assert_eq!(json(&first), json(&out));
    assert_eq!(json(&warm), json(&out));
    assert_eq!(json(&cold), json(&out));
}

#[test]
fn the_analysis_agrees_with_postgres_on_tpch() {
    let Some(db) = TestDb::create("check_tpch") else {
        return;
    };
    let case = repo().join("testdata/tpch");
    pg_exec(&db.url, &case_warehouse(&case, "postgres").unwrap());
    let tmp = tempfile::tempdir().unwrap();
    case_project(&case, "postgres", tmp.path());
    let out = check(tmp.path(), Some(&db.url), &["--json"]);
    agrees(&out, tmp.path(), 22, 71);
}

#[test]
fn the_analysis_agrees_with_duckdb_on_tpcds() {
    let case = repo().join("testdata/tpcds");
    let tmp = tempfile::tempdir().unwrap();
    case_project(&case, "duckdb", tmp.path());
    duckdb_file(
        &tmp.path().join("w.duckdb"),
        &case_warehouse(&case, "duckdb").unwrap(),
    );
    let out = check(tmp.path(), None, &["--json"]);
    agrees(&out, tmp.path(), TPCDS_MODELS, 284);
}

#[test]
fn the_analysis_agrees_with_postgres_on_tpcds() {
    let Some(db) = TestDb::create("check_tpcds") else {
        return;
    };
    let case = repo().join("testdata/tpcds");
    pg_exec(&db.url, &case_warehouse(&case, "postgres").unwrap());
    let tmp = tempfile::tempdir().unwrap();
    case_project(&case, "postgres", tmp.path());
    let out = check(tmp.path(), Some(&db.url), &["--json"]);
    agrees(&out, tmp.path(), TPCDS_MODELS, 289);
}

/// The TPC-DS queries of testdata/tpcds/models.
const TPCDS_MODELS: usize = 63;

/// The disagreement check is not vacuous: a source declared other than the warehouse holds
/// makes sqb's analysis prove a type the engine contradicts, and the check says so.
#[test]
fn a_disagreement_between_the_analysis_and_the_engine_is_reported() {
    let case = repo().join("testdata/check");
    let tmp = tempfile::tempdir().unwrap();
    case_project(&case, "duckdb", tmp.path());
    let sql = case_warehouse(&case, "duckdb")
        .unwrap()
        .replace("shop.customers (id INTEGER", "shop.customers (id BIGINT");
    duckdb_file(&tmp.path().join("w.duckdb"), &sql);
    let out = check(tmp.path(), None, &["--json", "-s", "customer_emails"]);
    assert_eq!(out.status.code(), Some(1));
    let report = json(&out);
    let findings = report["resources"][0]["findings"].as_array().unwrap();
    let disagreement = findings
        .iter()
        .find(|f| f["kind"] == "analysis_disagreement")
        .unwrap_or_else(|| panic!("{report:#}"));
    assert_eq!(disagreement["column"], "customer_id");
    assert_eq!(disagreement["declared_type"], "INTEGER");
    assert_eq!(disagreement["physical_type"], "BIGINT");
    assert_eq!(
        report["resources"][0]["proof"]["disagreeing"],
        serde_json::json!(["customer_id"])
    );
}
