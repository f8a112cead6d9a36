//! `sqb audit` against `dbt test` itself: the jaffle project imported from its manifest, run on
//! the warehouse `dbt build` made with defects planted (testdata/dbt/jaffle/migrations/
//! defects.sql). For every test the import carries, sqb's status and failing count equal what
//! dbt reported on the same warehouse (target/test_results.json, which scripts/dbt-fixture
//! writes by running real dbt); the tests it does not carry are exactly the ones its report
//! names.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::*;
use serde_json::Value;

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Each dbt test's key as sqb's audit results name it: (resource, column, audit).
fn test_keys(manifest: &Value) -> BTreeMap<String, (String, String, String)> {
    let mut keys = BTreeMap::new();
    for (id, node) in manifest["nodes"].as_object().unwrap() {
        if node["resource_type"] != "test" {
            continue;
        }
        let Some(name) = node["test_metadata"]["name"].as_str() else {
            continue;
        };
        let parent = node["depends_on"]["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .find(|n| {
                node["attached_node"].as_str().is_none_or(|a| a == *n)
                    && (n.starts_with("model.") || n.starts_with("source."))
            })
            .unwrap();
        // A model keeps its name; a source table is `<source>_<table>`.
        let parts: Vec<&str> = parent.split('.').collect();
        let resource = match parts[0] {
            "model" => parts[2].to_string(),
            _ => format!("{}_{}", parts[2], parts[3]),
        };
        let column = node["column_name"].as_str().unwrap_or_default().to_string();
        // sqb names dbt's `expression_is_true` as its own check, `expression`.
        let name = match name {
            "expression_is_true" => "expression",
            other => other,
        };
        keys.insert(id.clone(), (resource, column, name.to_string()));
    }
    keys
}

#[test]
fn every_carried_test_fails_as_dbt_test_says() {
    let jaffle = repo().join("testdata/dbt/jaffle");
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("jaffle");
    let imported = run(sqb()
        .args(["import", "dbt"])
        .arg(&jaffle)
        .arg("--out")
        .arg(&root));
    assert_eq!(
        imported.status.code(),
        Some(0),
        "{}",
        transcript(&imported, &root)
    );
    let db = root.join("jaffle.duckdb");
    std::fs::copy(jaffle.join("target/jaffle.duckdb"), &db).unwrap();
    let defects = std::fs::read_to_string(jaffle.join("migrations/defects.sql")).unwrap();
    duckdb_file(&db, &defects);

    let out = run(sqb()
        .arg("--project-dir")
        .arg(&root)
        .args(["audit", "--format", "json"]));
    assert_eq!(out.status.code(), Some(1), "{}", transcript(&out, &root));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let sqb: BTreeMap<(String, String, String), (String, u64)> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r.get("implied_by").is_none())
        .map(|r| {
            let key = (
                r["resource"].as_str().unwrap().to_string(),
                r["column"].as_str().unwrap_or_default().to_string(),
                r["audit"].as_str().unwrap().to_string(),
            );
            let verdict = (
                r["status"].as_str().unwrap().to_string(),
                r["failing"].as_u64().unwrap(),
            );
            (key, verdict)
        })
        .collect();

    let keys = test_keys(&read_json(&jaffle.join("target/manifest.json")));
    let dbt = read_json(&jaffle.join("target/test_results.json"));
    let mut compared = 0;
    let mut failing = 0;
    let mut not_carried = Vec::new();
    for result in dbt["results"].as_array().unwrap() {
        let id = result["unique_id"].as_str().unwrap();
        // Unit tests run a model on fixture rows, and hooks are no tests: neither checks data.
        if !id.starts_with("test.") {
            continue;
        }
        let status = result["status"].as_str().unwrap();
        let failures = result["failures"].as_u64().unwrap();
        let Some(key) = keys.get(id).filter(|k| sqb.contains_key(*k)) else {
            not_carried.push(id.split('.').nth(2).unwrap().to_string());
            continue;
        };
        assert_eq!(sqb[key], (status.to_string(), failures), "{id}: {key:?}");
        compared += 1;
        failing += usize::from(failures > 0);
    }
    // Every carried audit is one of dbt's tests, and the planted defects show: the comparison is
    // not vacuous.
    assert_eq!(compared, sqb.len(), "{sqb:#?}");
    assert!(failing >= 5, "{dbt:#}");
    not_carried.sort();
    assert_eq!(
        not_carried,
        [
            "assert_payments_cover_orders",
            "has_rows_dim_customers_",
            "is_positive_stg_payments_amount"
        ]
    );
}
