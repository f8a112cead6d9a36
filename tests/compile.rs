//! `sqb compile` end to end: one invalid project per rule under testdata/compile, each with its
//! exact located diagnostics pinned, and the bundled examples compiling clean.

mod common;

use common::{repo, run, sqb, transcript};

#[test]
fn each_testdata_project_yields_its_diagnostics() {
    insta::glob!("../testdata/compile", "*/sqb.toml", |path| {
        let dir = path.parent().unwrap();
        let text = run(sqb().arg("compile").arg("--project-dir").arg(dir));
        insta::assert_snapshot!("text", transcript(&text, dir));
        let json = run(sqb()
            .args(["compile", "--format", "json"])
            .arg("--project-dir")
            .arg(dir));
        insta::assert_snapshot!("json", transcript(&json, dir));
    });
}

#[test]
fn examples_compile_clean() {
    for example in ["shop", "adoption"] {
        let dir = repo().join("examples").join(example);
        let out = run(sqb().arg("compile").arg("--project-dir").arg(&dir));
        assert_eq!(
            out.status.code(),
            Some(0),
            "{example}: {}",
            transcript(&out, &dir)
        );
        assert!(
            out.stdout.is_empty(),
            "{example} has diagnostics: {}",
            transcript(&out, &dir)
        );
    }
}

#[test]
fn finds_the_project_by_walking_up() {
    let dir = repo().join("examples/shop/models/marts");
    let out = run(sqb().arg("compile").current_dir(&dir));
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "compiled 4 models, 3 sources: valid"
    );
}

#[test]
fn missing_project_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(sqb().arg("compile").current_dir(tmp.path()));
    insta::assert_snapshot!(transcript(&out, tmp.path()));
    let out = run(sqb().arg("compile").arg("--project-dir").arg(tmp.path()));
    insta::assert_snapshot!(transcript(&out, tmp.path()));
}

#[test]
fn quiet_prints_only_errors() {
    let dir = repo().join("testdata/compile/numeric_without_precision");
    let out = run(sqb().args(["-q", "compile"]).arg("--project-dir").arg(&dir));
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stdout.is_empty() && out.stderr.is_empty(),
        "{}",
        transcript(&out, &dir)
    );
}

#[test]
fn color_always_styles_and_never_does_not() {
    let dir = repo().join("testdata/compile/unknown_key");
    let colored = run(sqb()
        .args(["--color", "always", "compile"])
        .arg("--project-dir")
        .arg(&dir));
    assert!(String::from_utf8_lossy(&colored.stdout).contains("\u{1b}["));
    let plain = run(sqb()
        .args(["--color", "never", "compile"])
        .arg("--project-dir")
        .arg(&dir)
        .env_remove("NO_COLOR"));
    assert!(!String::from_utf8_lossy(&plain.stdout).contains("\u{1b}["));
}

#[test]
fn usage_errors_exit_2() {
    let out = run(sqb().args(["compile", "--format", "yaml"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid value 'yaml'"));
}

/// Diagnostic codes are a public interface: each one has its row in docs/diagnostics.md.
#[test]
fn every_code_is_documented() {
    let docs = std::fs::read_to_string(repo().join("docs/diagnostics.md")).unwrap();
    for code in sqb::diagnostics::Code::ALL {
        let row = format!("| {} | {} |", code.as_str(), code.name());
        assert!(
            docs.contains(&row),
            "docs/diagnostics.md has no row `{row}`"
        );
    }
}
