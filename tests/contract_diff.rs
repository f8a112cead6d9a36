//! `sqb contract diff` against real DuckDB files and a real PostgreSQL server: every finding
//! kind on both engines, the tricky types, odd identifiers, connection failures, selectors,
//! the read-only guarantee, and one snapshot per output format.

mod common;

use std::path::Path;

use common::*;

/// Runs `sqb contract diff` in `root`, with `url` as SQB_DATABASE_URL when given.
fn diff(root: &Path, url: Option<&str>, args: &[&str]) -> std::process::Output {
    let mut cmd = sqb();
    cmd.arg("--project-dir")
        .arg(root)
        .args(["contract", "diff"])
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

// ---------------------------------------------------------------------------------------------
// The cases of testdata/diff: a project, the warehouse SQL for each engine it runs on, and its
// runs (arguments and exit status). One transcript snapshot per case and engine.

/// The transcript of every run of `case` in `root`.
fn case_transcript(case: &Path, root: &Path, url: Option<&str>) -> String {
    let mut text = String::new();
    for run in case_runs(case) {
        let args: Vec<&str> = run.args.iter().map(String::as_str).collect();
        let out = diff(root, url, &args);
        let command = format!("contract diff {}", run.args.join(" "));
        text.push_str(&expect_exit(&out, run.exit, &command, root));
    }
    text
}

#[test]
fn diff_cases_on_duckdb() {
    insta::glob!("../testdata/diff", "*/runs.toml", |runs| {
        let case = runs.parent().unwrap();
        let Some(sql) = case_warehouse(case, "duckdb") else {
            return;
        };
        let tmp = tempfile::tempdir().unwrap();
        case_project(case, "duckdb", tmp.path());
        duckdb_file(&tmp.path().join("w.duckdb"), &sql);
        insta::assert_snapshot!(case_transcript(case, tmp.path(), None));
    });
}

#[test]
fn diff_cases_on_postgres() {
    if postgres_url().is_none() {
        return;
    }
    insta::glob!("../testdata/diff", "*/runs.toml", |runs| {
        let case = runs.parent().unwrap();
        let Some(sql) = case_warehouse(case, "postgres") else {
            return;
        };
        let name = case.file_name().unwrap().to_str().unwrap();
        let db = TestDb::create(name).expect("the server answered before");
        pg_exec(&db.url, &sql);
        let tmp = tempfile::tempdir().unwrap();
        case_project(case, "postgres", tmp.path());
        let text = case_transcript(case, tmp.path(), Some(&db.url));
        // The database is named per test process, and the fingerprints with it.
        insta::assert_snapshot!(without_fingerprints(&text.replace(&db.name, "[DB]")));
    });
}

/// The catalog query asks for no order of a relation's columns. Under a plan that scans
/// pg_attribute (index scans off), a renamed first column comes after the others (its row is
/// rewritten): the read puts it back in its place and reports exactly what the usual plan
/// gives.
#[test]
fn the_catalog_read_does_not_depend_on_the_servers_plan() {
    let Some(db) = TestDb::create("catalog_plan") else {
        return;
    };
    let case = repo().join("testdata/diff/tricky_types_postgres");
    pg_exec(
        &db.url,
        &std::fs::read_to_string(case.join("warehouse.postgres.sql")).unwrap(),
    );
    pg_exec(
        &db.url,
        "ALTER TABLE analytics.types ADD COLUMN late analytics.mood[];
         ALTER TABLE analytics.types RENAME COLUMN v255 TO title;",
    );
    let tmp = tempfile::tempdir().unwrap();
    case_project(&case, "postgres", tmp.path());
    let read = || {
        run(sqb()
            .arg("--project-dir")
            .arg(tmp.path())
            .args(["-v", "contract", "diff", "--from", "prod", "--json"])
            .args(["-s", "types", "mv", "events", "ft", "types_drift"])
            .env("SQB_DATABASE_URL", &db.url))
    };
    let usual = read();
    assert_eq!(
        usual.status.code(),
        Some(1),
        "{}",
        transcript(&usual, tmp.path())
    );
    let usual_log = String::from_utf8_lossy(&usual.stderr).to_string();
    assert!(
        !usual_log.contains("catalog columns came out of order; sorted"),
        "{usual_log}"
    );
    pg_exec(
        &db.url,
        &format!(
            "ALTER DATABASE {0} SET enable_nestloop = off;
             ALTER DATABASE {0} SET enable_indexscan = off;
             ALTER DATABASE {0} SET enable_bitmapscan = off;
             ALTER DATABASE {0} SET enable_mergejoin = off;",
            db.name
        ),
    );
    let scanned = read();
    let scanned_log = String::from_utf8_lossy(&scanned.stderr).to_string();
    assert!(
        scanned_log.contains("catalog columns came out of order; sorted"),
        "{scanned_log}"
    );
    assert_eq!(scanned.status.code(), Some(1), "{scanned_log}");
    assert_eq!(
        String::from_utf8_lossy(&scanned.stdout),
        String::from_utf8_lossy(&usual.stdout)
    );
    let report = json(&usual).to_string();
    for expected in ["late", "title", "mood"] {
        assert!(report.contains(expected), "{expected} not in {report}");
    }
}

/// The every-finding-kind case's project, for the tests of failures around it.
fn kinds_project(root: &Path, engine: &str) {
    case_project(
        &repo().join("testdata/diff/every_finding_kind"),
        engine,
        root,
    );
}

// ---------------------------------------------------------------------------------------------
// The shop example on both engines, and every output format

fn shop_copy(root: &Path) {
    copy_tree(&repo().join("examples/shop"), root);
    let _ = std::fs::remove_file(root.join("warehouse.duckdb"));
}

/// The shop example with its connection switched to Postgres (the URL comes from the test).
fn shop_copy_on_postgres(root: &Path) {
    shop_copy(root);
    let toml = std::fs::read_to_string(root.join("sqb.toml")).unwrap();
    std::fs::write(
        root.join("sqb.toml"),
        toml.replace("engine = \"duckdb\"", "engine = \"postgres\""),
    )
    .unwrap();
}

#[test]
fn shop_example_on_duckdb_in_every_format() {
    let tmp = tempfile::tempdir().unwrap();
    shop_copy(tmp.path());
    duckdb_file(&tmp.path().join("warehouse.duckdb"), &shop_migrations());
    let prod = diff(tmp.path(), None, &["--from", "prod"]);
    assert_eq!(
        prod.status.code(),
        Some(0),
        "{}",
        transcript(&prod, tmp.path())
    );
    insta::assert_snapshot!("shop_prod_text", transcript(&prod, tmp.path()));
    for format in ["text", "json", "markdown", "junit", "github"] {
        let out = diff(tmp.path(), None, &["--from", "dev", "--format", format]);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{format}: {}",
            transcript(&out, tmp.path())
        );
        insta::assert_snapshot!(format!("shop_dev_{format}"), transcript(&out, tmp.path()));
    }
}

#[test]
fn shop_example_on_postgres() {
    let Some(db) = TestDb::create("shop") else {
        return;
    };
    pg_exec(&db.url, &shop_migrations());
    let tmp = tempfile::tempdir().unwrap();
    shop_copy(tmp.path());
    let toml = std::fs::read_to_string(tmp.path().join("sqb.toml")).unwrap();
    let toml = toml.replace(
        "engine = \"duckdb\"\npath = \"warehouse.duckdb\"",
        "engine = \"postgres\"\nurl = \"postgres://nobody@127.0.0.1:1/nothing\"",
    );
    std::fs::write(tmp.path().join("sqb.toml"), toml).unwrap();
    // SQB_DATABASE_URL overrides the project's url.
    let prod = diff(tmp.path(), Some(&db.url), &["--from", "prod"]);
    assert_eq!(
        prod.status.code(),
        Some(0),
        "{}",
        transcript(&prod, tmp.path())
    );
    let dev = diff(tmp.path(), Some(&db.url), &["--from", "dev", "--json"]);
    assert_eq!(dev.status.code(), Some(1));
    insta::assert_snapshot!(without_fingerprints(
        &transcript(&dev, tmp.path()).replace(&db.name, "[DB]")
    ));
}

#[test]
fn output_file_is_written_atomically_and_stdout_stays_empty() {
    let tmp = tempfile::tempdir().unwrap();
    shop_copy(tmp.path());
    duckdb_file(&tmp.path().join("warehouse.duckdb"), &shop_migrations());
    let report = tmp.path().join("drift.json");
    let out = diff(
        tmp.path(),
        None,
        &[
            "--from",
            "dev",
            "--json",
            "--output",
            report.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(written["summary"]["differing"], 2);
    let bad = diff(
        tmp.path(),
        None,
        &["--from", "dev", "--output", "/nonexistent-dir/x.txt"],
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("/nonexistent-dir/x.txt"));
}

// ---------------------------------------------------------------------------------------------
// Selectors

fn shop_with_warehouse() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    shop_copy(tmp.path());
    duckdb_file(&tmp.path().join("warehouse.duckdb"), &shop_migrations());
    tmp
}

fn selected(root: &Path, args: &[&str]) -> Vec<String> {
    let mut all = vec!["--from", "prod", "--json"];
    all.extend_from_slice(args);
    let out = diff(root, None, &all);
    assert!(out.status.code() != Some(2), "{}", transcript(&out, root));
    json(&out)["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{}:{}",
                r["resource_type"].as_str().unwrap(),
                r["resource_name"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn selectors_union_intersect_and_exclude() {
    let tmp = shop_with_warehouse();
    let root = tmp.path();
    // Resources come in project order: models by path, then sources in file order.
    assert_eq!(
        selected(root, &["-s", "stg_*"]),
        ["model:stg_customers", "model:stg_orders"]
    );
    assert_eq!(
        selected(root, &["-s", "model:fct_orders", "source:raw_customers"]),
        ["model:fct_orders", "source:raw_customers"]
    );
    assert_eq!(
        selected(root, &["-s", "tag:commerce"]),
        [
            "model:dim_customers",
            "model:fct_orders",
            "model:stg_orders",
            "source:raw_orders"
        ]
    );
    assert_eq!(
        selected(root, &["-s", "tag:commerce,source:*"]),
        ["source:raw_orders"]
    );
    assert_eq!(
        selected(root, &["-s", "path:models/marts"]),
        ["model:dim_customers", "model:fct_orders"]
    );
    assert_eq!(
        selected(root, &["-s", "models/staging"]),
        ["model:stg_customers", "model:stg_orders"]
    );
    assert_eq!(
        selected(
            root,
            &["-s", "source:raw_*", "--exclude", "source:raw_orders"]
        ),
        ["source:raw_customers", "source:raw_balances"]
    );
    assert_eq!(selected(root, &[]).len(), 7);
    std::fs::write(
        root.join("sel.txt"),
        "# nightly\nfct_orders\n\nsource:raw_orders\n",
    )
    .unwrap();
    let file = root.join("sel.txt");
    assert_eq!(
        selected(root, &["--select-file", file.to_str().unwrap()]),
        ["model:fct_orders", "source:raw_orders"]
    );
}

#[test]
fn graph_operators_follow_the_model_dag() {
    let tmp = shop_with_warehouse();
    let root = tmp.path();
    assert_eq!(
        selected(root, &["-s", "+fct_orders"]),
        ["model:fct_orders", "model:stg_orders", "source:raw_orders"]
    );
    assert_eq!(
        selected(root, &["-s", "stg_orders+"]),
        [
            "model:dim_customers",
            "model:fct_orders",
            "model:stg_orders"
        ]
    );
    assert_eq!(
        selected(root, &["-s", "source:raw_orders+"]),
        [
            "model:dim_customers",
            "model:fct_orders",
            "model:stg_orders",
            "source:raw_orders"
        ]
    );
    assert_eq!(
        selected(root, &["-s", "1+dim_customers"]),
        [
            "model:dim_customers",
            "model:stg_customers",
            "model:stg_orders"
        ]
    );
    assert_eq!(
        selected(root, &["-s", "2+dim_customers", "--exclude", "source:*"]),
        [
            "model:dim_customers",
            "model:stg_customers",
            "model:stg_orders"
        ]
    );
    assert_eq!(
        selected(root, &["-s", "+dim_customers,tag:commerce"]),
        [
            "model:dim_customers",
            "model:stg_orders",
            "source:raw_orders"
        ]
    );
    assert_eq!(
        selected(root, &["-s", "stg_customers+1"]),
        ["model:dim_customers", "model:stg_customers"]
    );
}

#[test]
fn selector_errors_are_clear() {
    let tmp = shop_with_warehouse();
    let root = tmp.path();
    let none = diff(root, None, &["--from", "prod", "-s", "fct_order"]);
    assert_eq!(none.status.code(), Some(2));
    insta::assert_snapshot!(transcript(&none, root));
    let graph = diff(root, None, &["--from", "prod", "-s", "+fct_ordrs"]);
    assert_eq!(graph.status.code(), Some(2));
    insta::assert_snapshot!(transcript(&graph, root));
    let target = diff(root, None, &["--from", "prd"]);
    assert_eq!(target.status.code(), Some(2));
    insta::assert_snapshot!(transcript(&target, root));
    // A bare name selects models; a source's selector is `source:NAME`.
    let source = diff(root, None, &["--from", "prod", "-s", "raw_orders+"]);
    assert_eq!(source.status.code(), Some(2));
    insta::assert_snapshot!(transcript(&source, root));
}

// ---------------------------------------------------------------------------------------------
// Failures: connection, authentication, files, invalid projects

const SECRET: &str = "Sup3r-Secret-pw";

#[test]
fn a_url_of_another_engine_is_refused_before_anything_connects() {
    let tmp = tempfile::tempdir().unwrap();
    shop_copy_on_postgres(tmp.path());
    // Port 9 would refuse a connection; the refusal must come before one is tried.
    for url in [
        format!("mysql://ana:{SECRET}@127.0.0.1:9/shop"),
        format!("host=127.0.0.1 port=9 password={SECRET}"),
    ] {
        let out = diff(tmp.path(), Some(&url), &["--from", "dev"]);
        assert_eq!(out.status.code(), Some(2));
        let text = transcript(&out, tmp.path());
        assert!(!text.contains(SECRET), "{text}");
        assert!(
            text.contains("SQB_DATABASE_URL is not a Postgres URL: it must start with `postgres://` or `postgresql://`"),
            "{text}"
        );
        assert!(!text.contains("could not connect"), "{text}");
    }
}

#[test]
fn wrong_password_is_a_clear_error_without_the_password() {
    let Some(admin) = postgres_url() else { return };
    let tmp = tempfile::tempdir().unwrap();
    kinds_project(tmp.path(), "postgres");
    let url = admin.replace("sqb_test:sqb_test@", &format!("sqb_test:{SECRET}@"));
    let out = diff(tmp.path(), Some(&url), &["--from", "prod"]);
    assert_eq!(out.status.code(), Some(2));
    let text = transcript(&out, tmp.path());
    assert!(!text.contains(SECRET), "{text}");
    assert!(
        text.contains("password authentication failed for user `sqb_test`"),
        "{text}"
    );
    // The same through PGPASSWORD.
    let bare = admin.replace("sqb_test:sqb_test@", "sqb_test@");
    let mut cmd = sqb();
    cmd.arg("--project-dir")
        .arg(tmp.path())
        .args(["contract", "diff", "--from", "prod", "--json"]);
    cmd.env("SQB_DATABASE_URL", &bare).env("PGPASSWORD", SECRET);
    let out = run(&mut cmd);
    assert_eq!(out.status.code(), Some(2));
    let text = transcript(&out, tmp.path());
    assert!(
        !text.contains(SECRET) && text.contains("password authentication failed"),
        "{text}"
    );
}

#[test]
fn no_error_path_shows_the_password() {
    let Some(admin) = postgres_url() else { return };
    let tmp = tempfile::tempdir().unwrap();
    kinds_project(tmp.path(), "postgres");
    let good = admin.replace("sqb_test:sqb_test@", &format!("sqb_test:{SECRET}@"));
    // A server that accepts and never answers: the connect timeout.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_port = silent.local_addr().unwrap().port();
    // A server-side error after authentication: a role without CONNECT on the database.
    let db = TestDb::create("noconnect").unwrap();
    let role = format!("sqb_secret_{}", std::process::id());
    pg_exec(
        &admin,
        &format!(
            "DROP ROLE IF EXISTS {role}; CREATE ROLE {role} LOGIN PASSWORD '{SECRET}';
             REVOKE CONNECT ON DATABASE {} FROM PUBLIC;",
            db.name
        ),
    );
    let no_connect = db
        .url
        .replace("sqb_test:sqb_test@", &format!("{role}:{SECRET}@"));
    let cases = [
        (
            "connect timeout",
            format!("postgres://sqb_test:{SECRET}@127.0.0.1:{silent_port}/postgres"),
            "timed out after 3s connecting to 127.0.0.1",
        ),
        (
            "permission denied by the server",
            no_connect,
            "permission denied for database",
        ),
        (
            "wrong password",
            good.clone(),
            "password authentication failed",
        ),
        (
            "unknown database",
            with_database(&admin, "no_such_db"),
            "does not exist",
        ),
        (
            "unknown host",
            format!("postgres://sqb_test:{SECRET}@host.invalid:5432/postgres"),
            "could not connect to host.invalid:5432",
        ),
        (
            "closed port",
            format!("postgres://sqb_test:{SECRET}@127.0.0.1:1/postgres"),
            "could not connect to 127.0.0.1:1",
        ),
        (
            "bad URL",
            format!("postgres://sqb_test:{SECRET}@127.0.0.1:notaport/postgres"),
            "invalid Postgres connection URL",
        ),
    ];
    let logging: [&[(&str, &str)]; 2] = [&[], &[("RUST_LOG", "trace")]];
    for ((what, url, expected), log) in cases
        .iter()
        .flat_map(|c| logging.iter().map(move |l| (c, l)))
    {
        let output = tmp.path().join("report.json");
        let mut cmd = sqb();
        cmd.envs(log.iter().copied()).arg("-vv");
        cmd.arg("--project-dir").arg(tmp.path()).args([
            "contract",
            "diff",
            "--from",
            "prod",
            "--json",
            "--connect-timeout",
            "3",
        ]);
        cmd.arg("--output")
            .arg(&output)
            .env("SQB_DATABASE_URL", url)
            .env("PGPASSWORD", SECRET);
        let out = run(&mut cmd);
        let text = transcript(&out, tmp.path());
        assert_eq!(out.status.code(), Some(2), "{what}: {text}");
        assert!(text.contains(expected), "{what}: {text}");
        assert!(!text.contains(SECRET), "{what} leaked the password: {text}");
        assert!(!output.exists(), "{what}: a failed run wrote a report");
        if !log.is_empty() {
            assert!(text.contains(" DEBUG "), "{what}: no trace log: {text}");
        }
    }
    drop(db);
    pg_exec(&admin, &format!("DROP ROLE {role}"));
}

#[test]
fn trace_logs_of_a_successful_diff_show_no_password() {
    let Some(db) = TestDb::create("tracelog") else {
        return;
    };
    pg_exec(&db.url, &shop_migrations());
    let role = format!("sqb_trace_{}", std::process::id());
    pg_exec(
        &db.url,
        &format!("DROP ROLE IF EXISTS {role}; CREATE ROLE {role} LOGIN PASSWORD '{SECRET}';"),
    );
    let tmp = tempfile::tempdir().unwrap();
    shop_copy_on_postgres(tmp.path());
    let url = db
        .url
        .replace("sqb_test:sqb_test@", &format!("{role}:{SECRET}@"));
    let out = run(sqb()
        .arg("--project-dir")
        .arg(tmp.path())
        .args(["-vv", "contract", "diff", "--from", "prod"])
        .env("RUST_LOG", "trace")
        .env("SQB_DATABASE_URL", &url));
    let text = transcript(&out, tmp.path());
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("warehouse read"), "{text}");
    assert!(
        !text.contains(SECRET),
        "the trace log leaked the password: {text}"
    );
    pg_exec(&db.url, &format!("DROP OWNED BY {role}"));
    drop(db);
    pg_exec(
        &postgres_url().unwrap(),
        &format!("DROP ROLE IF EXISTS {role}"),
    );
}

#[test]
fn closed_port_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    kinds_project(tmp.path(), "postgres");
    let url = format!("postgres://ana:{SECRET}@127.0.0.1:1/shop");
    let out = diff(
        tmp.path(),
        Some(&url),
        &["--from", "prod", "--connect-timeout", "3"],
    );
    assert_eq!(out.status.code(), Some(2));
    let text = transcript(&out, tmp.path());
    assert!(!text.contains(SECRET), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn missing_url_and_bad_url_are_usage_errors() {
    let tmp = tempfile::tempdir().unwrap();
    kinds_project(tmp.path(), "postgres");
    let out = diff(tmp.path(), None, &["--from", "prod"]);
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!(transcript(&out, tmp.path()));
    let out = diff(
        tmp.path(),
        Some(&format!("mysql://x:{SECRET}@h/db")),
        &["--from", "prod"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(!transcript(&out, tmp.path()).contains(SECRET));
}

#[test]
fn duckdb_missing_and_locked_files_are_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    kinds_project(tmp.path(), "duckdb");
    let missing = diff(tmp.path(), None, &["--from", "prod"]);
    assert_eq!(missing.status.code(), Some(2));
    insta::assert_snapshot!(transcript(&missing, tmp.path()));
    let path = tmp.path().join("w.duckdb");
    duckdb_file(
        &path,
        "CREATE SCHEMA analytics; CREATE TABLE analytics.orders (id INTEGER);",
    );
    let writer = duckdb::Connection::open(&path).unwrap();
    writer
        .execute_batch("INSERT INTO analytics.orders VALUES (1)")
        .unwrap();
    let locked = diff(
        tmp.path(),
        None,
        &["--from", "prod", "--connect-timeout", "1"],
    );
    assert_eq!(locked.status.code(), Some(2));
    insta::assert_snapshot!(transcript(&locked, tmp.path()));
    // A writer that finishes within the connect timeout is waited for, said once.
    let release = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(700));
        drop(writer);
    });
    let waited = diff(
        tmp.path(),
        None,
        &["--from", "prod", "--connect-timeout", "20"],
    );
    release.join().unwrap();
    let shown = transcript(&waited, tmp.path());
    assert_ne!(waited.status.code(), Some(2), "{shown}");
    assert_eq!(
        shown
            .matches(
                "note: waiting up to 20s for [ROOT]/w.duckdb, which another process holds locked"
            )
            .count(),
        1,
        "{shown}"
    );
}

// ---------------------------------------------------------------------------------------------
// Read-only

#[test]
fn duckdb_file_bytes_are_unchanged() {
    let tmp = shop_with_warehouse();
    let path = tmp.path().join("warehouse.duckdb");
    let before = std::fs::read(&path).unwrap();
    for target in ["prod", "dev"] {
        diff(tmp.path(), None, &["--from", target]);
    }
    assert!(
        std::fs::read(&path).unwrap() == before,
        "the DuckDB file changed"
    );
    assert!(!tmp.path().join("warehouse.duckdb.wal").exists());
}

#[test]
fn postgres_sees_only_reads_from_a_role_that_can_write() {
    let Some(db) = TestDb::create("readonly") else {
        return;
    };
    pg_exec(&db.url, &shop_migrations());
    let role = format!("sqb_probe_{}", std::process::id());
    pg_exec(
        &db.url,
        &format!(
            "DROP ROLE IF EXISTS {role}; CREATE ROLE {role} LOGIN PASSWORD 'probe';
             GRANT ALL ON ALL TABLES IN SCHEMA analytics, dev, raw TO {role};
             GRANT ALL ON SCHEMA analytics, dev, raw TO {role};
             CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
             SELECT pg_stat_statements_reset();"
        ),
    );
    let tmp = tempfile::tempdir().unwrap();
    shop_copy_on_postgres(tmp.path());
    let url = db
        .url
        .replace("sqb_test:sqb_test@", &format!("{role}:probe@"));
    for target in ["prod", "dev"] {
        let out = diff(tmp.path(), Some(&url), &["--from", target]);
        assert_ne!(
            out.status.code(),
            Some(2),
            "{}",
            transcript(&out, tmp.path())
        );
    }
    let statements = pg_strings(
        &db.url,
        &format!(
            "SELECT query FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid
              WHERE r.rolname = '{role}' AND s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
        ),
    );
    pg_exec(&db.url, &format!("DROP OWNED BY {role}; DROP ROLE {role};"));
    assert!(!statements.is_empty(), "pg_stat_statements saw nothing");
    for statement in &statements {
        let head = statement
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_uppercase();
        assert!(
            ["SELECT", "BEGIN", "ROLLBACK", "SET", "SHOW"].contains(&head.as_str()),
            "sqb sent a statement that is not a read: {statement}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// --baseline: nightly runs compared with the previous one

/// Night 1 (the every-finding-kind warehouse) is the baseline; by night 2 `amount` has been
/// fixed and another column has drifted. Every format marks the new finding, lists the resolved one,
/// and `--fail-on new` fails only on new differences; a baseline of another target, a newer
/// sqb, another namespace, or no report at all is refused (exit 2) before anything is marked.
fn baseline_nights(engine: &str, root: &Path, url: Option<&str>, night2: &dyn Fn()) -> String {
    // Runs in the project root, where the reports are written and read.
    let diff = |root: &Path, url: Option<&str>, args: &[&str]| {
        let mut cmd = sqb();
        cmd.current_dir(root).args(["contract", "diff"]).args(args);
        if let Some(url) = url {
            cmd.env("SQB_DATABASE_URL", url);
        }
        run(&mut cmd)
    };
    let night1 = diff(
        root,
        url,
        &["--from", "prod", "--format", "json", "-o", "night1.json"],
    );
    let mut text = expect_exit(
        &night1,
        1,
        "contract diff --format json -o night1.json",
        root,
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("night1.json")).unwrap()).unwrap();
    let prints: Vec<&str> = report["resources"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["findings"].as_array().unwrap())
        .map(|f| f["fingerprint"].as_str().unwrap())
        .collect();
    assert!(
        !prints.is_empty(),
        "{engine}: every finding has a fingerprint"
    );
    let unique: std::collections::HashSet<_> = prints.iter().collect();
    assert_eq!(
        unique.len(),
        prints.len(),
        "{engine}: fingerprints are distinct"
    );
    night2();
    let mut step = |args: &[&str], exit: i32| {
        let mut all = vec!["--from", "prod"];
        all.extend_from_slice(args);
        let out = diff(root, url, &all);
        text.push_str(&expect_exit(
            &out,
            exit,
            &format!("contract diff {}", all.join(" ")),
            root,
        ));
        out
    };
    for format in ["text", "json", "markdown", "junit", "github"] {
        step(&["--baseline", "night1.json", "--format", format], 1);
    }
    step(&["--baseline", "night1.json", "--fail-on", "new"], 1);
    // Night 2 as the baseline of night 3 (nothing changed): every finding is known.
    step(&["--format", "json", "-o", "night2.json"], 1);
    step(&["--baseline", "night2.json", "--fail-on", "new"], 0);
    step(&["--baseline", "night2.json"], 1);
    // A run that checks only `broken` resolves nothing of `orders`.
    // (`broken` no longer binds on DuckDB, and is read as it is on Postgres.)
    let select_exit = if engine == "duckdb" { 1 } else { 0 };
    step(
        &["--baseline", "night1.json", "--select", "broken"],
        select_exit,
    );
    let night1 = std::fs::read_to_string(root.join("night1.json")).unwrap();
    for (name, from, to) in [
        (
            "other_target.json",
            "\"target\": \"prod\"",
            "\"target\": \"dev\"",
        ),
        (
            "newer.json",
            "\"schema_version\": 1",
            "\"schema_version\": 2",
        ),
        (
            "other_schema.json",
            "\"schema\": \"analytics\"",
            "\"schema\": \"staging\"",
        ),
    ] {
        assert!(night1.contains(from), "{from}");
        std::fs::write(root.join(name), night1.replacen(from, to, 1)).unwrap();
        step(&["--baseline", name], 2);
    }
    // Cut where nothing before it depends on the database's name (it is per process on Postgres).
    let cut = night1.find("\"resources\": [").unwrap() + "\"resources\": [".len();
    std::fs::write(root.join("truncated.json"), &night1[..cut]).unwrap();
    step(&["--baseline", "truncated.json"], 2);
    step(&["--baseline", "missing.json"], 2);
    step(&["--fail-on", "new"], 2);
    text
}

/// Night 2: `amount` fixed, `flag` (DuckDB; its VARCHAR has no length) or `code` drifted.
const NIGHT2_DUCKDB: &str = "ALTER TABLE analytics.orders ALTER COLUMN amount TYPE INTEGER;\n\
                             ALTER TABLE analytics.orders ALTER COLUMN flag TYPE INTEGER;";
const NIGHT2_POSTGRES: &str = "ALTER TABLE analytics.orders ALTER COLUMN amount TYPE INTEGER;\n\
                               ALTER TABLE analytics.orders ALTER COLUMN code TYPE VARCHAR(5);";

#[test]
fn baseline_marks_new_known_and_resolved_on_duckdb() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    kinds_project(root, "duckdb");
    let case = repo().join("testdata/diff/every_finding_kind");
    let file = root.join("w.duckdb");
    duckdb_file(&file, &case_warehouse(&case, "duckdb").unwrap());
    let text = baseline_nights("duckdb", root, None, &|| duckdb_file(&file, NIGHT2_DUCKDB));
    insta::assert_snapshot!(text);
}

#[test]
fn baseline_marks_new_known_and_resolved_on_postgres() {
    let Some(db) = TestDb::create("baseline") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    kinds_project(root, "postgres");
    let case = repo().join("testdata/diff/every_finding_kind");
    pg_exec(&db.url, &case_warehouse(&case, "postgres").unwrap());
    let text = baseline_nights("postgres", root, Some(&db.url), &|| {
        pg_exec(&db.url, NIGHT2_POSTGRES)
    });
    // The database is named per test process, and the fingerprints with it.
    let text = without_fingerprints(&text.replace(&db.name, "[DB]"));
    insta::assert_snapshot!(text);
}

/// `text` with every run of 32 lowercase hex digits as `<fingerprint>`.
fn without_fingerprints(text: &str) -> String {
    let mut out = String::new();
    let mut run = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_digit() || ('a'..='f').contains(&c) {
            run.push(c);
            continue;
        }
        match run.len() {
            32 => out.push_str("<fingerprint>"),
            _ => out.push_str(&run),
        }
        run.clear();
        out.push(c);
    }
    out.pop();
    out
}
