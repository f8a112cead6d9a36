//! `--format sarif` of `sqb compile` and `sqb contract diff`: every log is valid against the
//! OASIS SARIF 2.1.0 schema (testdata/sarif, fetched by scripts/sarif-schema), its results are
//! the diagnostics and findings at their declarations, and its fingerprints are the report's.

mod common;

use std::path::Path;

use common::*;

const SCHEMA_URL: &str =
    "https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json";

/// Validates `log` against the SARIF 2.1.0 schema, formats asserted.
fn assert_valid_sarif(log: &serde_json::Value) {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("testdata/sarif/sarif-schema-2.1.0.json")).unwrap(),
    )
    .unwrap();
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    compiler.enable_format_assertions();
    compiler.add_resource(SCHEMA_URL, schema).unwrap();
    let index = compiler.compile(SCHEMA_URL, &mut schemas).unwrap();
    if let Err(e) = schemas.validate(log, index) {
        panic!("not valid SARIF 2.1.0: {e:#}\n{log:#}");
    }
}

/// The schema is the one the tests trust it to be: a log missing `version`, or with a result
/// whose level is made up, is refused.
#[test]
fn the_schema_refuses_what_is_not_sarif() {
    let good = serde_json::json!({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}},
        "results": [{"message": {"text": "m"}, "level": "error"}]}]});
    assert_valid_sarif(&good);
    for bad in [
        serde_json::json!({"runs": []}),
        serde_json::json!({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}},
            "results": [{"message": {"text": "m"}, "level": "fatal"}]}]}),
    ] {
        let result = std::panic::catch_unwind(|| assert_valid_sarif(&bad));
        assert!(result.is_err(), "accepted {bad}");
    }
}

fn stdout_json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

fn compile(root: &Path, format: &str) -> std::process::Output {
    run(sqb()
        .current_dir(root)
        .args(["compile", "--format", format]))
}

/// Each diagnostic of a failing compile is a result with its code's rule, level and location.
#[test]
fn compile_sarif_has_each_diagnostic_at_its_declaration() {
    for case in ["unknown_type", "sql_shape_duckdb", "toml_syntax"] {
        let tmp = tempfile::tempdir().unwrap();
        copy_tree(&repo().join("testdata/compile").join(case), tmp.path());
        let json = stdout_json(&compile(tmp.path(), "json"));
        let out = compile(tmp.path(), "sarif");
        assert_eq!(out.status.code(), Some(1), "{case}");
        let log = stdout_json(&out);
        assert_valid_sarif(&log);
        let results = log["runs"][0]["results"].as_array().unwrap();
        let diags = json["diagnostics"].as_array().unwrap();
        assert_eq!(results.len(), diags.len(), "{case}");
        let rules = log["runs"][0]["tool"]["driver"]["rules"]
            .as_array()
            .unwrap();
        for (r, d) in results.iter().zip(diags) {
            assert_eq!(r["ruleId"], d["code"], "{case}");
            let rule = &rules[r["ruleIndex"].as_u64().unwrap() as usize];
            assert_eq!(rule["id"], d["code"], "{case}");
            assert!(!rule["fullDescription"]["text"].as_str().unwrap().is_empty());
            let level = match d["severity"].as_str().unwrap() {
                "info" => "note",
                other => other,
            };
            assert_eq!(r["level"], level, "{case}");
            let at = &r["locations"][0]["physicalLocation"];
            if let Some(primary) = d["location"].as_object() {
                assert_eq!(at["artifactLocation"]["uri"], primary["file"], "{case}");
                assert_eq!(at["region"]["startLine"], primary["line"], "{case}");
            }
        }
        // The rules are every code's, checked above; the results are pinned.
        insta::assert_json_snapshot!(format!("compile_{case}"), log["runs"][0]["results"]);
    }
}

/// A clean project is a valid log with no results (exit 0).
#[test]
fn compile_sarif_of_a_valid_project_has_no_results() {
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(&repo().join("examples/shop"), tmp.path());
    let out = compile(tmp.path(), "sarif");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        transcript(&out, tmp.path())
    );
    let log = stdout_json(&out);
    assert_valid_sarif(&log);
    assert_eq!(log["runs"][0]["results"], serde_json::json!([]));
}

/// Every finding of the every-finding-kind case is a result at its declaration, with the JSON
/// report's fingerprint; with --baseline, `baselineState` says which are new.
#[test]
fn diff_sarif_carries_the_fingerprints_and_the_baseline() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let case = repo().join("testdata/diff/every_finding_kind");
    case_project(&case, "duckdb", root);
    duckdb_file(
        &root.join("w.duckdb"),
        &case_warehouse(&case, "duckdb").unwrap(),
    );
    let diff = |args: &[&str]| {
        run(sqb()
            .current_dir(root)
            .args(["contract", "diff", "--from", "prod"])
            .args(args))
    };
    let json = diff(&["--format", "json", "-o", "night1.json"]);
    assert_eq!(json.status.code(), Some(1));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("night1.json")).unwrap()).unwrap();
    let out = diff(&["--format", "sarif"]);
    assert_eq!(out.status.code(), Some(1), "{}", transcript(&out, root));
    let log = stdout_json(&out);
    assert_valid_sarif(&log);
    let findings: Vec<&serde_json::Value> = report["resources"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["findings"].as_array().unwrap())
        .collect();
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), findings.len());
    for (r, f) in results.iter().zip(&findings) {
        assert_eq!(r["ruleId"], f["kind"]);
        assert_eq!(r["partialFingerprints"]["sqbFinding/v1"], f["fingerprint"]);
        assert_eq!(
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
            f["location"]["line"]
        );
        assert!(r.get("baselineState").is_none());
    }
    insta::assert_snapshot!(
        "diff_every_finding_kind",
        String::from_utf8_lossy(&out.stdout).replace(env!("CARGO_PKG_VERSION"), "[VERSION]")
    );
    duckdb_file(
        &root.join("w.duckdb"),
        "ALTER TABLE analytics.orders ALTER COLUMN flag TYPE INTEGER;",
    );
    let compared = stdout_json(&diff(&["--format", "sarif", "--baseline", "night1.json"]));
    assert_valid_sarif(&compared);
    let states: Vec<(&str, &str)> = compared["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["ruleId"].as_str().unwrap(),
                r["baselineState"].as_str().unwrap(),
            )
        })
        .filter(|(_, state)| *state == "new")
        .collect();
    assert_eq!(states, [("type_mismatch", "new")]);
}

/// `sqb audit --format sarif`: valid SARIF, a result per audit that did not pass at its
/// declaration (warn severity as `warning`), a rule per audit with its help from
/// docs/audits.md, and fingerprints that differ per audit.
#[test]
fn audit_sarif_has_each_failing_audit_at_its_declaration() {
    let case = repo().join("testdata/audit");
    let tmp = tempfile::tempdir().unwrap();
    case_project(&case, "duckdb", tmp.path());
    duckdb_file(
        &tmp.path().join("w.duckdb"),
        &case_warehouse(&case, "duckdb").unwrap(),
    );
    let run_audit = |format: &str| {
        run(sqb()
            .current_dir(tmp.path())
            .args(["audit", "--format", format]))
    };
    let sarif = run_audit("sarif");
    assert_eq!(sarif.status.code(), Some(1));
    let log = stdout_json(&sarif);
    assert_valid_sarif(&log);
    let json = stdout_json(&run_audit("json"));
    let failing: Vec<&serde_json::Value> = json["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] != "pass")
        .collect();
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), failing.len());
    let rules = log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    for (result, audit) in results.iter().zip(&failing) {
        assert_eq!(result["ruleId"], audit["audit"]);
        // Each result's rule is the rule of its audit, user-defined audits (audits/*.sql) too.
        let index = result["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index]["id"], audit["audit"]);
        let level = if audit["status"] == "warn" {
            "warning"
        } else {
            "error"
        };
        assert_eq!(result["level"], level);
        let region = &result["locations"][0]["physicalLocation"];
        assert_eq!(region["artifactLocation"]["uri"], audit["file"]);
        assert_eq!(region["region"]["startLine"], audit["line"]);
    }
    let mut prints: Vec<&str> = results
        .iter()
        .map(|r| r["partialFingerprints"]["sqbAudit/v1"].as_str().unwrap())
        .collect();
    prints.sort_unstable();
    prints.dedup();
    assert_eq!(prints.len(), results.len(), "one fingerprint per audit");
    assert!(rules.iter().all(|r| r["fullDescription"]["text"]
        .as_str()
        .unwrap()
        .contains("fails on ")));
    assert!(rules.iter().any(|r| r["id"] == "at_most"), "{rules:#?}");
}
