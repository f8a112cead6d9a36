//! `sqb init` end to end on real warehouses (testdata/init): the exact files it writes from a
//! Postgres database and a DuckDB file, a project that compiles with no warning and that
//! `contract diff` finds in agreement with the warehouse, drift planted afterwards found, and
//! every refusal leaving no file behind and no password anywhere.

mod common;

use std::path::Path;
use std::process::Output;

#[cfg(feature = "duckdb")]
use common::duckdb_file;
use common::{pg_exec, repo, run, sqb, transcript, tree, TestDb};

fn fixture(name: &str) -> String {
    std::fs::read_to_string(repo().join("testdata/init").join(name)).unwrap()
}

/// `text` with the test server's address and the test database's name made stable.
fn stable(text: &str, db: &TestDb) -> String {
    let server = url::Url::parse(&db.url).unwrap();
    let address = format!(
        "{}:{}",
        server.host_str().unwrap(),
        server.port().unwrap_or(5432)
    );
    text.replace(&db.name, "[DB]").replace(&address, "[SERVER]")
}

fn in_project(root: &Path, args: &[&str]) -> Output {
    run(sqb().arg("--project-dir").arg(root).args(args))
}

/// `sqb ARGS` in the project at `root`, the password given as PGPASSWORD (init never writes it).
fn with_password(root: &Path, db: &TestDb, args: &[&str]) -> Output {
    run(sqb()
        .arg("--project-dir")
        .arg(root)
        .args(args)
        .env("PGPASSWORD", password(db)))
}

fn postgres_warehouse(test: &str) -> Option<TestDb> {
    let db = TestDb::create(test)?;
    pg_exec(&db.url, &fixture("postgres.sql"));
    Some(db)
}

/// The URL with its password removed, and the password given as PGPASSWORD instead.
fn password(db: &TestDb) -> String {
    url::Url::parse(&db.url)
        .unwrap()
        .password()
        .unwrap()
        .to_string()
}

#[test]
fn postgres_gives_a_project_that_compiles_clean_and_agrees() {
    let Some(db) = postgres_warehouse("init_pg") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("warehouse");
    let out = run(sqb().arg("init").arg(&root).args(["--url", &db.url]));
    let shown = stable(&transcript(&out, tmp.path()), &db);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    insta::assert_snapshot!("postgres_report", shown);
    insta::assert_snapshot!("postgres_tree", stable(&tree(&root), &db));
    let secret = password(&db);
    // The test role's password is its name: what must not appear is the URL's password part.
    assert!(
        !tree(&root).contains(&format!(":{secret}@")),
        "a password was written"
    );

    let compiled = in_project(&root, &["compile"]);
    let compiled_text = transcript(&compiled, &root);
    assert_eq!(compiled.status.code(), Some(0), "{compiled_text}");
    assert!(
        compiled_text.contains("valid") && !compiled_text.contains("warning"),
        "{compiled_text}"
    );

    let diff = with_password(&root, &db, &["contract", "diff"]);
    let diff_text = stable(&transcript(&diff, &root), &db);
    assert_eq!(diff.status.code(), Some(0), "{diff_text}");
    assert!(diff_text.contains("7 resources agree"), "{diff_text}");
}

#[test]
fn drift_planted_after_init_is_found() {
    let Some(db) = postgres_warehouse("init_drift") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("warehouse");
    let out = run(sqb().arg("init").arg(&root).args(["--url", &db.url]));
    assert_eq!(out.status.code(), Some(0), "{}", transcript(&out, &root));
    pg_exec(
        &db.url,
        "DROP VIEW big_orders; DROP MATERIALIZED VIEW order_totals;
         ALTER TABLE orders ALTER COLUMN amount TYPE numeric(12, 2);
         ALTER TABLE orders DROP COLUMN placed_on;
         ALTER TABLE customers ADD COLUMN phone text;
         CREATE TABLE staging.\"Refunds\" (id bigint NOT NULL, amount numeric(10, 2));",
    );
    let diff = with_password(&root, &db, &["contract", "diff", "--format", "json"]);
    assert_eq!(diff.status.code(), Some(1), "{}", transcript(&diff, &root));
    let report: serde_json::Value = serde_json::from_slice(&diff.stdout).unwrap();
    let mut findings: Vec<String> = report["resources"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| {
            let name = r["resource_name"].as_str().unwrap().to_string();
            r["findings"].as_array().unwrap().iter().map(move |f| {
                format!(
                    "{name}.{} {}",
                    f["column"].as_str().unwrap_or("-"),
                    f["kind"].as_str().unwrap()
                )
            })
        })
        .collect();
    findings.sort();
    assert_eq!(
        findings,
        [
            "big_orders.- relation_missing",
            "customers.phone undeclared_physical_column",
            "order_totals.- relation_missing",
            "orders.amount type_mismatch",
            "orders.placed_on missing_physical_column",
            "staging.Refunds.- undeclared_relation",
        ]
    );

    // generate declares the new relation with its exact columns, and the added column; the
    // retype and the drops are left for the user (--overwrite).
    let generate = with_password(&root, &db, &["contract", "generate", "--write"]);
    assert_eq!(
        generate.status.code(),
        Some(0),
        "{}",
        transcript(&generate, &root)
    );
    let staging = std::fs::read_to_string(root.join("sources/staging.toml")).unwrap();
    insta::assert_snapshot!("generated_new_relation", staging);
    let after = with_password(&root, &db, &["contract", "diff", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_slice(&after.stdout).unwrap();
    assert_eq!(report["summary"]["by_kind"]["undeclared_relation"], 0);
    assert_eq!(
        report["summary"]["by_kind"]["undeclared_physical_column"],
        0
    );
    assert_eq!(report["summary"]["by_kind"]["type_mismatch"], 1);
}

#[cfg(feature = "duckdb")]
#[test]
fn duckdb_gives_a_project_that_compiles_clean_and_agrees() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("data/warehouse.duckdb");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    duckdb_file(&file, &fixture("duckdb.sql"));
    let root = tmp.path().join("project");
    let out = run(sqb()
        .arg("init")
        .arg(&root)
        .arg("--path")
        .arg(&file)
        .args(["--target", "prod"]));
    let shown = transcript(&out, tmp.path());
    assert_eq!(out.status.code(), Some(0), "{shown}");
    assert!(
        shown.contains("main  target `prod` (default): 3 relations")
            && shown.contains("raw   target `raw`: 1 relation"),
        "{shown}"
    );
    let config = std::fs::read_to_string(root.join("sqb.toml")).unwrap();
    for expected in [
        "engine = \"duckdb\"",
        "path = \"../data/warehouse.duckdb\"",
        "default_target = \"prod\"",
        "[targets.prod]\nschema = \"main\"",
        "[targets.raw]\nschema = \"raw\"",
        "adopted_schemas = [\"main\", \"raw\"]",
    ] {
        assert!(config.contains(expected), "{expected}\n{config}");
    }
    let raw = std::fs::read_to_string(root.join("sources/raw.toml")).unwrap();
    assert!(raw.contains("[payments.columns.Amount]"), "{raw}");
    let compiled = in_project(&root, &["compile"]);
    let compiled_text = transcript(&compiled, &root);
    assert_eq!(compiled.status.code(), Some(0), "{compiled_text}");
    assert!(!compiled_text.contains("warning"), "{compiled_text}");
    let diff = in_project(&root, &["contract", "diff"]);
    let diff_text = transcript(&diff, &root);
    assert_eq!(diff.status.code(), Some(0), "{diff_text}");
    assert!(diff_text.contains("4 resources agree"), "{diff_text}");
}

#[test]
fn named_schemas_and_target_are_kept() {
    let Some(db) = postgres_warehouse("init_schema") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("w");
    let out = run(sqb()
        .arg("init")
        .arg(&root)
        .args(["--url", &db.url])
        .args(["--schema", "staging", "--schema", "empty_one"])
        .args(["--target", "prod", "--format", "json"]));
    assert_eq!(out.status.code(), Some(0), "{}", transcript(&out, &root));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["default_target"], "prod");
    assert_eq!(report["schemas"][0]["schema"], "staging");
    assert_eq!(report["schemas"][0]["target"], "prod");
    assert_eq!(report["schemas"][1]["file"], serde_json::Value::Null);
    assert_eq!(report["other_schemas"], serde_json::json!(["public"]));
    let config = std::fs::read_to_string(root.join("sqb.toml")).unwrap();
    assert!(
        config.contains("[targets.prod]\nschema = \"staging\""),
        "{config}"
    );
    assert!(config.contains("[targets.empty_one]"), "{config}");
    assert!(!root.join("sources/public.toml").exists());
}

/// Each refusal: exit 2, one clear error, and nothing written (the directory not even created).
#[test]
fn refusals_write_nothing() {
    let Some(db) = postgres_warehouse("init_refusals") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("w");
    let secret = password(&db);
    let wrong_password = db.url.replace(&format!(":{secret}@"), ":not-it@");
    let unreachable = "postgres://sqb_test:hunter2@127.0.0.1:1/x";
    let cases: Vec<(&str, Vec<String>)> = vec![
        (
            "unknown_schema",
            vec![
                "--url".into(),
                db.url.clone(),
                "--schema".into(),
                "stagign".into(),
            ],
        ),
        ("wrong_password", vec!["--url".into(), wrong_password]),
        (
            "unreachable",
            vec![
                "--url".into(),
                unreachable.into(),
                "--connect-timeout".into(),
                "1".into(),
            ],
        ),
        ("no_warehouse", vec![]),
        (
            "duckdb_missing",
            vec![
                "--path".into(),
                tmp.path().join("nowhere.duckdb").display().to_string(),
            ],
        ),
    ];
    for (name, args) in cases {
        let out = run(sqb()
            .arg("init")
            .arg(&root)
            .args(&args)
            .env_remove("PGHOST"));
        let shown = stable(&transcript(&out, tmp.path()), &db);
        assert_eq!(out.status.code(), Some(2), "{name}: {shown}");
        assert!(!root.exists(), "{name}: {shown}");
        assert!(
            !shown.contains(&format!(":{secret}@"))
                && !shown.contains("hunter2")
                && !shown.contains("not-it"),
            "{name}: {shown}"
        );
        insta::assert_snapshot!(format!("refused_{name}"), shown);
    }
}

#[test]
fn an_existing_project_is_kept_unless_forced() {
    let Some(db) = postgres_warehouse("init_force") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::write(root.join("sqb.toml"), "name = \"mine\"\n").unwrap();
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    let out = run(sqb().arg("init").arg(root).args(["--url", &db.url]));
    assert_eq!(out.status.code(), Some(2), "{}", transcript(&out, root));
    insta::assert_snapshot!("refused_existing", transcript(&out, root));
    assert_eq!(
        std::fs::read_to_string(root.join("sqb.toml")).unwrap(),
        "name = \"mine\"\n"
    );
    assert!(!root.join("sources").exists());

    let forced = run(sqb()
        .arg("init")
        .arg(root)
        .args(["--url", &db.url, "--force"]));
    assert_eq!(
        forced.status.code(),
        Some(0),
        "{}",
        transcript(&forced, root)
    );
    assert!(std::fs::read_to_string(root.join("sqb.toml"))
        .unwrap()
        .contains("engine = \"postgres\""));
    // A .gitignore of the user's is theirs.
    assert_eq!(
        std::fs::read_to_string(root.join(".gitignore")).unwrap(),
        "target/\n"
    );
}

/// A project that declares nothing compares nothing: the diff fails (exit 2) rather than
/// report "0 resources agree".
#[test]
fn a_diff_with_nothing_to_compare_fails() {
    let Some(db) = postgres_warehouse("init_empty") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("w");
    let out = run(sqb()
        .arg("init")
        .arg(&root)
        .args(["--url", &db.url, "--schema", "empty_one"]));
    assert_eq!(out.status.code(), Some(0), "{}", transcript(&out, &root));
    let diff = with_password(&root, &db, &["contract", "diff"]);
    insta::assert_snapshot!("nothing_to_compare", transcript(&diff, &root));
    assert_eq!(diff.status.code(), Some(2));
}

/// Ctrl-C while init writes: every file it wrote is removed, and so is the directory it made.
#[test]
fn an_interrupted_init_leaves_nothing() {
    let Some(db) = postgres_warehouse("init_interrupted") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("w");
    for step in ["journal", "write:2", "check"] {
        let out = run(sqb()
            .arg("init")
            .arg(&root)
            .args(["--url", &db.url])
            .env("SQB_FAULT_AFTER", format!("sigint:{step}")));
        assert_eq!(
            out.status.code(),
            Some(130),
            "{step}: {}",
            transcript(&out, &root)
        );
        assert!(!root.exists(), "{step}: {}", tree(&root));
    }
}

/// A project that does not compile (an enforced model that declares no columns, E020) is still
/// compared, its error beside the findings (exit 1); `generate --write` fills the columns from
/// the warehouse, which fixes it, and says so.
#[test]
fn a_project_that_does_not_compile_is_compared_and_generate_fixes_it() {
    let Some(db) = postgres_warehouse("init_broken") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("w");
    let out = run(sqb().arg("init").arg(&root).args(["--url", &db.url]));
    assert_eq!(out.status.code(), Some(0), "{}", transcript(&out, &root));
    common::copy_tree(
        &repo().join("testdata/init/enforced_without_columns"),
        &root,
    );
    pg_exec(
        &db.url,
        "CREATE TABLE big_spenders AS SELECT customer_id, amount FROM orders WHERE amount > 100",
    );
    let diff = with_password(&root, &db, &["contract", "diff"]);
    let shown = stable(&transcript(&diff, &root), &db);
    assert_eq!(diff.status.code(), Some(1), "{shown}");
    insta::assert_snapshot!("broken_project_diff", shown);

    let generate = with_password(&root, &db, &["contract", "generate", "--write"]);
    let shown = stable(&transcript(&generate, &root), &db);
    assert_eq!(generate.status.code(), Some(0), "{shown}");
    assert!(
        shown.contains("it fixed 1 error: the project compiles"),
        "{shown}"
    );
    let diff = with_password(&root, &db, &["contract", "diff"]);
    assert_eq!(diff.status.code(), Some(0), "{}", transcript(&diff, &root));
}
