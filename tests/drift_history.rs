//! `contract diff --history FILE` and `sqb drift report`: nightly runs against a real DuckDB
//! file and a real PostgreSQL server append to an embedded DuckDB history; the report's
//! first-seen, open and resolved dates follow the drift; concurrent runs both land; a file that
//! is not a history (or is from a newer sqb, or is held by another process) is refused, left
//! as it was, and never costs the run its report.

mod common;

use std::path::Path;

use common::*;

/// `sqb contract diff --from prod ARGS` in `root` at UTC time `now`.
fn diff_at(root: &Path, url: Option<&str>, now: &str, args: &[&str]) -> std::process::Output {
    let mut cmd = sqb();
    cmd.current_dir(root)
        .env("SQB_NOW", now)
        .args(["contract", "diff", "--from", "prod"])
        .args(args);
    if let Some(url) = url {
        cmd.env("SQB_DATABASE_URL", url);
    }
    run(&mut cmd)
}

fn drift_report(root: &Path, args: &[&str]) -> std::process::Output {
    run(sqb()
        .current_dir(root)
        .args(["drift", "report", "--history", "drift.duckdb"])
        .args(args))
}

fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// (kind, column) → (first seen, runs open) of the report's open findings.
fn open_findings(report: &serde_json::Value) -> Vec<(String, String, String, u64)> {
    report["open"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["kind"].as_str().unwrap().to_string(),
                o["column"].as_str().unwrap_or("-").to_string(),
                o["first_seen"].as_str().unwrap().to_string(),
                o["runs_open"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Three nights: the every-finding-kind warehouse; then `amount` fixed and `flag` (DuckDB) or
/// `code` (Postgres) drifted; then nothing changed.
fn three_nights(engine: &str, root: &Path, url: Option<&str>, night2: &dyn Fn()) -> String {
    let mut text = String::new();
    let nights = [
        "2026-11-01 02:00:00",
        "2026-11-02 02:00:00",
        "2026-11-03 02:00:00",
    ];
    for (i, now) in nights.iter().enumerate() {
        if i == 1 {
            night2();
        }
        let out = diff_at(
            root,
            url,
            now,
            &["--history", "drift.duckdb", "-o", "drift.json"],
        );
        text.push_str(&expect_exit(
            &out,
            1,
            &format!("contract diff --from prod --history drift.duckdb -o drift.json  # {now}"),
            root,
        ));
        assert!(
            root.join("drift.json").is_file(),
            "{engine}: the report is written"
        );
    }
    let report = json(&drift_report(root, &["--format", "json"]));
    let drifted = if engine == "duckdb" { "flag" } else { "code" };
    let open = open_findings(&report);
    assert!(
        open.contains(&("type_mismatch".into(), drifted.into(), nights[1].into(), 2)),
        "{engine}: {open:?}"
    );
    assert!(
        open.contains(&(
            "missing_physical_column".into(),
            "gone".into(),
            nights[0].into(),
            3
        )),
        "{engine}: {open:?}"
    );
    let resolved = &report["resolved"][0];
    assert_eq!(resolved["column"], "amount", "{engine}");
    assert_eq!(resolved["first_seen"], nights[0], "{engine}");
    assert_eq!(resolved["resolved_at"], nights[1], "{engine}");
    assert_eq!(report["runs"], 3);
    assert_eq!(report["days"].as_array().unwrap().len(), 3);
    for format in ["text", "markdown"] {
        text.push_str(&expect_exit(
            &drift_report(root, &["--format", format]),
            0,
            &format!("drift report --history drift.duckdb --format {format}"),
            root,
        ));
    }
    text.push_str(&expect_exit(
        &drift_report(root, &["--since", "2026-11-02"]),
        0,
        "drift report --history drift.duckdb --since 2026-11-02",
        root,
    ));
    text.push_str(&expect_exit(
        &drift_report(root, &["--since", "lately"]),
        2,
        "drift report --history drift.duckdb --since lately",
        root,
    ));
    text
}

#[test]
fn nightly_runs_on_duckdb() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let case = repo().join("testdata/diff/every_finding_kind");
    case_project(&case, "duckdb", root);
    let file = root.join("w.duckdb");
    duckdb_file(&file, &case_warehouse(&case, "duckdb").unwrap());
    let text = three_nights("duckdb", root, None, &|| {
        duckdb_file(
            &file,
            "ALTER TABLE analytics.orders ALTER COLUMN amount TYPE INTEGER;\n\
             ALTER TABLE analytics.orders ALTER COLUMN flag TYPE INTEGER;",
        )
    });
    insta::assert_snapshot!(text);
}

#[test]
fn nightly_runs_on_postgres() {
    let Some(db) = TestDb::create("drift_history") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let case = repo().join("testdata/diff/every_finding_kind");
    case_project(&case, "postgres", root);
    pg_exec(&db.url, &case_warehouse(&case, "postgres").unwrap());
    let text = three_nights("postgres", root, Some(&db.url), &|| {
        pg_exec(
            &db.url,
            "ALTER TABLE analytics.orders ALTER COLUMN amount TYPE INTEGER;\n\
             ALTER TABLE analytics.orders ALTER COLUMN code TYPE VARCHAR(5);",
        )
    });
    insta::assert_snapshot!(text.replace(&db.name, "[DB]"));
}

fn kinds_on_duckdb(root: &Path) {
    let case = repo().join("testdata/diff/every_finding_kind");
    case_project(&case, "duckdb", root);
    duckdb_file(
        &root.join("w.duckdb"),
        &case_warehouse(&case, "duckdb").unwrap(),
    );
}

/// Four runs at once all land, each in its own run.
#[test]
fn concurrent_runs_all_land() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    kinds_on_duckdb(root);
    let children: Vec<_> = (0..4)
        .map(|i| {
            sqb()
                .current_dir(root)
                .env("SQB_NOW", format!("2026-11-0{} 02:00:00", i + 1))
                .args(["-q", "contract", "diff", "--from", "prod"])
                .args(["--history", "drift.duckdb", "-o"])
                .arg(format!("r{i}.json"))
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let report = json(&drift_report(root, &["--format", "json"]));
    assert_eq!(report["runs"], 4, "{report:#}");
    assert_eq!(report["days"].as_array().unwrap().len(), 4);
}

/// A history that cannot be written fails the run (exit 2) after its report is written, and is
/// left byte for byte as it was.
#[test]
fn a_file_that_is_not_a_history_is_refused_and_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    kinds_on_duckdb(root);
    let mut text = String::new();
    let mut refused = |name: &str, what: &str| {
        let before = std::fs::read(root.join(name)).unwrap();
        let _ = std::fs::remove_file(root.join("drift.json"));
        let out = diff_at(
            root,
            None,
            "2026-11-01 02:00:00",
            &["--history", name, "-o", "drift.json"],
        );
        text.push_str(&expect_exit(
            &out,
            2,
            &format!("contract diff --from prod --history {name} -o drift.json  # {what}"),
            root,
        ));
        assert!(
            root.join("drift.json").is_file(),
            "{what}: the report is written first"
        );
        assert_eq!(
            std::fs::read(root.join(name)).unwrap(),
            before,
            "{what}: untouched"
        );
        let report = run(sqb()
            .current_dir(root)
            .args(["drift", "report", "--history", name]));
        text.push_str(&expect_exit(
            &report,
            2,
            &format!("drift report --history {name}"),
            root,
        ));
    };
    std::fs::write(root.join("notes.txt"), "not a database\n").unwrap();
    refused("notes.txt", "a text file");
    duckdb_file(&root.join("theirs.duckdb"), "CREATE TABLE t (x INTEGER);");
    refused("theirs.duckdb", "someone else's DuckDB database");
    let first = diff_at(
        root,
        None,
        "2026-11-01 02:00:00",
        &["--history", "newer.duckdb", "-o", "drift.json"],
    );
    assert_eq!(first.status.code(), Some(1), "{}", transcript(&first, root));
    duckdb_file(
        &root.join("newer.duckdb"),
        "UPDATE sqb_history SET value = '99' WHERE key = 'schema_version';",
    );
    refused("newer.duckdb", "a history of a newer sqb");
    text.push_str(&expect_exit(
        &drift_report(root, &[]),
        2,
        "drift report --history drift.duckdb  # no such file",
        root,
    ));
    insta::assert_snapshot!(text);
}

/// A history another process holds is waited for, then refused with the reason.
#[test]
fn a_held_history_times_out_clearly() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    kinds_on_duckdb(root);
    let first = diff_at(
        root,
        None,
        "2026-11-01 02:00:00",
        &["--history", "drift.duckdb", "-o", "drift.json"],
    );
    assert_eq!(first.status.code(), Some(1), "{}", transcript(&first, root));
    let held = duckdb::Connection::open(root.join("drift.duckdb")).unwrap();
    let out = diff_at(
        root,
        None,
        "2026-11-02 02:00:00",
        &[
            "--history",
            "drift.duckdb",
            "--history-timeout",
            "1",
            "-o",
            "drift2.json",
        ],
    );
    drop(held);
    let text = expect_exit(
        &out,
        2,
        "contract diff --history drift.duckdb --history-timeout 1",
        root,
    );
    assert!(root.join("drift2.json").is_file());
    assert!(text.contains("timed out after 1 s"), "{text}");
    let report = json(&drift_report(root, &["--format", "json"]));
    assert_eq!(report["runs"], 1);
}

/// Runs of two targets need --target.
#[test]
fn a_history_of_several_targets_needs_a_target() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    kinds_on_duckdb(root);
    let toml = std::fs::read_to_string(root.join("sqb.toml")).unwrap();
    std::fs::write(
        root.join("sqb.toml"),
        format!("{toml}\n[targets.other]\nschema = \"analytics\"\n"),
    )
    .unwrap();
    for target in ["prod", "other"] {
        let out = run(sqb().current_dir(root).args([
            "contract",
            "diff",
            "--from",
            target,
            "--history",
            "drift.duckdb",
        ]));
        assert_eq!(out.status.code(), Some(1), "{}", transcript(&out, root));
    }
    let text = expect_exit(&drift_report(root, &[]), 2, "drift report", root);
    assert!(text.contains("several targets: other, prod"), "{text}");
    let report = json(&drift_report(
        root,
        &["--target", "other", "--format", "json"],
    ));
    assert_eq!(report["runs"], 1);
    assert_eq!(report["target"], "other");
}

/// Debian's Chromium, which scripts/test installs; required with CI=true.
fn chromium() -> Option<std::path::PathBuf> {
    let found = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .map(std::path::PathBuf::from)
        .find(|p| p.is_file());
    if found.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "Chromium is not installed and CI=true: the HTML report must be tested in a browser"
        );
        eprintln!("skipped: no Chromium (run scripts/test)");
    }
    found
}

/// The HTML report in a real headless Chromium: the page renders its chart and tables, its
/// script runs (the tables sort), and it makes no request at all (the browser's network log
/// names no URL but the page's own file).
#[test]
fn html_report_renders_offline_in_a_browser() {
    let Some(browser) = chromium() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    kinds_on_duckdb(root);
    for night in ["2026-11-01 02:00:00", "2026-11-02 02:00:00"] {
        let out = diff_at(root, None, night, &["--history", "drift.duckdb"]);
        assert_eq!(out.status.code(), Some(1), "{}", transcript(&out, root));
    }
    let page = root.join("drift.html");
    let out = drift_report(root, &["--format", "html", "-o", "drift.html"]);
    assert_eq!(out.status.code(), Some(0), "{}", transcript(&out, root));
    let report = json(&drift_report(root, &["--format", "json"]));
    // The check can fail: a page with an image from the network is caught.
    let control = root.join("control.html");
    std::fs::write(
        &control,
        "<html><body><img src=\"http://127.0.0.1:9/x.png\"></body></html>",
    )
    .unwrap();
    let (_, requests) = load(&browser, &control, root);
    assert_eq!(requests, ["http://127.0.0.1:9/x.png"]);
    let (dom, requests) = load(&browser, &page, root);
    assert!(requests.is_empty(), "the page made requests: {requests:?}");
    assert!(
        dom.contains("data-ready=\"sortable\""),
        "the script ran:\n{dom}"
    );
    assert!(dom.contains("<svg id=\"trend\""), "{dom}");
    let bars = dom.matches("<rect class=").count();
    assert!(bars >= 2, "a bar per day and severity: {bars}\n{dom}");
    let table = |id: &str| {
        let start = dom.find(&format!("<table id=\"{id}\"")).unwrap();
        let end = start + dom[start..].find("</table>").unwrap();
        dom[start..end].matches("<tr>").count() - 1
    };
    assert_eq!(table("open"), report["open"].as_array().unwrap().len());
    assert_eq!(table("days"), 2);
}

/// Loads `page` in headless Chromium: its DOM after its scripts ran, and every URL the page
/// itself requested, from the browser's network log (the browser's own background requests
/// have no initiating origin; a page's have one, `null` for a file).
fn load(browser: &Path, page: &Path, root: &Path) -> (String, Vec<String>) {
    let netlog = root.join("netlog.json");
    let profile = tempfile::tempdir_in(root).unwrap();
    let out = std::process::Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--log-net-log={}", netlog.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&netlog).unwrap()).unwrap();
    let start = &log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"];
    let mut urls: Vec<String> = log["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| &e["type"] == start)
        .map(|e| &e["params"])
        .filter(|p| p["initiator"] != "not an origin")
        .filter_map(|p| p["url"].as_str())
        .filter(|u| !u.starts_with("file://"))
        .map(str::to_string)
        .collect();
    urls.dedup();
    (String::from_utf8_lossy(&out.stdout).into_owned(), urls)
}

#[test]
fn a_clean_night_is_a_day_of_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    copy_tree(&repo().join("examples/shop"), root);
    let _ = std::fs::remove_file(root.join("warehouse.duckdb"));
    duckdb_file(&root.join("warehouse.duckdb"), &shop_migrations());
    for now in ["2026-11-01 02:00:00", "2026-11-02 02:00:00"] {
        // The marts agree with prod to the column: the run finds nothing at all.
        let selected = ["-s", "fct_orders", "-s", "dim_customers"];
        let out = diff_at(
            root,
            None,
            now,
            &[&["--history", "drift.duckdb"][..], &selected].concat(),
        );
        expect_exit(
            &out,
            0,
            "contract diff --from prod --history drift.duckdb",
            root,
        );
    }
    let report = json(&drift_report(root, &["--format", "json"]));
    assert_eq!(report["runs"], 2);
    let days: Vec<(String, u64)> = report["days"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let total = ["errors", "warnings", "infos"]
                .iter()
                .map(|k| d[k].as_u64().unwrap())
                .sum();
            (d["date"].as_str().unwrap().to_string(), total)
        })
        .collect();
    assert_eq!(
        days,
        [("2026-11-01".to_string(), 0), ("2026-11-02".to_string(), 0)]
    );
    let text = drift_report(root, &[]);
    assert!(String::from_utf8_lossy(&text.stdout).contains("2026-11-02"));
}

/// `sqb audit --history FILE` at UTC time `now`, in testdata/audit's project at `root`.
fn audit_at(root: &Path, now: &str) -> std::process::Output {
    run(sqb()
        .current_dir(root)
        .env("SQB_NOW", now)
        .args(["audit", "--history", "drift.duckdb"]))
}

/// (kind, resource, audit, column, first seen, last seen or resolved at, runs open) of a
/// report's open (`open`) or resolved (`resolved`) findings made by `sqb audit`.
fn audit_tracks(report: &serde_json::Value, list: &str) -> Vec<[String; 6]> {
    report[list]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["command"] == "audit")
        .map(|f| {
            let text = |k: &str| f[k].as_str().unwrap_or("-").to_string();
            let when = if list == "open" {
                format!("{} in {}", text("last_seen"), f["runs_open"])
            } else {
                text("resolved_at")
            };
            [
                text("kind"),
                text("resource_name"),
                text("audit"),
                text("column"),
                text("first_seen"),
                when,
            ]
        })
        .collect()
}

fn track(fields: [&str; 6]) -> [String; 6] {
    fields.map(str::to_string)
}

/// Audits in the history: a duplicate key is tracked from the night it appeared to the night it
/// was fixed, and a `contract diff` run between two audit runs opens or resolves none of the
/// audits' findings (nor an audit run the diff's).
#[test]
fn audit_runs_show_when_a_duplicate_key_appeared_and_when_it_was_fixed() {
    let case = repo().join("testdata/audit");
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    case_project(&case, "duckdb", root);
    let db = root.join("w.duckdb");
    duckdb_file(&db, &case_warehouse(&case, "duckdb").unwrap());
    // A column the source does not declare: a finding of `contract diff` across the nights.
    duckdb_file(&db, "ALTER TABLE shop.customers ADD COLUMN phone VARCHAR;");
    let mut text = String::new();
    let nights = ["2026-11-01", "2026-11-02", "2026-11-03"];
    for (i, night) in nights.iter().enumerate() {
        match i {
            // The duplicate customer id is fixed, and a duplicate order id appears.
            1 => duckdb_file(
                &db,
                "DELETE FROM shop.customers WHERE email = 'bob2@example.com';
                 INSERT INTO shop.orders VALUES (1, 1, 'placed', 10.00, 'web', NULL);",
            ),
            // The duplicate order id is fixed.
            2 => duckdb_file(
                &db,
                "DELETE FROM shop.orders WHERE rowid = (SELECT max(rowid) FROM shop.orders WHERE id = 1);",
            ),
            _ => {}
        }
        let at = format!("{night} 02:00:00");
        let out = audit_at(root, &at);
        let shown = expect_exit(
            &out,
            1,
            &format!("audit --history drift.duckdb  # {at}"),
            root,
        );
        if i == 0 {
            // The dates the warehouse SQL plants three and five days before today.
            let today = chrono::Utc::now().date_naive();
            let ago = |n: u64| {
                (today - chrono::Days::new(n))
                    .format("%Y-%m-%d")
                    .to_string()
            };
            let shown = shown.replace(&ago(3), "[3 DAYS AGO]");
            text.push_str(&shown.replace(&ago(5), "[5 DAYS AGO]"));
        }
        let diff = diff_at(
            root,
            None,
            &format!("{night} 02:30:00"),
            &["--history", "drift.duckdb", "-o", "drift.json"],
        );
        expect_exit(&diff, 1, "contract diff --history drift.duckdb", root);
    }
    let report = json(&drift_report(root, &["--format", "json"]));
    assert_eq!(report["runs"], 6);
    assert_eq!(
        report["runs_by_command"],
        serde_json::json!({"audit": 3, "contract diff": 3})
    );
    let resolved = audit_tracks(&report, "resolved");
    for fixed in [
        // The duplicate customer id: open the first night, fixed the second.
        [
            "audit_failed",
            "customers",
            "unique",
            "id",
            "2026-11-01 02:00:00",
            "2026-11-02 02:00:00",
        ],
        // The duplicate order id: appeared the second night, fixed the third.
        [
            "audit_failed",
            "orders",
            "unique",
            "id",
            "2026-11-02 02:00:00",
            "2026-11-03 02:00:00",
        ],
    ] {
        assert!(resolved.contains(&track(fixed)), "{resolved:#?}");
    }
    let open = audit_tracks(&report, "open");
    for kept in [
        // A null key all along, an error.
        [
            "audit_failed",
            "customers",
            "not_null",
            "id",
            "2026-11-01 02:00:00",
            "2026-11-03 02:00:00 in 3",
        ],
        // A warn-severity audit's finding is a warning.
        [
            "audit_failed",
            "orders",
            "expression",
            "amount",
            "2026-11-01 02:00:00",
            "2026-11-03 02:00:00 in 3",
        ],
    ] {
        assert!(open.contains(&track(kept)), "{open:#?}");
    }
    let severities = |audit: &str, column: &str| -> Vec<String> {
        let mut found: Vec<String> = report["open"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["audit"] == audit && f["column"] == column)
            .map(|f| f["severity"].as_str().unwrap().to_string())
            .collect();
        found.sort();
        found
    };
    // `amount < 900` warns; `<> 13.5` (dbt_utils.expression_is_true) fails.
    assert_eq!(severities("expression", "amount"), ["error", "warning"]);
    assert_eq!(severities("not_null", "id"), ["error"]);
    // The diff's own finding stays open through every audit run, and has no audit.
    let diff_open: Vec<&serde_json::Value> = report["open"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["command"] == "contract diff")
        .collect();
    assert!(
        diff_open
            .iter()
            .any(|f| f["kind"] == "undeclared_physical_column"
                && f["runs_open"] == 3
                && f["audit"].is_null()),
        "{diff_open:#?}"
    );
    // Each day counts each command's last run of the day: the audits' findings are there.
    let first_day = &report["days"][0];
    assert!(
        first_day["by_kind"]["audit_failed"].as_u64().unwrap() >= 19,
        "{first_day}"
    );
    assert!(
        first_day["by_kind"]["undeclared_physical_column"]
            .as_u64()
            .unwrap()
            >= 1,
        "{first_day}"
    );
    text.push_str(&expect_exit(
        &drift_report(root, &[]),
        0,
        "drift report --history drift.duckdb",
        root,
    ));
    insta::assert_snapshot!(text);
}

/// A history of schema 1 (written before audits were kept) is read as it is, and migrated to
/// schema 2 in the transaction of the first run that appends to it; its runs stay `contract
/// diff`s, and an audit run after them resolves none of their findings.
#[test]
fn a_history_of_schema_1_is_read_and_then_migrated() {
    let case = repo().join("testdata/audit");
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    case_project(&case, "duckdb", root);
    duckdb_file(
        &root.join("w.duckdb"),
        &case_warehouse(&case, "duckdb").unwrap(),
    );
    let v1 = std::fs::read_to_string(repo().join("testdata/history/v1.sql")).unwrap();
    duckdb_file(&root.join("drift.duckdb"), &v1);
    let before = json(&drift_report(root, &["--format", "json"]));
    assert_eq!(
        before["runs_by_command"],
        serde_json::json!({"contract diff": 1})
    );
    assert_eq!(before["open"][0]["kind"], "type_mismatch");
    assert_eq!(before["open"][0]["command"], "contract diff");
    let out = audit_at(root, "2026-11-01 02:00:00");
    expect_exit(&out, 1, "audit --history drift.duckdb", root);
    let conn = duckdb::Connection::open(root.join("drift.duckdb")).unwrap();
    let version: String = conn
        .query_row(
            "SELECT value FROM sqb_history WHERE key = 'schema_version'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(version, "2");
    let commands: Vec<(i64, String)> = conn
        .prepare("SELECT run_id, command FROM runs ORDER BY run_id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(commands, [(1, "contract diff".into()), (2, "audit".into())]);
    drop(conn);
    let after = json(&drift_report(root, &["--format", "json"]));
    let open: Vec<(&str, &str)> = after["open"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["command"].as_str().unwrap(), f["kind"].as_str().unwrap()))
        .collect();
    assert!(
        open.contains(&("contract diff", "type_mismatch")),
        "{open:?}"
    );
    assert!(open.contains(&("audit", "audit_failed")), "{open:?}");
    assert_eq!(after["resolved"], serde_json::json!([]));
}

/// An audit that could not run is in the history too, as `audit_not_run` (an error), a finding
/// of its own: the run still exits 2, after its report and its history are written.
#[test]
fn an_audit_that_could_not_run_is_a_finding_of_its_own() {
    let case = repo().join("testdata/audit");
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    case_project(&case, "duckdb", root);
    let sql = case_warehouse(&case, "duckdb").unwrap().replace(
        "CREATE VIEW analytics.order_amounts",
        "CREATE VIEW analytics.other_name",
    );
    duckdb_file(&root.join("w.duckdb"), &sql);
    let out = audit_at(root, "2026-11-01 02:00:00");
    expect_exit(&out, 2, "audit --history drift.duckdb", root);
    let report = json(&drift_report(root, &["--format", "json"]));
    let not_run: Vec<(String, String)> = report["open"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "audit_not_run")
        .map(|f| {
            assert_eq!(f["severity"], "error", "{f}");
            assert!(
                f["message"].as_str().unwrap().contains("could not run"),
                "{f}"
            );
            (
                f["resource_name"].as_str().unwrap().to_string(),
                f["audit"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(not_run.len(), 4, "{not_run:?}");
    assert!(
        not_run.iter().all(|(r, _)| r == "order_amounts"),
        "{not_run:?}"
    );
    // The other relations' audits ran, and their failures are there beside them.
    assert!(report["open"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["kind"] == "audit_failed" && f["resource_name"] == "customers"));
}

/// What is no regular file where the history goes (a directory, a device, a FIFO nobody
/// writes to) is refused at once, for both commands that write it and for the report: never a
/// wait, never a write.
#[cfg(unix)]
#[test]
fn a_history_path_that_is_no_regular_file_is_refused_at_once() {
    let case = repo().join("testdata/audit");
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    case_project(&case, "duckdb", root);
    duckdb_file(
        &root.join("w.duckdb"),
        &case_warehouse(&case, "duckdb").unwrap(),
    );
    let fifo = root.join("h.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    std::fs::create_dir(root.join("dir")).unwrap();
    for path in ["h.fifo", "dir", "/dev/null"] {
        for args in [
            vec!["audit", "--history", path],
            vec!["contract", "diff", "--from", "prod", "--history", path],
            vec!["drift", "report", "--history", path],
        ] {
            let out = run(sqb().current_dir(root).args(&args));
            let shown = transcript(&out, root);
            assert_eq!(out.status.code(), Some(2), "{args:?}\n{shown}");
            assert!(
                shown.contains("is not a drift history: it is not a regular file"),
                "{args:?}\n{shown}"
            );
        }
    }
}
