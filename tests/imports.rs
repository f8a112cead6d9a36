//! Cross-team contracts end to end, on both dialects: the producer of `testdata/imports`
//! publishes, the consumer vendors the snapshot as its baseline and compiles clean; then each
//! case of `testdata/imports/cases.toml` changes the producer (or the vendored file, or the
//! consumer) and the consumer's compile must say exactly the expected codes, rendered as the
//! snapshot pins.

mod common;

use std::path::Path;

use common::*;

#[derive(serde::Deserialize)]
struct Cases {
    case: Vec<Case>,
}

#[derive(serde::Deserialize)]
struct Case {
    name: String,
    #[serde(default)]
    producer: Vec<[String; 3]>,
    #[serde(default)]
    consumer: Vec<[String; 3]>,
    #[serde(default)]
    snapshot: Vec<[String; 2]>,
    #[serde(default)]
    delete_snapshot: bool,
    codes: Vec<String>,
}

fn cases() -> Vec<Case> {
    let path = repo().join("testdata/imports/cases.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let cases: Cases =
        toml_edit::de::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    cases.case
}

fn edit(root: &Path, [file, from, to]: &[String; 3]) {
    let path = root.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from.as_str()), "{file} has no {from:?}");
    std::fs::write(&path, text.replacen(from.as_str(), to, 1)).unwrap();
}

/// The fixture, its two projects switched to `engine`.
fn projects(engine: &str, root: &Path) {
    copy_tree(&repo().join("testdata/imports"), root);
    if engine == "postgres" {
        for project in ["producer", "consumer"] {
            let path = root.join(project).join("sqb.toml");
            let text = std::fs::read_to_string(&path).unwrap();
            let switched = text.replace(
                "engine = \"duckdb\"\npath = \"w.duckdb\"",
                "engine = \"postgres\"\nurl = \"postgres://analyst@db.invalid/shop\"",
            );
            assert_ne!(text, switched);
            std::fs::write(path, switched).unwrap();
        }
    }
}

fn publish(root: &Path, out: &Path) {
    let done = run(sqb()
        .arg("--project-dir")
        .arg(root.join("producer"))
        .arg("publish")
        .arg("--out")
        .arg(out));
    assert_eq!(done.status.code(), Some(0), "{}", transcript(&done, root));
}

/// The producer's snapshot, vendored as both the consumer's baseline and its current snapshot.
fn vendor_unchanged(root: &Path, vendor: &Path) {
    publish(root, &vendor.join("baseline.json"));
    std::fs::copy(vendor.join("baseline.json"), vendor.join("current.json")).unwrap();
}

fn compile(root: &Path, format: &str) -> std::process::Output {
    run(sqb().arg("--project-dir").arg(root.join("consumer")).args([
        "--no-cache",
        "compile",
        "--format",
        format,
    ]))
}

fn codes(out: &std::process::Output) -> Vec<String> {
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap().to_string())
        .collect()
}

/// One case on one engine: its codes, and its rendered text.
fn run_case(engine: &str, case: &Case) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    projects(engine, root);
    let vendor = root.join("consumer/vendor/shop");
    vendor_unchanged(root, &vendor);
    let clean = compile(root, "json");
    assert_eq!(
        codes(&clean),
        Vec::<String>::new(),
        "{engine}: {}",
        transcript(&clean, root)
    );
    for e in &case.producer {
        edit(&root.join("producer"), e);
    }
    if !case.producer.is_empty() {
        publish(root, &vendor.join("current.json"));
    }
    for [from, to] in &case.snapshot {
        edit(&vendor, &["current.json".into(), from.clone(), to.clone()]);
    }
    if case.delete_snapshot {
        std::fs::remove_file(vendor.join("current.json")).unwrap();
    }
    for e in &case.consumer {
        edit(&root.join("consumer"), e);
    }
    let json = compile(root, "json");
    let mut found = codes(&json);
    found.sort();
    let mut expected = case.codes.clone();
    expected.sort();
    let text = compile(root, "text");
    assert_eq!(
        found,
        expected,
        "{engine}: {}\n{}",
        case.name,
        transcript(&text, root)
    );
    let diff = run(sqb()
        .arg("--project-dir")
        .arg(root.join("consumer"))
        .args(["imports", "diff"]));
    let consumer = root.join("consumer");
    without_hashes(&format!(
        "{}\n--- sqb imports diff\n{}",
        transcript(&text, &consumer),
        transcript(&diff, &consumer)
    ))
}

/// `text` with each SHA-256 (64 hex digits) as `<hash>`: a snapshot's hash names its engine.
fn without_hashes(text: &str) -> String {
    let mut out = String::new();
    let mut run = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_hexdigit() {
            run.push(c);
            continue;
        }
        match run.len() {
            64 if run != "0".repeat(64) => out.push_str("<hash>"),
            _ => out.push_str(&run),
        }
        run.clear();
        out.push(c);
    }
    out.pop();
    out
}

#[test]
fn producer_changes_reach_the_consumers_compile() {
    for case in cases() {
        let duckdb = run_case("duckdb", &case);
        let postgres = run_case("postgres", &case);
        assert_eq!(duckdb, postgres, "{}: the dialects disagree", case.name);
        insta::assert_snapshot!(case.name.clone(), duckdb);
    }
}

/// `publish` writes the same bytes every time, whatever order the files are found in, and
/// `--check` says whether a committed snapshot is current.
#[test]
fn publish_is_canonical_and_checkable() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    projects("duckdb", root);
    let (a, b) = (root.join("a.json"), root.join("b.json"));
    publish(root, &a);
    // The same project with its files written in another order (and so found in another).
    let producer = root.join("producer");
    let again = root.join("again");
    std::fs::create_dir_all(again.join("models")).unwrap();
    let mut files: Vec<_> = std::fs::read_dir(producer.join("models"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files.reverse();
    for f in files {
        std::fs::copy(&f, again.join("models").join(f.file_name().unwrap())).unwrap();
    }
    std::fs::copy(producer.join("sqb.toml"), again.join("sqb.toml")).unwrap();
    let done = run(sqb()
        .arg("--project-dir")
        .arg(&again)
        .arg("publish")
        .arg("--out")
        .arg(&b));
    assert_eq!(done.status.code(), Some(0), "{}", transcript(&done, root));
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    let stdout = run(sqb().arg("--project-dir").arg(&producer).arg("publish"));
    assert_eq!(stdout.stdout, std::fs::read(&a).unwrap());

    let check = |file: &Path| {
        run(sqb()
            .arg("--project-dir")
            .arg(&producer)
            .arg("publish")
            .arg("--check")
            .arg(file))
    };
    assert_eq!(check(&a).status.code(), Some(0));
    edit(
        &producer,
        &[
            "models/fct_orders.toml".into(),
            "[columns.quantity]\ntype = \"INTEGER\"".into(),
            "[columns.quantity]\ntype = \"BIGINT\"".into(),
        ],
    );
    edit(
        &producer,
        &[
            "models/fct_orders.sql".into(),
            "CAST(1 AS INTEGER) AS quantity".into(),
            "CAST(1 AS BIGINT) AS quantity".into(),
        ],
    );
    let stale = check(&a);
    assert_eq!(stale.status.code(), Some(1), "{}", transcript(&stale, root));
    assert_eq!(
        std::fs::read(&a).unwrap(),
        std::fs::read(&b).unwrap(),
        "--check writes nothing"
    );
}

/// Publishing what checks nothing is refused, naming every offender.
#[test]
fn publish_refuses_a_snapshot_that_checks_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    projects("duckdb", root);
    let producer = root.join("producer");
    for file in ["models/fct_orders.toml", "models/dim_customers.toml"] {
        edit(
            &producer,
            &[
                file.into(),
                "access = \"public\"".into(),
                "access = \"private\"".into(),
            ],
        );
    }
    let none = run(sqb().arg("--project-dir").arg(&producer).arg("publish"));
    insta::assert_snapshot!(
        "publish_no_public_model",
        expect_exit(&none, 2, "publish", root)
    );
    let untyped = run(sqb()
        .arg("--project-dir")
        .arg(&producer)
        .args(["publish", "--all"]));
    // stg_internal's `id` is proven; make a column neither declared nor proven.
    assert_eq!(
        untyped.status.code(),
        Some(0),
        "{}",
        transcript(&untyped, root)
    );
    std::fs::write(
        producer.join("models/stg_internal.sql"),
        "SELECT id FROM raw.unknown_table\n",
    )
    .unwrap();
    let unresolved = run(sqb()
        .arg("--project-dir")
        .arg(&producer)
        .args(["publish", "--all"]));
    insta::assert_snapshot!(
        "publish_unresolved_type",
        expect_exit(&unresolved, 2, "publish --all", root)
    );
}

/// The bundled examples: the shop publishes its marts, and examples/reports, which vendors
/// that snapshot, is current with it and compiles clean against it.
#[test]
fn the_examples_publish_and_import() {
    let shop = repo().join("examples/shop");
    let vendored = repo().join("examples/reports/vendor/shop");
    for file in ["current.json", "baseline.json"] {
        let check = run(sqb()
            .arg("--project-dir")
            .arg(&shop)
            .args(["publish", "--target", "prod", "--check"])
            .arg(vendored.join(file)));
        assert_eq!(
            check.status.code(),
            Some(0),
            "regenerate with `sqb publish --target prod --out ../reports/vendor/shop/{file}` in examples/shop: {}",
            transcript(&check, &shop)
        );
    }
    let reports = repo().join("examples/reports");
    let compile = run(sqb().arg("--project-dir").arg(&reports).args([
        "--no-cache",
        "compile",
        "--format",
        "json",
    ]));
    assert_eq!(
        codes(&compile),
        Vec::<String>::new(),
        "{}",
        transcript(&compile, &reports)
    );
    // The shop vendors what the reports read (for `sqb publish --consumers` in scripts/demo).
    let reads = run(sqb()
        .arg("--project-dir")
        .arg(&reports)
        .args(["imports", "reads", "--format", "json"]));
    assert_eq!(
        String::from_utf8_lossy(&reads.stdout),
        std::fs::read_to_string(shop.join("consumers/reports.json")).unwrap(),
        "regenerate with `sqb imports reads --format json --out ../shop/consumers/reports.json` in examples/reports"
    );
}

/// `sqb imports update`: `--check` fails while a baseline is behind, `--dry-run` and a refusal
/// write nothing, and an update makes the baseline the snapshot.
#[test]
fn imports_update_accepts_what_no_model_breaks_on() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    projects("duckdb", root);
    let vendor = root.join("consumer/vendor/shop");
    vendor_unchanged(root, &vendor);
    let update = |args: &[&str]| {
        run(sqb()
            .arg("--project-dir")
            .arg(root.join("consumer"))
            .args(["imports", "update"])
            .args(args))
    };
    let baseline = || std::fs::read(vendor.join("baseline.json")).unwrap();
    assert_eq!(update(&["--check"]).status.code(), Some(0));
    // An unread column dropped: nothing breaks, the update goes through.
    for e in [
        [
            "models/fct_orders.sql",
            ",\n    CAST(1 AS INTEGER) AS quantity",
            "",
        ],
        [
            "models/fct_orders.toml",
            "\n[columns.quantity]\ntype = \"INTEGER\"\n",
            "",
        ],
    ] {
        edit(&root.join("producer"), &e.map(String::from));
    }
    publish(root, &vendor.join("current.json"));
    let before = baseline();
    let check = update(&["--check"]);
    let mut text = expect_exit(&check, 1, "imports update --check", root);
    text.push_str(&expect_exit(
        &update(&["--dry-run"]),
        0,
        "imports update --dry-run",
        root,
    ));
    text.push_str(&expect_exit(
        &update(&["--check", "--format", "json"]),
        1,
        "imports update --check --format json",
        root,
    ));
    assert_eq!(baseline(), before, "--check and --dry-run write nothing");
    text.push_str(&expect_exit(&update(&[]), 0, "imports update", root));
    assert_eq!(
        baseline(),
        std::fs::read(vendor.join("current.json")).unwrap()
    );
    assert_eq!(update(&["--check"]).status.code(), Some(0));
    // A read column dropped: refused until the models are fixed, or forced.
    for e in [
        [
            "models/fct_orders.sql",
            "    CAST(9.99 AS DECIMAL(10,2)) AS amount,\n",
            "",
        ],
        [
            "models/fct_orders.toml",
            "[columns.amount]\ntype = \"NUMERIC(10,2)\"\n\n",
            "",
        ],
    ] {
        edit(&root.join("producer"), &e.map(String::from));
    }
    publish(root, &vendor.join("current.json"));
    let before = baseline();
    text.push_str(&expect_exit(
        &update(&["shop"]),
        2,
        "imports update shop",
        root,
    ));
    assert_eq!(baseline(), before, "a refused update writes nothing");
    text.push_str(&expect_exit(
        &update(&["shop", "--force", "--format", "json"]),
        0,
        "imports update shop --force --format json",
        root,
    ));
    assert_eq!(
        baseline(),
        std::fs::read(vendor.join("current.json")).unwrap()
    );
    text.push_str(&expect_exit(
        &update(&["shoop"]),
        2,
        "imports update shoop",
        root,
    ));
    insta::assert_snapshot!("imports_update", without_hashes(&text));
}

/// `sqb imports diff` in each of its formats and `sqb imports reads` as text and as the reads
/// file, on a producer change that breaks one reader, warns another and reaches no third.
#[test]
fn imports_diff_and_reads_in_every_format() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    projects("duckdb", root);
    let vendor = root.join("consumer/vendor/shop");
    publish(root, &vendor.join("baseline.json"));
    for e in [
        [
            "models/fct_orders.sql",
            "    CAST(9.99 AS DECIMAL(10,2)) AS amount,\n",
            "",
        ],
        [
            "models/fct_orders.toml",
            "[columns.amount]\ntype = \"NUMERIC(10,2)\"\n\n",
            "",
        ],
        [
            "models/fct_orders.sql",
            "CAST(1 AS INTEGER) AS order_id",
            "CAST(1 AS BIGINT) AS order_id",
        ],
        [
            "models/fct_orders.toml",
            "[columns.order_id]\ntype = \"INTEGER\"",
            "[columns.order_id]\ntype = \"BIGINT\"",
        ],
        [
            "models/fct_orders.sql",
            ",\n    CAST(1 AS INTEGER) AS quantity",
            "",
        ],
        [
            "models/fct_orders.toml",
            "\n[columns.quantity]\ntype = \"INTEGER\"\n",
            "",
        ],
    ] {
        edit(&root.join("producer"), &e.map(String::from));
    }
    publish(root, &vendor.join("current.json"));
    let consumer = root.join("consumer");
    let imports = |args: &[&str]| {
        run(sqb()
            .arg("--project-dir")
            .arg(&consumer)
            .arg("imports")
            .args(args))
    };
    let mut text = String::new();
    for format in ["text", "json", "markdown", "junit", "github"] {
        let done = imports(&["diff", "--format", format]);
        text.push_str(&expect_exit(
            &done,
            1,
            &format!("imports diff --format {format}"),
            &consumer,
        ));
    }
    let json: serde_json::Value =
        serde_json::from_slice(&imports(&["diff", "--format", "json"]).stdout).unwrap();
    assert_eq!(json["verdict"], "breaks");
    text.push_str(&expect_exit(
        &imports(&["reads"]),
        0,
        "imports reads",
        &consumer,
    ));
    let out = root.join("reads.json");
    let done = imports(&["reads", "--format", "json", "--out", out.to_str().unwrap()]);
    expect_exit(&done, 0, "imports reads --out", &consumer);
    let file = std::fs::read_to_string(&out).unwrap();
    text.push_str(&format!("--- reads.json\n{file}"));
    let stdout = imports(&["reads", "--format", "json"]);
    assert_eq!(
        String::from_utf8_lossy(&stdout.stdout),
        file,
        "--out writes what stdout gets"
    );
    // An unknown import is an error that names the known ones.
    text.push_str(&expect_exit(
        &imports(&["diff", "shpo"]),
        2,
        "imports diff shpo",
        &consumer,
    ));
    insta::assert_snapshot!(without_hashes(&text));
}

/// `sqb publish --consumers DIR`: the producer learns, before it ships, which consumer models
/// its change breaks, from the reads files the consumers hand it.
#[test]
fn publish_tells_which_consumers_break() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    projects("duckdb", root);
    let vendor = root.join("consumer/vendor/shop");
    vendor_unchanged(root, &vendor);
    let (consumer, producer) = (root.join("consumer"), root.join("producer"));
    let consumers = root.join("consumers");
    std::fs::create_dir(&consumers).unwrap();
    let reads = run(sqb()
        .arg("--project-dir")
        .arg(&consumer)
        .args(["imports", "reads", "--format", "json", "--out"])
        .arg(consumers.join("reports.json")));
    expect_exit(&reads, 0, "imports reads --out", root);
    let published = root.join("published.json");
    publish(root, &published);
    for e in [
        [
            "models/fct_orders.sql",
            "    CAST(9.99 AS DECIMAL(10,2)) AS amount,\n",
            "",
        ],
        [
            "models/fct_orders.toml",
            "[columns.amount]\ntype = \"NUMERIC(10,2)\"\n\n",
            "",
        ],
        [
            "models/fct_orders.sql",
            ",\n    CAST(1 AS INTEGER) AS quantity",
            "",
        ],
        [
            "models/fct_orders.toml",
            "\n[columns.quantity]\ntype = \"INTEGER\"\n",
            "",
        ],
    ] {
        edit(&producer, &e.map(String::from));
    }
    let publish_with = |args: &[&str]| {
        run(sqb()
            .arg("--project-dir")
            .arg(&producer)
            .arg("publish")
            .args(args)
            .current_dir(root))
    };
    let mut text = expect_exit(
        &publish_with(&["--check", "published.json", "--consumers", "consumers"]),
        1,
        "publish --check published.json --consumers consumers",
        root,
    );
    for format in ["json", "markdown", "junit", "github"] {
        let command = publish_with(&[
            "--check",
            "published.json",
            "--consumers",
            "consumers",
            "--format",
            format,
        ]);
        text.push_str(&expect_exit(
            &command,
            1,
            &format!("publish --check published.json --consumers consumers --format {format}"),
            root,
        ));
    }
    text.push_str(&expect_exit(
        &publish_with(&["--format", "json"]),
        2,
        "publish --format json",
        root,
    ));
    let before = std::fs::read(&published).unwrap();
    text.push_str(&expect_exit(
        &publish_with(&["--out", "published.json", "--consumers", "consumers"]),
        1,
        "publish --out published.json --consumers consumers",
        root,
    ));
    assert_ne!(
        std::fs::read(&published).unwrap(),
        before,
        "--out still writes the snapshot"
    );
    // Now the change is the published snapshot: nothing left to report.
    text.push_str(&expect_exit(
        &publish_with(&["--check", "published.json", "--consumers", "consumers"]),
        0,
        "publish --check published.json --consumers consumers (after)",
        root,
    ));
    text.push_str(&expect_exit(
        &publish_with(&["--consumers", "consumers"]),
        2,
        "publish --consumers consumers",
        root,
    ));
    std::fs::write(
        consumers.join("other.json"),
        "{\"format\": \"sqb.snapshot\"}",
    )
    .unwrap();
    text.push_str(&expect_exit(
        &publish_with(&["--check", "published.json", "--consumers", "consumers"]),
        2,
        "publish --check published.json --consumers consumers (a foreign file)",
        root,
    ));
    insta::assert_snapshot!(without_hashes(&text));
}

/// `sqb publish --from prod`: a public model whose SQL proves nothing publishes the types (and
/// NOT NULLs) its relation has in the warehouse, on both engines; without --from it is refused,
/// and a published model the target does not hold is an error.
#[test]
fn publish_reads_undeclared_types_from_the_warehouse() {
    for engine in ["duckdb", "postgres"] {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        projects(engine, root);
        let producer = root.join("producer");
        let fixture = repo().join("testdata/imports/publish_from");
        copy_tree(&fixture.join("models"), &producer.join("models"));
        let warehouse = std::fs::read_to_string(fixture.join("warehouse.sql")).unwrap();
        let db = match engine {
            "duckdb" => {
                duckdb_file(&producer.join("w.duckdb"), &warehouse);
                None
            }
            _ => {
                let Some(db) = TestDb::create("publish_from") else {
                    assert_ne!(
                        std::env::var("CI").as_deref(),
                        Ok("true"),
                        "CI needs Postgres"
                    );
                    continue;
                };
                pg_exec(&db.url, &warehouse);
                edit(
                    &producer,
                    &[
                        "sqb.toml".into(),
                        "postgres://analyst@db.invalid/shop".into(),
                        db.url.clone(),
                    ],
                );
                Some(db)
            }
        };
        let publish_with = |args: &[&str]| {
            run(sqb()
                .arg("--project-dir")
                .arg(&producer)
                .arg("publish")
                .args(args))
        };
        let refused = publish_with(&[]);
        let text = expect_exit(&refused, 2, "publish", &producer);
        assert!(
            text.contains("fct_events.event_id, fct_events.payload"),
            "{engine}: {text}"
        );
        assert!(text.contains("--from TARGET"), "{engine}: {text}");
        let out = root.join("snapshot.json");
        let done = publish_with(&["--from", "prod", "--out", out.to_str().unwrap()]);
        expect_exit(&done, 0, "publish --from prod", &producer);
        let snapshot: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
        let model = |name: &str| {
            snapshot["models"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["name"] == name)
                .unwrap_or_else(|| panic!("{engine}: no {name} in {snapshot}"))
                .clone()
        };
        let events = model("fct_events");
        let columns: Vec<(String, String, bool)> = events["columns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["name"].as_str().unwrap().to_string(),
                    c["canonical_type"].as_str().unwrap().to_string(),
                    c["nullable"].as_bool().unwrap(),
                )
            })
            .collect();
        // DuckDB keeps no declared length on a VARCHAR.
        let payload = if engine == "duckdb" {
            "VARCHAR"
        } else {
            "VARCHAR(200)"
        };
        assert_eq!(
            columns,
            vec![
                ("event_id".to_string(), "BIGINT".to_string(), false),
                ("payload".to_string(), payload.to_string(), true),
            ],
            "{engine}"
        );
        // A declared type is the contract, whatever the warehouse holds.
        let amount = &model("fct_orders")["columns"][2];
        assert_eq!(amount["canonical_type"], "NUMERIC(10,2)", "{engine}");
        let drop = "DROP TABLE analytics.fct_events";
        match &db {
            None => duckdb_file(&producer.join("w.duckdb"), drop),
            Some(db) => pg_exec(&db.url, drop),
        }
        let absent = publish_with(&["--from", "prod"]);
        let text = expect_exit(
            &absent,
            2,
            "publish --from prod (a relation missing)",
            &producer,
        );
        assert!(
            text.contains("holds no relation for 1 model: fct_events"),
            "{engine}: {text}"
        );
    }
}

/// `sqb imports verify --from prod`: the vendored snapshot agrees with the warehouse the
/// producer built, then each drift (a dropped column, a retyped one, a missing relation) is
/// a `contract diff` finding; an unreachable warehouse is exit 2.
#[test]
fn imports_verify_checks_the_snapshot_against_the_warehouse() {
    let fixture = repo().join("testdata/imports/publish_from");
    let warehouse = std::fs::read_to_string(fixture.join("warehouse.sql")).unwrap();
    let drift = std::fs::read_to_string(fixture.join("drift.sql")).unwrap();
    let mut kinds_by_engine = Vec::new();
    for engine in ["duckdb", "postgres"] {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        projects(engine, root);
        let consumer = root.join("consumer");
        let vendor = consumer.join("vendor/shop");
        vendor_unchanged(root, &vendor);
        let verify = |args: &[&str]| {
            run(sqb()
                .arg("--project-dir")
                .arg(&consumer)
                .args(["imports", "verify", "--from", "prod"])
                .args(args))
        };
        let exec: Box<dyn Fn(&str)> = match engine {
            "duckdb" => {
                let path = consumer.join("w.duckdb");
                Box::new(move |sql| duckdb_file(&path, sql))
            }
            _ => {
                let unreachable = verify(&["--connect-timeout", "2"]);
                expect_exit(&unreachable, 2, "imports verify (unreachable)", &consumer);
                let Some(db) = TestDb::create("imports_verify") else {
                    assert_ne!(
                        std::env::var("CI").as_deref(),
                        Ok("true"),
                        "CI needs Postgres"
                    );
                    continue;
                };
                edit(
                    &consumer,
                    &[
                        "sqb.toml".into(),
                        "postgres://analyst@db.invalid/shop".into(),
                        db.url.clone(),
                    ],
                );
                Box::new(move |sql| pg_exec(&db.url, sql))
            }
        };
        exec(&warehouse);
        let clean = verify(&[]);
        let clean_text = expect_exit(&clean, 0, "imports verify --from prod", &consumer);
        exec(&drift);
        let drifted = verify(&[]);
        let text = expect_exit(
            &drifted,
            1,
            "imports verify --from prod (drifted)",
            &consumer,
        );
        let json = verify(&["--format", "json"]);
        let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
        let kinds: Vec<(String, String, String)> = report["resources"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|r| {
                let name = r["resource_name"].as_str().unwrap().to_string();
                r["findings"].as_array().unwrap().iter().map(move |f| {
                    (
                        name.clone(),
                        f["kind"].as_str().unwrap().to_string(),
                        f["column"].as_str().unwrap_or("-").to_string(),
                    )
                })
            })
            .filter(|(_, kind, _)| kind != "undeclared_physical_column")
            .collect();
        kinds_by_engine.push(kinds);
        if engine == "duckdb" {
            insta::assert_snapshot!(format!("{clean_text}{text}"));
        }
    }
    if let [duckdb, postgres] = kinds_by_engine.as_slice() {
        assert_eq!(duckdb, postgres, "the engines disagree");
    }
    assert_eq!(
        kinds_by_engine[0],
        vec![
            (
                "shop.dim_customers".into(),
                "relation_missing".into(),
                "-".into()
            ),
            (
                "shop.fct_orders".into(),
                "type_mismatch".into(),
                "order_id".into()
            ),
            (
                "shop.fct_orders".into(),
                "missing_physical_column".into(),
                "amount".into()
            ),
        ]
    );
}

/// Imported models are nodes of the DAG: `import:shop.dim_customers+` selects the models that
/// read it (here in `contract diff`), `import:shop` alone selects nothing a command acts on.
#[test]
fn graph_selectors_reach_imported_models() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    projects("duckdb", root);
    let vendor = root.join("consumer/vendor/shop");
    vendor_unchanged(root, &vendor);
    let consumer = root.join("consumer");
    duckdb_file(&consumer.join("w.duckdb"), "CREATE SCHEMA reports");
    let diff = |selector: &str| {
        run(sqb().arg("--project-dir").arg(&consumer).args([
            "contract", "diff", "--from", "prod", "--format", "json", "-s", selector,
        ]))
    };
    let selected = |selector: &str| -> Vec<String> {
        let out = diff(selector);
        let report: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("{}", transcript(&out, &consumer)));
        report["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["resource_name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        selected("import:shop.dim_customers+1"),
        ["all_customers", "orders_report"]
    );
    // noted_orders reads orders_report, which reads dim_customers.
    assert_eq!(
        selected("import:shop.dim_customers+"),
        ["all_customers", "noted_orders", "orders_report"]
    );
    assert_eq!(
        selected("import:shop.fct_*+1"),
        ["noted_orders", "orders_report"]
    );
    // An ancestor that is an imported model is not a resource: only the model itself.
    assert_eq!(selected("+noted_orders"), ["noted_orders", "orders_report"]);
    let mut text = expect_exit(
        &diff("import:shop"),
        2,
        "contract diff -s import:shop",
        &consumer,
    );
    text.push_str(&expect_exit(
        &diff("import:shpo+"),
        2,
        "contract diff -s import:shpo+",
        &consumer,
    ));
    insta::assert_snapshot!(text);
}

/// A new import has no baseline yet: compile says so (E035) and what makes it, the commands
/// that need one refuse, and `imports update` takes the snapshot as the first baseline, after
/// which the project compiles.
#[test]
fn the_first_update_writes_the_first_baseline() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    projects("duckdb", root);
    let vendor = root.join("consumer/vendor/shop");
    publish(root, &vendor.join("current.json"));
    let _ = std::fs::remove_file(vendor.join("baseline.json"));
    let consumer = |args: &[&str]| {
        run(sqb()
            .arg("--project-dir")
            .arg(root.join("consumer"))
            .args(args))
    };

    let compiled = compile(root, "text");
    let text = transcript(&compiled, root);
    assert_eq!(compiled.status.code(), Some(1), "{text}");
    assert!(
        text.contains("E035")
            && text.contains("`sqb imports update shop` takes the snapshot as the first one"),
        "{text}"
    );
    assert_eq!(consumer(&["imports", "diff"]).status.code(), Some(2));

    let update = consumer(&["imports", "update"]);
    let shown = transcript(&update, root);
    assert_eq!(update.status.code(), Some(0), "{shown}");
    assert!(
        shown.contains("shop: accepted") && shown.contains("no baseline yet"),
        "{shown}"
    );
    assert_eq!(
        std::fs::read(vendor.join("baseline.json")).unwrap(),
        std::fs::read(vendor.join("current.json")).unwrap()
    );
    let after = compile(root, "text");
    assert_eq!(after.status.code(), Some(0), "{}", transcript(&after, root));
}
