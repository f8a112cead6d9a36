//! A reader that goes away (`sqb ... | head -1`) ends every command quietly with exit status 0,
//! as ripgrep and ruff do, except that a `generate --write` still writes what it was asked to.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::*;

/// Runs `cmd` with a stdout whose reading end is already closed: every write to it fails with
/// a broken pipe, whenever it happens.
fn with_closed_stdout(cmd: &mut Command) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    cmd.stdout(writer);
    run(cmd)
}

fn in_project(root: &Path, args: &[&str]) -> Output {
    with_closed_stdout(sqb().arg("--project-dir").arg(root).args(args))
}

/// The shop example with its warehouse built.
fn shop() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(&repo().join("examples/shop"), tmp.path());
    let _ = std::fs::remove_file(tmp.path().join("warehouse.duckdb"));
    duckdb_file(&tmp.path().join("warehouse.duckdb"), &shop_migrations());
    tmp
}

fn assert_quiet_success(out: &Output, root: &Path) {
    let text = transcript(out, root);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(out.stderr.is_empty(), "{text}");
}

#[test]
fn compile_and_lineage_exit_0_quietly() {
    // A project with a warning: compile's text output is not empty.
    let warned = tempfile::tempdir().unwrap();
    copy_tree(
        &repo().join("testdata/compile/numeric_without_precision"),
        warned.path(),
    );
    for args in [&["compile"][..], &["compile", "--format", "json"]] {
        assert_quiet_success(&in_project(warned.path(), args), warned.path());
    }
    let tmp = shop();
    for args in [
        &["compile", "--format", "json"][..],
        &["lineage", "fct_orders", "--include-uses"],
        &["lineage", "fct_orders", "--format", "json"],
    ] {
        assert_quiet_success(&in_project(tmp.path(), args), tmp.path());
    }
}

#[test]
fn diff_exits_0_quietly_in_every_format_even_with_differences() {
    let tmp = shop();
    for format in ["text", "json", "markdown", "junit", "github"] {
        let out = in_project(
            tmp.path(),
            &["contract", "diff", "--from", "dev", "--format", format],
        );
        assert_quiet_success(&out, tmp.path());
    }
}

#[test]
fn generate_preview_exits_0_quietly_and_writes_nothing() {
    let tmp = shop();
    let before = std::fs::read_dir(tmp.path().join("models/staging"))
        .unwrap()
        .count();
    for args in [
        &["contract", "generate", "--from", "dev"][..],
        &["contract", "generate", "--from", "dev", "--format", "json"],
    ] {
        assert_quiet_success(&in_project(tmp.path(), args), tmp.path());
    }
    let after = std::fs::read_dir(tmp.path().join("models/staging"))
        .unwrap()
        .count();
    assert_eq!(before, after);
}

#[test]
fn generate_write_still_writes_when_the_preview_cannot_be_shown() {
    let golden = repo().join("testdata/generate/golden");
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(&golden.join("before"), tmp.path());
    let sql = std::fs::read_to_string(golden.join("warehouse.sql")).unwrap();
    duckdb_file(&tmp.path().join("w.duckdb"), &sql);
    let out = in_project(
        tmp.path(),
        &["contract", "generate", "--from", "prod", "--write"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        transcript(&out, tmp.path())
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("the project compiles"));
    // What was written is what the additive golden run writes.
    let again = run(sqb()
        .arg("--project-dir")
        .arg(tmp.path())
        .args(["contract", "generate", "--from", "prod"]));
    assert_eq!(again.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(
        stderr.contains("nothing to change"),
        "{}",
        transcript(&again, tmp.path())
    );
}
