//! Replays every input kept under fuzz/regressions/<target>/ through the same checks the fuzz
//! targets run (fuzz/checks.rs), so that a crash found by `scripts/fuzz` stays fixed.

#[path = "../fuzz/checks.rs"]
mod checks;

mod common;

fn replay(target: &str, check: fn(&[u8])) {
    let dir = common::repo().join("fuzz/regressions").join(target);
    let mut inputs: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    inputs.sort();
    assert!(!inputs.is_empty(), "no inputs under {}", dir.display());
    for path in inputs {
        let data = std::fs::read(&path).unwrap();
        let result = std::panic::catch_unwind(|| check(&data));
        assert!(result.is_ok(), "{} fails again", path.display());
    }
}

#[test]
fn project_load() {
    replay("project_load", checks::project_load);
}

#[test]
fn type_parse() {
    replay("type_parse", checks::type_parse);
}

#[test]
fn sql_analysis() {
    replay("sql_analysis", checks::sql_analysis);
}

#[test]
fn toml_editor() {
    replay("toml_editor", checks::toml_editor);
}
