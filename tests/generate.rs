//! `sqb contract generate` end to end: golden project trees for additive and overwrite runs,
//! the safety rules, the write transaction (recompile failure, crashes at every step, Ctrl-C,
//! a concurrent writer), and round trips through `contract diff` on DuckDB and PostgreSQL.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::*;

fn golden() -> PathBuf {
    repo().join("testdata/generate/golden")
}

/// Every project file under `root` (the warehouse and `.sqb/` left out), by relative path.
fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .filter_entry(|e| e.file_name() != ".sqb")
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_file())
        .filter(|e| !e.file_name().to_string_lossy().starts_with("w.duckdb"))
        .map(|e| {
            let rel = e
                .path()
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (rel, std::fs::read(e.path()).unwrap())
        })
        .collect()
}

/// A copy of the golden `before/` tree with its DuckDB warehouse built.
fn golden_project() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(&golden().join("before"), tmp.path());
    let sql = std::fs::read_to_string(golden().join("warehouse.sql")).unwrap();
    duckdb_file(&tmp.path().join("w.duckdb"), &sql);
    tmp
}

fn generate(root: &Path, args: &[&str]) -> std::process::Output {
    run(sqb()
        .arg("--project-dir")
        .arg(root)
        .args(["contract", "generate", "--from", "prod"])
        .args(args))
}

/// Compares `root` with the expected tree; SQB_BLESS=1 rewrites the expected tree instead.
fn assert_tree(root: &Path, expected_dir: &Path) {
    let actual = tree(root);
    if std::env::var("SQB_BLESS").as_deref() == Ok("1") {
        let _ = std::fs::remove_dir_all(expected_dir);
        for (rel, bytes) in &actual {
            let path = expected_dir.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
        return;
    }
    let expected = tree(expected_dir);
    assert_eq!(
        actual.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>(),
        "file lists differ"
    );
    for (rel, bytes) in &actual {
        assert!(
            bytes == &expected[rel],
            "{rel} differs from {}:\n{}",
            expected_dir.join(rel).display(),
            String::from_utf8_lossy(bytes)
        );
    }
}

#[test]
fn preview_changes_nothing_and_shows_diffs() {
    let tmp = golden_project();
    let before = tree(tmp.path());
    let out = generate(tmp.path(), &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        transcript(&out, tmp.path())
    );
    assert_eq!(tree(tmp.path()), before);
    insta::assert_snapshot!("golden_preview", transcript(&out, tmp.path()));
    let json = generate(tmp.path(), &["--format", "json", "--overwrite", "--write"]);
    assert_eq!(json.status.code(), Some(0));
    insta::assert_snapshot!("golden_overwrite_json", transcript(&json, tmp.path()));
}

/// With `--color always` the preview is styled (added lines green), and the same text with the
/// styles removed is the plain preview: leaving styles out where stdout takes no colour changes
/// no byte.
#[test]
fn a_coloured_preview_is_the_plain_one_styled() {
    let tmp = golden_project();
    let plain = generate(tmp.path(), &[]);
    let coloured = run(sqb().arg("--project-dir").arg(tmp.path()).args([
        "--color", "always", "contract", "generate", "--from", "prod",
    ]));
    assert_eq!(coloured.status.code(), Some(0));
    let styled = String::from_utf8(coloured.stdout).unwrap();
    assert!(styled.contains("\u{1b}[32m+"), "{styled}");
    let stripped = anstream::adapter::strip_str(&styled).to_string();
    assert_eq!(stripped, String::from_utf8(plain.stdout).unwrap());
    assert!(!stripped.is_empty());
}

#[test]
fn additive_write_matches_the_golden_tree() {
    let tmp = golden_project();
    let out = generate(tmp.path(), &["--write"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        transcript(&out, tmp.path())
    );
    assert_tree(tmp.path(), &golden().join("after_additive"));
    let again = generate(tmp.path(), &["--write"]);
    assert_eq!(again.status.code(), Some(0));
    assert_eq!(
        tree(tmp.path()),
        tree(&golden().join("after_additive")),
        "a second run must change nothing"
    );
}

#[test]
fn overwrite_write_matches_the_golden_tree() {
    let tmp = golden_project();
    let out = generate(tmp.path(), &["--write", "--overwrite"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        transcript(&out, tmp.path())
    );
    insta::assert_snapshot!(
        "golden_overwrite_messages",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_tree(tmp.path(), &golden().join("after_overwrite"));
}

#[test]
fn overwrite_requires_write() {
    let tmp = golden_project();
    let out = generate(tmp.path(), &["--overwrite"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--write"));
}

// ---------------------------------------------------------------------------------------------
// The transaction

#[test]
fn a_crash_at_any_step_is_recovered_by_the_next_command() {
    // `new-written`: payments.toml, new, is written at its own path while the changed files
    // are still temp files beside theirs.
    for step in ["journal", "new-written", "write:1", "write:3", "check"] {
        let tmp = golden_project();
        let before = tree(tmp.path());
        let out = run(sqb()
            .arg("--project-dir")
            .arg(tmp.path())
            .args(["contract", "generate", "--from", "prod", "--write"])
            .env("SQB_FAULT_AFTER", step));
        assert_eq!(
            out.status.code(),
            None,
            "{step}: the process should have died: {}",
            transcript(&out, tmp.path())
        );
        assert!(
            tmp.path().join(".sqb/journal.json").exists(),
            "{step}: no journal left"
        );
        // Every file is whole: either its prior bytes or its new ones, never a mix. (Temp
        // files of writes not yet put in place may be left beside them; recovery removes them.)
        let after = tree(tmp.path());
        let additive = tree(&golden().join("after_additive"));
        for (rel, bytes) in after.iter().filter(|(rel, _)| !rel.contains(".sqb-tmp-")) {
            assert!(
                before.get(rel) == Some(bytes) || additive.get(rel) == Some(bytes),
                "{step}: {rel} is neither before nor after"
            );
        }
        if step == "new-written" {
            assert!(
                after.contains_key("models/payments.toml"),
                "{step}: not reached"
            );
        }
        let recovered = run(sqb().arg("--project-dir").arg(tmp.path()).arg("compile"));
        assert_eq!(
            recovered.status.code(),
            Some(0),
            "{step}: {}",
            transcript(&recovered, tmp.path())
        );
        assert!(
            String::from_utf8_lossy(&recovered.stderr).contains("recovered: an interrupted"),
            "{step}"
        );
        assert_eq!(
            tree(tmp.path()),
            before,
            "{step}: recovery must restore the prior bytes"
        );
        assert!(!tmp.path().join(".sqb/journal.json").exists());
    }
}

#[test]
fn ctrl_c_during_the_write_restores_the_files() {
    let tmp = golden_project();
    let before = tree(tmp.path());
    let out = run(sqb()
        .arg("--project-dir")
        .arg(tmp.path())
        .args(["contract", "generate", "--from", "prod", "--write"])
        .env("SQB_FAULT_AFTER", "sigint:write:2"));
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        transcript(&out, tmp.path())
    );
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("interrupted by SIGINT; every file was restored"));
    assert_eq!(tree(tmp.path()), before);
    assert!(!tmp.path().join(".sqb/journal.json").exists());
}

#[test]
fn a_second_writer_fails_fast() {
    let tmp = golden_project();
    let before = tree(tmp.path());
    std::fs::create_dir_all(tmp.path().join(".sqb")).unwrap();
    let lock = std::fs::File::create(tmp.path().join(".sqb/lock")).unwrap();
    lock.lock().unwrap();
    let out = generate(tmp.path(), &["--write"]);
    drop(lock);
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!(transcript(&out, tmp.path()));
    assert_eq!(tree(tmp.path()), before);
}

#[test]
fn a_recompile_failure_restores_exact_bytes() {
    let Some(db) = TestDb::create("gen_fail") else {
        return;
    };
    pg_exec(
        &db.url,
        "CREATE SCHEMA analytics; CREATE TABLE analytics.t (\"Amount\" integer, amount integer);",
    );
    let tmp = tempfile::tempdir().unwrap();
    write_files(
        tmp.path(),
        &[
            ("sqb.toml", "default_target = \"prod\"\n[connection]\nengine = \"postgres\"\n[targets.prod]\nschema = \"analytics\"\n"),
            ("models/t.sql", "SELECT * FROM analytics.t\n"),
            ("models/t.toml", "# keep these bytes\r\ndescription = \"t\"   \r\n"),
        ],
    );
    let before = tree(tmp.path());
    let mut cmd = sqb();
    cmd.arg("--project-dir")
        .arg(tmp.path())
        .args(["contract", "generate", "--from", "prod", "--write"])
        .env("SQB_DATABASE_URL", &db.url);
    let out = run(&mut cmd);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        transcript(&out, tmp.path())
    );
    assert_eq!(tree(tmp.path()), before);
    insta::assert_snapshot!(transcript(&out, tmp.path()));
}

#[test]
fn symlinked_sidecars_are_edited_through_the_link() {
    let tmp = golden_project();
    let real = tmp.path().join("shared-customers.toml");
    std::fs::rename(tmp.path().join("models/customers.toml"), &real).unwrap();
    std::os::unix::fs::symlink(&real, tmp.path().join("models/customers.toml")).unwrap();
    let out = generate(tmp.path(), &["--write"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        transcript(&out, tmp.path())
    );
    assert!(
        std::fs::symlink_metadata(tmp.path().join("models/customers.toml"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(std::fs::read_to_string(&real).unwrap().contains("tier"));
}

// ---------------------------------------------------------------------------------------------
// Round trips: generate, then diff agrees

const ROUND_TRIP_PROJECT: &[(&str, &str)] = &[
    ("models/orders.sql", "SELECT * FROM analytics.orders\n"),
    ("models/odd.sql", "SELECT * FROM analytics.\"Odd Name\"\n"),
    ("models/odd.toml", "alias = \"Odd Name\"\n"),
    (
        "sources/raw.toml",
        "[raw_events]\nschema = \"raw\"\ntable = \"events\"\n",
    ),
];

fn round_trip(root: &Path, url: Option<&str>, drift: impl FnOnce()) {
    let cmd = |args: &[&str]| {
        let mut cmd = sqb();
        cmd.arg("--project-dir").arg(root).args(args);
        if let Some(url) = url {
            cmd.env("SQB_DATABASE_URL", url);
        }
        run(&mut cmd)
    };
    let write = cmd(&["contract", "generate", "--from", "prod", "--write"]);
    assert_eq!(write.status.code(), Some(0), "{}", transcript(&write, root));
    let diff = cmd(&["contract", "diff", "--from", "prod", "--json"]);
    assert_eq!(
        diff.status.code(),
        Some(0),
        "after generate --write: {}",
        transcript(&diff, root)
    );
    let report: serde_json::Value = serde_json::from_slice(&diff.stdout).unwrap();
    assert_eq!(report["summary"]["findings"], 0, "{report:#}");
    drift();
    let drifted = cmd(&["contract", "diff", "--from", "prod"]);
    assert_eq!(
        drifted.status.code(),
        Some(1),
        "the drift should show: {}",
        transcript(&drifted, root)
    );
    let overwrite = cmd(&[
        "contract",
        "generate",
        "--from",
        "prod",
        "--write",
        "--overwrite",
    ]);
    assert_eq!(
        overwrite.status.code(),
        Some(0),
        "{}",
        transcript(&overwrite, root)
    );
    let diff = cmd(&["contract", "diff", "--from", "prod", "--json"]);
    assert_eq!(
        diff.status.code(),
        Some(0),
        "after --overwrite: {}",
        transcript(&diff, root)
    );
}

#[test]
fn round_trip_on_duckdb() {
    let tmp = tempfile::tempdir().unwrap();
    let header = "default_target = \"prod\"\n[connection]\nengine = \"duckdb\"\npath = \"w.duckdb\"\n[targets.prod]\nschema = \"analytics\"\n";
    write_files(tmp.path(), &[("sqb.toml", header)]);
    write_files(tmp.path(), ROUND_TRIP_PROJECT);
    let db = tmp.path().join("w.duckdb");
    duckdb_file(
        &db,
        "CREATE SCHEMA analytics; CREATE SCHEMA raw; CREATE TYPE mood AS ENUM ('ok', 'meh');
         CREATE TABLE analytics.orders (id INTEGER NOT NULL, amount DECIMAL(12,2), tags VARCHAR[], s STRUCT(a INTEGER, \"B b\" VARCHAR),
             m MAP(VARCHAR, DOUBLE), h HUGEINT, e ENUM('x', 'y'), md mood, ts TIMESTAMPTZ, f FLOAT, u UUID, b BLOB, fa INTEGER[3]);
         CREATE TABLE analytics.\"Odd Name\" (\"Order ID\" INTEGER, \"näme\" VARCHAR, \"a.b\" INTEGER, \"quote\"\"d\" INTEGER, \"select\" INTEGER);
         CREATE TABLE raw.events (id BIGINT NOT NULL, payload VARCHAR);",
    );
    round_trip(tmp.path(), None, || {
        duckdb_file(
            &db,
            "ALTER TABLE analytics.orders ADD COLUMN extra SMALLINT; ALTER TABLE analytics.orders DROP COLUMN h;
             ALTER TABLE analytics.orders ALTER amount TYPE DECIMAL(14,2); ALTER TABLE raw.events RENAME COLUMN payload TO Payload;",
        );
    });
}

#[test]
fn round_trip_on_postgres() {
    let Some(db) = TestDb::create("gen_round") else {
        return;
    };
    pg_exec(
        &db.url,
        "CREATE SCHEMA analytics; CREATE SCHEMA raw; CREATE TYPE mood AS ENUM ('ok', 'meh');
         CREATE DOMAIN analytics.positive AS integer CHECK (VALUE > 0);
         CREATE TABLE analytics.orders (id integer NOT NULL, amount numeric(12,2), n numeric, v varchar(40), t text, c char(2),
             tags text[], moods mood[], m mood, p analytics.positive, u uuid, j jsonb, ts timestamptz, t3 timestamp(3), f float8, r real);
         CREATE TABLE analytics.\"Odd Name\" (\"Order ID\" integer, \"näme\" text, \"a.b\" integer, \"quote\"\"d\" integer, \"select\" integer);
         CREATE TABLE raw.events (id bigint NOT NULL, payload jsonb);",
    );
    let tmp = tempfile::tempdir().unwrap();
    let header = "default_target = \"prod\"\n[connection]\nengine = \"postgres\"\n[targets.prod]\nschema = \"analytics\"\n";
    write_files(tmp.path(), &[("sqb.toml", header)]);
    write_files(tmp.path(), ROUND_TRIP_PROJECT);
    let url = db.url.clone();
    round_trip(tmp.path(), Some(&db.url), || {
        pg_exec(
            &url,
            "ALTER TABLE analytics.orders ADD COLUMN extra smallint NOT NULL DEFAULT 0; ALTER TABLE analytics.orders DROP COLUMN t;
             ALTER TABLE analytics.orders ALTER amount TYPE numeric(14,2); ALTER TABLE raw.events RENAME COLUMN payload TO \"Payload\";",
        );
    });
}

/// Beyond 64 files the temp files are made durable together (one filesystem sync) instead of
/// one by one: the result, a crash midway and its recovery are the same. Every file is
/// prepared before any is renamed, without holding one open each: the write succeeds with
/// fewer file descriptors than files (50,000 sidecars ran out of them).
#[test]
fn many_files_are_written_and_recovered_alike() {
    const MODELS: usize = 100;
    let tmp = tempfile::tempdir().unwrap();
    let header = "default_target = \"prod\"\n[connection]\nengine = \"duckdb\"\npath = \"w.duckdb\"\n[targets.prod]\nschema = \"main\"\n";
    write_files(tmp.path(), &[("sqb.toml", header)]);
    let mut ddl = String::new();
    for i in 0..MODELS {
        let sql = format!("SELECT CAST(1 AS INTEGER) AS id, CAST('x' AS VARCHAR) AS name_{i}\n");
        write_files(tmp.path(), &[(&format!("models/m{i:03}.sql"), &sql)]);
        ddl.push_str(&format!(
            "CREATE TABLE m{i:03} (id INTEGER NOT NULL, name_{i} VARCHAR);"
        ));
    }
    duckdb_file(&tmp.path().join("w.duckdb"), &ddl);
    let before = tree(tmp.path());
    let write = |fault: Option<&str>| {
        let mut cmd = sqb();
        cmd.arg("--project-dir")
            .arg(tmp.path())
            .args(["contract", "generate", "--from", "prod", "--write"]);
        if let Some(step) = fault {
            cmd.env("SQB_FAULT_AFTER", step);
        }
        with_open_files_limit(&mut cmd, (MODELS / 2) as u64);
        run(&mut cmd)
    };
    let crashed = write(Some("write:70"));
    assert_eq!(crashed.status.code(), None, "the process should have died");
    let recovered = run(sqb().arg("--project-dir").arg(tmp.path()).arg("compile"));
    assert_eq!(recovered.status.code(), Some(0));
    assert_eq!(
        tree(tmp.path()),
        before,
        "recovery must remove every new file"
    );

    let out = write(None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        transcript(&out, tmp.path())
    );
    let after = tree(tmp.path());
    let sidecars = after
        .keys()
        .filter(|k| k.ends_with(".toml") && k.starts_with("models/"));
    assert_eq!(sidecars.count(), MODELS);
    assert!(
        after.keys().all(|k| !k.contains(".sqb-tmp-")),
        "temp files left"
    );
    let diff = run(sqb()
        .arg("--project-dir")
        .arg(tmp.path())
        .args(["contract", "diff", "--from", "prod"]));
    assert_eq!(
        diff.status.code(),
        Some(0),
        "{}",
        transcript(&diff, tmp.path())
    );
}

/// Runs `cmd` with at most `limit` open file descriptors.
fn with_open_files_limit(cmd: &mut std::process::Command, limit: u64) {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec the closure only calls setrlimit, which is
    // async-signal-safe, on plain values of its own.
    unsafe {
        cmd.pre_exec(move || {
            let rlimit = libc::rlimit {
                rlim_cur: limit,
                rlim_max: limit,
            };
            match libc::setrlimit(libc::RLIMIT_NOFILE, &rlimit) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
}

/// Every type the test server's `pg_catalog` defines that a column can have, and the system
/// catalog's own relations (`anyarray`, `"char"`, `aclitem[]`...): `generate --write` declares
/// each column, its own recompile accepts them, and `diff` agrees.
#[test]
fn every_pg_catalog_type_round_trips() {
    let Some(db) = TestDb::create("gen_catalog") else {
        return;
    };
    pg_exec(
        &db.url,
        include_str!("../testdata/generate_catalog_types/warehouse.postgres.sql"),
    );
    let created = pg_strings(
        &db.url,
        "SELECT count(*)::text FROM information_schema.columns WHERE table_schema = 'raw'",
    );
    let created: usize = created[0].parse().unwrap();
    assert!(created > 150, "only {created} columns could be created");
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    copy_tree(&repo().join("testdata/generate_catalog_types"), root);
    let cmd = |args: &[&str]| {
        run(sqb()
            .arg("--project-dir")
            .arg(root)
            .args(args)
            .env("SQB_DATABASE_URL", &db.url))
    };
    let write = cmd(&["contract", "generate", "--from", "prod", "--write"]);
    assert_eq!(write.status.code(), Some(0), "{}", transcript(&write, root));
    let declared = std::fs::read_to_string(root.join("sources/raw.toml")).unwrap();
    assert_eq!(
        declared.matches("[every_type.columns.").count()
            + declared.matches("[stats.columns.").count(),
        created,
        "{declared}"
    );
    let compile = cmd(&["compile"]);
    assert_eq!(
        compile.status.code(),
        Some(0),
        "{}",
        transcript(&compile, root)
    );
    let diff = cmd(&["contract", "diff", "--from", "prod", "--json"]);
    assert_eq!(diff.status.code(), Some(0), "{}", transcript(&diff, root));
    let report: serde_json::Value = serde_json::from_slice(&diff.stdout).unwrap();
    assert_eq!(report["summary"]["findings"], 0, "{report:#}");
}

#[test]
fn overwrite_keeps_a_column_that_semantic_contracts_use() {
    let case = repo().join("testdata/diff/semantic_impact");
    let tmp = tempfile::tempdir().unwrap();
    case_project(&case, "duckdb", tmp.path());
    // The case's warehouse, with `method` as declared: only `amount` is gone.
    let sql = case_warehouse(&case, "duckdb")
        .unwrap()
        .replace("method INTEGER", "method VARCHAR");
    duckdb_file(&tmp.path().join("w.duckdb"), &sql);
    let before = std::fs::read_to_string(tmp.path().join("models/payments.toml")).unwrap();
    let out = generate(tmp.path(), &["--write", "--overwrite"]);
    insta::assert_snapshot!(transcript(&out, tmp.path()));
    assert_eq!(out.status.code(), Some(0));
    let after = std::fs::read_to_string(tmp.path().join("models/payments.toml")).unwrap();
    assert_eq!(before, after);
}

#[test]
fn the_recompile_after_a_write_reanalyses_a_model_whose_upstream_it_declared() {
    // Neither model's SQL changes; `totals` is proven wrong only once `amounts` is declared.
    let case = repo().join("testdata/generate/upstream_change");
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(&case.join("project"), tmp.path());
    let sql = std::fs::read_to_string(case.join("warehouse.sql")).unwrap();
    duckdb_file(&tmp.path().join("w.duckdb"), &sql);
    let before = tree(tmp.path());
    let out = generate(tmp.path(), &["--write"]);
    let shown = transcript(&out, tmp.path());
    assert_eq!(out.status.code(), Some(2), "{shown}");
    assert!(shown.contains("error[E052]"), "{shown}");
    assert_eq!(tree(tmp.path()), before);
}

#[test]
fn a_quiet_write_prints_nothing_and_writes_the_same() {
    let tmp = golden_project();
    let out = run(sqb()
        .arg("--project-dir")
        .arg(tmp.path())
        .args(["-q", "contract", "generate", "--from", "prod", "--write"]));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        transcript(&out, tmp.path())
    );
    assert_eq!(
        (out.stdout.as_slice(), out.stderr.as_slice()),
        (&b""[..], &b""[..])
    );
    assert_tree(tmp.path(), &golden().join("after_additive"));
    // Without --write the diff is what the command is for: --quiet keeps it.
    let tmp = golden_project();
    let preview = run(sqb()
        .arg("--project-dir")
        .arg(tmp.path())
        .args(["-q", "contract", "generate", "--from", "prod"]));
    assert!(!preview.stdout.is_empty());
}

/// A case-only rename in the warehouse under an open source is held back on Postgres while a
/// model reads the old spelling unquoted (a filter counts), and named as the break it is;
/// once the models quote the new spelling, `--overwrite` renames the declaration.
#[test]
fn a_rename_that_breaks_readers_is_held_back_and_named() {
    let Some(db) = TestDb::create("gen_rename") else {
        return;
    };
    let case = repo().join("testdata/generate/breaking_rename");
    pg_exec(
        &db.url,
        &std::fs::read_to_string(case.join("warehouse.sql")).unwrap(),
    );
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(&case.join("project"), tmp.path());
    let generate = |args: &[&str]| {
        run(sqb()
            .arg("--project-dir")
            .arg(tmp.path())
            .env("SQB_DATABASE_URL", &db.url)
            .args(["contract", "generate"])
            .args(args))
    };
    let before = tree(tmp.path());
    let held = generate(&["--write", "--overwrite"]);
    assert_eq!(held.status.code(), Some(0));
    insta::assert_snapshot!(transcript(&held, tmp.path()));
    assert_eq!(tree(tmp.path()), before);
    let json = generate(&["--format", "json"]);
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(report["proposals"], serde_json::json!([]), "{report:#}");

    for (model, sql) in [
        (
            "item_totals",
            "SELECT id, \"Quantity\" * price AS total\nFROM shop.items\n",
        ),
        (
            "in_stock",
            "SELECT id\nFROM shop.items\nWHERE \"Quantity\" > 0\n",
        ),
    ] {
        std::fs::write(tmp.path().join(format!("models/{model}.sql")), sql).unwrap();
    }
    let renamed = generate(&["--write", "--overwrite"]);
    assert_eq!(
        renamed.status.code(),
        Some(0),
        "{}",
        transcript(&renamed, tmp.path())
    );
    let source = std::fs::read_to_string(tmp.path().join("sources/shop.toml")).unwrap();
    assert!(source.contains("[items.columns.Quantity]"), "{source}");
    // Now the open source declares exactly its table's columns: `complete = true` is
    // suggested, never written.
    let json = generate(&["--format", "json"]);
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        report["skipped"],
        serde_json::json!([{"reason": "could_be_complete", "resource": "items", "file": "sources/shop.toml"}]),
        "{report:#}"
    );
    let written = generate(&["--write"]);
    assert_eq!(written.status.code(), Some(0));
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("sources/shop.toml")).unwrap(),
        source
    );
}

/// A retype that breaks downstream declarations (E052) is refused naming each of them; with
/// `--cascade` they are retyped in the same write, comments kept, and the source then agrees
/// with the warehouse.
#[test]
fn cascade_retypes_the_downstream_declarations_a_write_breaks() {
    let case = repo().join("testdata/generate/cascade");
    let tmp = tempfile::tempdir().unwrap();
    // The warehouse beside the project (`path = "../w.duckdb"`), out of the compared tree.
    let root = tmp.path().join("project");
    copy_tree(&case.join("project"), &root);
    let sql = std::fs::read_to_string(case.join("warehouse.sql")).unwrap();
    duckdb_file(&tmp.path().join("w.duckdb"), &sql);
    let before = tree(&root);
    let refused = generate(&root, &["--write", "--overwrite"]);
    assert_eq!(refused.status.code(), Some(2));
    insta::assert_snapshot!("cascade_refused", transcript(&refused, &root));
    assert!(tree(&root) == before, "a refused write restores every file");

    let cascaded = generate(&root, &["--write", "--overwrite", "--cascade"]);
    assert_eq!(
        cascaded.status.code(),
        Some(0),
        "{}",
        transcript(&cascaded, &root)
    );
    insta::assert_snapshot!("cascade_written", String::from_utf8_lossy(&cascaded.stderr));
    assert_tree(&root, &case.join("after_cascade"));
    // The source now agrees; the models' tables, built before, differ until they are rebuilt.
    let diff = run(sqb()
        .arg("--project-dir")
        .arg(&root)
        .args(["contract", "diff", "--format", "json"]));
    let report: serde_json::Value = serde_json::from_slice(&diff.stdout).unwrap();
    let differing: Vec<(&str, &str)> = report["resources"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| {
            r["findings"].as_array().unwrap().iter().map(|f| {
                (
                    r["resource_name"].as_str().unwrap(),
                    f["kind"].as_str().unwrap(),
                )
            })
        })
        .collect();
    assert_eq!(
        differing,
        [
            ("event_counts", "type_mismatch"),
            ("stg_events", "type_mismatch")
        ]
    );
}
