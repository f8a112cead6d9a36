//! `sqb audit` against real DuckDB files and a real PostgreSQL server: every audit kind of
//! testdata/audit passing and failing, each failing count equal to what dbt's own test query
//! counts on the same warehouse (run here, independently), samples with `pii` redacted, exit
//! statuses, and a relation that cannot be read failing closed.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::*;

/// Each audit of testdata/audit and the query dbt runs for it: the number of rows it returns
/// is dbt's failure count.
const ORACLES: &[(&str, &str, &str, &str)] = &[
    ("customers", "id", "unique", "SELECT id FROM shop.customers WHERE id IS NOT NULL GROUP BY id HAVING count(*) > 1"),
    ("customers", "id", "not_null", "SELECT id FROM shop.customers WHERE id IS NULL"),
    ("customers", "email", "unique", "SELECT email FROM shop.customers WHERE email IS NOT NULL GROUP BY email HAVING count(*) > 1"),
    ("customers", "email", "not_null", "SELECT email FROM (SELECT * FROM shop.customers WHERE active) AS t WHERE email IS NULL"),
    ("customers", "active", "accepted_values", "SELECT active FROM shop.customers GROUP BY active HAVING CAST(active AS VARCHAR(10)) NOT IN ('true', 'false')"),
    ("orders", "id", "unique", "SELECT id FROM shop.orders WHERE id IS NOT NULL GROUP BY id HAVING count(*) > 1"),
    ("orders", "customer_id", "relationships", "SELECT c.customer_id FROM shop.orders AS c LEFT JOIN shop.customers AS p ON c.customer_id = p.id WHERE c.customer_id IS NOT NULL AND p.id IS NULL"),
    ("orders", "status", "accepted_values", "SELECT status FROM shop.orders GROUP BY status HAVING status NOT IN ('placed', 'shipped')"),
    ("orders", "status", "accepted_values#2", "SELECT status FROM (SELECT * FROM shop.orders WHERE id > 2) AS t GROUP BY status HAVING status NOT IN ('placed', 'shipped', 'lost')"),
    ("orders", "amount", "accepted_range", "SELECT * FROM shop.orders WHERE NOT (amount >= 0 AND amount <= 1000)"),
    ("orders", "amount", "expression", "SELECT * FROM shop.orders WHERE NOT (amount < 900)"),
    ("orders", "amount", "expression#2", "SELECT * FROM shop.orders WHERE NOT (amount <> 13.5)"),
    ("orders", "status", "not_null", "SELECT * FROM shop.orders WHERE status IS NULL"),
    ("orders", "channel", "accepted_values", "SELECT channel FROM shop.orders GROUP BY channel HAVING channel NOT IN ('web', 'shop')"),
    ("orders", "channel", "not_constant", "SELECT count(DISTINCT channel) FROM shop.orders HAVING count(DISTINCT channel) = 1"),
    ("orders", "channel", "at_least_one", "SELECT count(channel) FROM shop.orders HAVING count(channel) = 0"),
    ("orders", "note", "at_least_one", "SELECT count(note) FROM shop.orders HAVING count(note) = 0"),
    ("orders", "note", "not_constant", "SELECT count(DISTINCT note) FROM shop.orders HAVING count(DISTINCT note) = 1"),
    ("orders", "", "unique_combination_of_columns", "SELECT customer_id, status FROM shop.orders GROUP BY customer_id, status HAVING count(*) > 1"),
    ("events", "happened_on", "accepted_range", "SELECT * FROM shop.events WHERE NOT (happened_on >= DATE '2020-01-01' AND happened_on <= DATE '2020-12-31')"),
    ("events", "", "recency", "SELECT max(happened_on) FROM shop.events HAVING max(happened_on) < {today} - 1"),
    ("events", "", "recency#2", "SELECT max(happened_on) FROM shop.events HAVING max(happened_on) < {today} - 7"),
    ("orders", "amount", "at_most", "SELECT * FROM (SELECT * FROM shop.orders WHERE status <> 'lost') AS t WHERE amount > 900"),
    ("orders", "", "outside", "SELECT id FROM shop.orders WHERE status NOT IN ('placed', 'shipped')"),
    ("order_amounts", "", "expression", "SELECT * FROM analytics.order_amounts WHERE NOT (amount <> 13.5)"),
    ("order_amounts", "order_id", "unique", "SELECT order_id FROM analytics.order_amounts WHERE order_id IS NOT NULL GROUP BY order_id HAVING count(*) > 1"),
    ("order_amounts", "order_id", "not_null", "SELECT order_id FROM analytics.order_amounts WHERE order_id IS NULL"),
    ("order_amounts", "customer_id", "relationships", "SELECT c.customer_id FROM analytics.order_amounts AS c LEFT JOIN shop.customers AS p ON c.customer_id = p.id WHERE c.customer_id IS NOT NULL AND p.id IS NULL"),
];

/// `transcript`, with the dates the warehouse SQL plants three and five days before today as
/// `[3 DAYS AGO]` and `[5 DAYS AGO]`.
fn dated(out: &std::process::Output, root: &Path) -> String {
    let today = chrono::Utc::now().date_naive();
    let ago = |n: u64| {
        (today - chrono::Days::new(n))
            .format("%Y-%m-%d")
            .to_string()
    };
    transcript(out, root)
        .replace(&ago(3), "[3 DAYS AGO]")
        .replace(&ago(5), "[5 DAYS AGO]")
}

fn audit(root: &Path, url: Option<&str>, args: &[&str]) -> std::process::Output {
    let mut cmd = sqb();
    cmd.arg("--project-dir").arg(root).arg("audit").args(args);
    if let Some(url) = url {
        cmd.env("SQB_DATABASE_URL", url);
    }
    run(&mut cmd)
}

/// Each result's failing count, keyed as ORACLES keys it (`audit#n` for the n-th audit of a
/// name on one column).
fn failing(out: &std::process::Output) -> BTreeMap<(String, String, String), u64> {
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    let mut seen: BTreeMap<(String, String, String), usize> = BTreeMap::new();
    let mut counts = BTreeMap::new();
    for r in report["results"].as_array().unwrap() {
        let key = (
            r["resource"].as_str().unwrap().to_string(),
            r["column"].as_str().unwrap_or_default().to_string(),
            r["audit"].as_str().unwrap().to_string(),
        );
        let n = seen.entry(key.clone()).or_default();
        *n += 1;
        let name = match *n {
            1 => key.2.clone(),
            n => format!("{}#{n}", key.2),
        };
        counts.insert(
            (key.0, key.1, name),
            r["failing"].as_u64().expect("a count"),
        );
    }
    counts
}

/// The oracles' counts; `today` is the engine's current date (DuckDB's `current_date` needs
/// the ICU extension, which the bundled build does not have).
fn expected(today: &str, count: impl Fn(&str) -> u64) -> BTreeMap<(String, String, String), u64> {
    ORACLES
        .iter()
        .map(|(r, c, a, sql)| {
            let key = (r.to_string(), c.to_string(), a.to_string());
            (key, count(&sql.replace("{today}", today)))
        })
        .collect()
}

#[test]
fn every_audit_counts_what_dbt_counts_on_duckdb() {
    let case = repo().join("testdata/audit");
    let tmp = tempfile::tempdir().unwrap();
    case_project(&case, "duckdb", tmp.path());
    let db = tmp.path().join("w.duckdb");
    duckdb_file(&db, &case_warehouse(&case, "duckdb").unwrap());
    let text = audit(tmp.path(), None, &[]);
    assert_eq!(
        text.status.code(),
        Some(1),
        "{}",
        transcript(&text, tmp.path())
    );
    insta::assert_snapshot!("duckdb_text", dated(&text, tmp.path()));
    let json = audit(tmp.path(), None, &["--format", "json"]);
    let got = failing(&json);
    let conn = duckdb::Connection::open(&db).unwrap();
    let want = expected("CAST(CAST(now() AS TIMESTAMP) AS DATE)", |sql| {
        let rows: i64 = conn
            .query_row(
                &format!("SELECT count(*) FROM ({sql}) AS dbt_test"),
                [],
                |r| r.get(0),
            )
            .unwrap_or_else(|e| panic!("{e}\n{sql}"));
        rows as u64
    });
    assert_eq!(got, want);
    // The planted defects are there: the oracle is not vacuous.
    assert!(want.values().filter(|n| **n > 0).count() >= 10, "{want:?}");
    // A writer's connection holds the file: sqb opens it read-only only once it is closed.
    drop(conn);
    for format in ["junit", "github", "markdown"] {
        let out = audit(tmp.path(), None, &["--format", format]);
        assert_eq!(out.status.code(), Some(1), "{format}");
        insta::assert_snapshot!(format!("duckdb_{format}"), dated(&out, tmp.path()));
    }
}

#[test]
fn every_audit_counts_what_dbt_counts_on_postgres() {
    let Some(db) = TestDb::create("audit_oracle") else {
        return;
    };
    let case = repo().join("testdata/audit");
    pg_exec(&db.url, &case_warehouse(&case, "postgres").unwrap());
    let tmp = tempfile::tempdir().unwrap();
    case_project(&case, "postgres", tmp.path());
    let json = audit(tmp.path(), Some(&db.url), &["--format", "json"]);
    assert_eq!(
        json.status.code(),
        Some(1),
        "{}",
        transcript(&json, tmp.path())
    );
    let got = failing(&json);
    let want = expected("current_date", |sql| {
        let sql = format!("SELECT CAST(count(*) AS text) FROM ({sql}) AS dbt_test");
        pg_strings(&db.url, &sql)[0].parse().unwrap()
    });
    assert_eq!(got, want);
    // Values of pii columns never leave the warehouse in a sample.
    let text = String::from_utf8(json.stdout).unwrap();
    assert!(!text.contains("@example.com"), "{text}");
    assert!(text.contains("<redacted>"), "{text}");
}

/// Each result's (resource, column, audit, severity) → status, in the order of the report.
fn statuses(out: &std::process::Output) -> Vec<(String, String)> {
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let key = format!(
                "{}.{} {} {}",
                r["resource"].as_str().unwrap(),
                r["column"].as_str().unwrap_or("-"),
                r["audit"].as_str().unwrap(),
                r["severity"].as_str().unwrap()
            );
            (key, format!("{} {}", r["status"], r["failing"]))
        })
        .collect()
}

/// A column the warehouse no longer has fails its own audits closed (exit 2), and every other
/// audit of the relation still answers what it answers when the column is there: the relation's
/// scan is split check by check, on both engines.
fn a_missing_column_fails_its_own_audits_only(root: &Path, url: Option<&str>, drop: &dyn Fn()) {
    let whole = audit(root, url, &["--format", "json"]);
    assert_eq!(whole.status.code(), Some(1), "{}", transcript(&whole, root));
    drop();
    let out = audit(root, url, &["--format", "json"]);
    assert_eq!(out.status.code(), Some(2), "{}", transcript(&out, root));
    let (before, after) = (statuses(&whole), statuses(&out));
    assert_eq!(before.len(), after.len());
    let mut not_run = Vec::new();
    for ((key, was), (same_key, now)) in before.iter().zip(&after) {
        assert_eq!(key, same_key);
        match key.starts_with("orders.note ") {
            true => not_run.push(now.clone()),
            false => assert_eq!(was, now, "{key}"),
        }
    }
    assert_eq!(not_run, ["\"error\" null", "\"error\" null"]);
    let text = audit(root, url, &["-s", "source:orders"]);
    let shown = transcript(&text, root);
    assert!(
        shown.contains("note         at_least_one                   could not run:"),
        "{shown}"
    );
    // One scan, one probe, one scan per check of the relation, and a sample per failed check.
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(json["summary"]["queries"].as_u64().unwrap() > before.len() as u64 / 2);
}

#[test]
fn a_missing_column_fails_its_own_audits_only_on_duckdb() {
    let case = repo().join("testdata/audit");
    let tmp = tempfile::tempdir().unwrap();
    case_project(&case, "duckdb", tmp.path());
    let db = tmp.path().join("w.duckdb");
    duckdb_file(&db, &case_warehouse(&case, "duckdb").unwrap());
    a_missing_column_fails_its_own_audits_only(tmp.path(), None, &|| {
        duckdb_file(&db, "ALTER TABLE shop.orders DROP COLUMN note;")
    });
}

#[test]
fn a_missing_column_fails_its_own_audits_only_on_postgres() {
    let Some(db) = TestDb::create("audit_split") else {
        return;
    };
    let case = repo().join("testdata/audit");
    pg_exec(&db.url, &case_warehouse(&case, "postgres").unwrap());
    let tmp = tempfile::tempdir().unwrap();
    case_project(&case, "postgres", tmp.path());
    a_missing_column_fails_its_own_audits_only(tmp.path(), Some(&db.url), &|| {
        pg_exec(&db.url, "ALTER TABLE shop.orders DROP COLUMN note;")
    });
}

/// A relation that is not there fails its audits closed (exit 2), and the others still run;
/// selected resources without audits are nothing to check (exit 2 too).
#[test]
fn what_cannot_run_never_passes() {
    let case = repo().join("testdata/audit");
    let tmp = tempfile::tempdir().unwrap();
    case_project(&case, "duckdb", tmp.path());
    let sql = case_warehouse(&case, "duckdb").unwrap().replace(
        "CREATE VIEW analytics.order_amounts",
        "CREATE VIEW analytics.other_name",
    );
    duckdb_file(&tmp.path().join("w.duckdb"), &sql);
    let out = audit(
        tmp.path(),
        None,
        &["-s", "order_amounts", "-s", "source:customers"],
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        transcript(&out, tmp.path())
    );
    insta::assert_snapshot!("relation_missing", transcript(&out, tmp.path()));
    std::fs::write(
        tmp.path().join("models/order_amounts.toml"),
        "[columns.order_id]\n",
    )
    .unwrap();
    let nothing = audit(tmp.path(), None, &["-s", "order_amounts"]);
    assert_eq!(nothing.status.code(), Some(2));
    insta::assert_snapshot!("nothing_to_check", transcript(&nothing, tmp.path()));
}

/// A `relationships` audit may point at an imported model (`import.model`): the relation its
/// vendored snapshot names, here the shop's `analytics.dim_customers` under examples/reports.
#[test]
fn a_relationship_to_an_imported_model_reads_the_relation_its_snapshot_names() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("reports");
    copy_tree(&repo().join("examples/reports"), &root);
    std::fs::create_dir_all(tmp.path().join("shop")).unwrap();
    duckdb_file(
        &tmp.path().join("shop/warehouse.duckdb"),
        "CREATE SCHEMA analytics; CREATE SCHEMA reports;
         CREATE TABLE analytics.dim_customers (customer_id INTEGER, name VARCHAR(100), email VARCHAR(255));
         INSERT INTO analytics.dim_customers VALUES (1, 'Ada', 'ada@example.com'), (2, 'Bob', 'bob@example.com');
         CREATE TABLE reports.large_orders_by_customer (customer_id INTEGER, name VARCHAR(100), large_orders BIGINT, large_amount DECIMAL(38,2));
         INSERT INTO reports.large_orders_by_customer VALUES (1, 'Ada', 2, 300.00), (3, 'Cy', 1, 120.00), (4, 'Di', 1, 150.00);",
    );
    let out = audit(&root, None, &["--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", transcript(&out, &root));
    let got = failing(&out);
    let key = |audit: &str| {
        (
            "large_orders_by_customer".to_string(),
            "customer_id".to_string(),
            audit.to_string(),
        )
    };
    assert_eq!(got[&key("relationships")], 2, "{got:?}");
    assert_eq!(got[&key("unique")], 0, "{got:?}");
}

/// An audit spread over several connections says exactly what one connection says, each
/// relation's counts in its own place (testdata/audit_wide: relation `tNN` has NN duplicate
/// keys and 21 - NN null labels).
fn spread_over_connections_as_on_one(root: &Path, url: Option<&str>) {
    let one = audit(root, url, &["--format", "json", "--connections", "1"]);
    assert_eq!(one.status.code(), Some(1), "{}", transcript(&one, root));
    let counts = failing(&one);
    for i in 1..=20u64 {
        let t = format!("t{i:02}");
        assert_eq!(counts[&(t.clone(), "id".into(), "unique".into())], i);
        assert_eq!(counts[&(t, "label".into(), "not_null".into())], 21 - i);
    }
    let report: serde_json::Value = serde_json::from_slice(&one.stdout).unwrap();
    // One scan a relation, one sample a failed check.
    assert_eq!(report["summary"]["queries"], 60);
    let many = audit(root, url, &["--format", "json", "--connections", "4"]);
    assert_eq!(
        String::from_utf8_lossy(&many.stdout),
        String::from_utf8_lossy(&one.stdout)
    );
}

#[test]
fn an_audit_spread_over_connections_says_what_one_says_on_duckdb() {
    let case = repo().join("testdata/audit_wide");
    let tmp = tempfile::tempdir().unwrap();
    case_project(&case, "duckdb", tmp.path());
    duckdb_file(
        &tmp.path().join("w.duckdb"),
        &case_warehouse(&case, "duckdb").unwrap(),
    );
    spread_over_connections_as_on_one(tmp.path(), None);
}

#[test]
fn an_audit_spread_over_connections_says_what_one_says_on_postgres() {
    let Some(db) = TestDb::create("audit_wide") else {
        return;
    };
    let case = repo().join("testdata/audit_wide");
    pg_exec(&db.url, &case_warehouse(&case, "postgres").unwrap());
    let tmp = tempfile::tempdir().unwrap();
    case_project(&case, "postgres", tmp.path());
    spread_over_connections_as_on_one(tmp.path(), Some(&db.url));
}
