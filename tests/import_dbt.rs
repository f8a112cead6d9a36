//! `sqb import dbt` end to end, on the manifest that real `dbt compile` wrote for
//! testdata/dbt/jaffle (and testdata/dbt/legacy, with dbt-core 1.5; scripts/dbt-fixture
//! regenerates both): the exact tree and report, a clean compile on both engines, `contract diff`
//! agreeing with the warehouse `dbt build` made and with warehouses built from the imported SQL on
//! both engines, and finding drift planted in them, and bad input that writes nothing.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{
    duckdb_file, pg_exec, pg_try_exec, postgres_url, repo, run, sqb, transcript, tree, TestDb,
};
use serde_json::Value;

fn jaffle() -> PathBuf {
    repo().join("testdata/dbt/jaffle")
}

fn import(dbt: &Path, out: &Path, extra: &[&str]) -> Output {
    run(sqb()
        .args(["import", "dbt"])
        .arg(dbt)
        .arg("--out")
        .arg(out)
        .args(extra))
}

#[test]
fn imports_the_exact_tree_and_report() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("shop");
    let result = import(&jaffle(), &out, &[]);
    assert_eq!(
        result.status.code(),
        Some(0),
        "{}",
        transcript(&result, tmp.path())
    );
    insta::assert_snapshot!("report", transcript(&result, tmp.path()));
    insta::assert_snapshot!("tree", tree(&out));
}

#[test]
fn the_json_report_lists_what_was_written_and_the_compile() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("shop");
    let result = import(&jaffle(), &out, &["--format", "json"]);
    assert_eq!(result.status.code(), Some(0));
    let json: Value = serde_json::from_slice(&result.stdout).unwrap();
    assert_eq!(json["manifest_schema"], 12);
    assert_eq!(json["engine"], "duckdb");
    assert_eq!(
        json["compile"],
        serde_json::json!({"errors": 0, "warnings": 0})
    );
    // 25 files of the project, and the import's record (dbt-import.json).
    assert_eq!(json["files"].as_array().unwrap().len(), 26);
    let kinds: Vec<&str> = json["not_carried_over"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    for kind in [
        "unit test",
        "semantic model",
        "snapshot",
        "seed",
        "python model",
        "ephemeral model",
        "model version",
        "constraint",
        "singular test",
        "data test",
        "disabled",
        "hook",
        "analysis",
        "exposure",
    ] {
        assert!(kinds.contains(&kind), "no `{kind}` entry in {kinds:?}");
    }
}

#[test]
fn a_dbt_1_5_manifest_imports_too() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("legacy");
    let result = import(&repo().join("testdata/dbt/legacy"), &out, &[]);
    assert_eq!(
        result.status.code(),
        Some(0),
        "{}",
        transcript(&result, tmp.path())
    );
    insta::assert_snapshot!("legacy_report", transcript(&result, tmp.path()));
    insta::assert_snapshot!("legacy_tree", tree(&out));
}

#[test]
fn on_postgres_only_the_connection_differs() {
    let tmp = tempfile::tempdir().unwrap();
    let (duck, pg) = (tmp.path().join("duck"), tmp.path().join("pg"));
    assert_eq!(import(&jaffle(), &duck, &[]).status.code(), Some(0));
    let result = import(&jaffle(), &pg, &["--engine", "postgres"]);
    assert_eq!(
        result.status.code(),
        Some(0),
        "{}",
        transcript(&result, tmp.path())
    );
    insta::assert_snapshot!(std::fs::read_to_string(pg.join("sqb.toml")).unwrap());
    // The connection, and the engine the import's record names.
    for file in ["sqb.toml", "dbt-import.json"] {
        std::fs::remove_file(duck.join(file)).unwrap();
        std::fs::remove_file(pg.join(file)).unwrap();
    }
    assert_eq!(tree(&duck), tree(&pg));
}

#[test]
fn the_imported_project_compiles_clean_on_both_engines() {
    for engine in ["duckdb", "postgres"] {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("shop");
        assert_eq!(
            import(&jaffle(), &out, &["--engine", engine]).status.code(),
            Some(0)
        );
        let compiled = run(sqb().arg("--project-dir").arg(&out).arg("compile"));
        assert_eq!(compiled.status.code(), Some(0), "{engine}");
        assert!(
            compiled.stdout.is_empty(),
            "{engine}: {}",
            transcript(&compiled, &out)
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Against a warehouse: raw tables, what dbt builds outside SQL models, then every imported model
// from its own SQL in DAG order, as dbt builds it (an enforced contract as a table created from
// its declared columns and constraints, then filled).

/// The statements that build each model, in an order that works (retrying what fails until
/// every model is built).
fn build_models(root: &Path, exec: &mut dyn FnMut(&str) -> Result<(), String>) {
    let project = sqb::project::Project::load(root).unwrap();
    let mut pending: Vec<(String, String)> = project
        .models
        .iter()
        .map(|m| (m.name.clone(), model_ddl(&project, m)))
        .collect();
    while !pending.is_empty() {
        let before = pending.len();
        let mut errors = Vec::new();
        pending.retain(|(name, ddl)| match exec(ddl) {
            Ok(()) => false,
            Err(e) => {
                errors.push(format!("{name}: {e}"));
                true
            }
        });
        assert!(pending.len() < before, "cannot build: {errors:#?}");
    }
}

fn model_ddl(project: &sqb::project::Project, model: &sqb::project::Model) -> String {
    let sql = project
        .sources
        .get(model.sql_file)
        .text()
        .trim_end()
        .to_string();
    let relation = format!("analytics.{}", model.relation_name());
    if project.policy(model) != sqb::project::Policy::Enforced {
        return format!("create view {relation} as\n{sql}");
    }
    let columns = project.effective_columns(model);
    let defs: Vec<String> = columns
        .iter()
        .map(|c| {
            let ty = c.ty.as_ref().map(ToString::to_string).unwrap_or_default();
            let null = if c.is_nullable() { "" } else { " not null" };
            format!("{} {ty}{null}", c.name.value)
        })
        .collect();
    let names: Vec<&str> = columns.iter().map(|c| c.name.value.as_str()).collect();
    format!(
        "create table {relation} ({});\ninsert into {relation} ({names}) select {names} from (\n{sql}\n) as model",
        defs.join(", "),
        names = names.join(", ")
    )
}

fn migrations() -> String {
    ["raw.sql", "built_by_dbt.sql"]
        .iter()
        .map(|f| std::fs::read_to_string(jaffle().join("migrations").join(f)).unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

/// `contract diff --json`'s differences as `resource.column: kind` lines.
fn differences(out: &Output, root: &Path) -> Vec<String> {
    let json: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", transcript(out, root)));
    let mut found = Vec::new();
    for resource in json["resources"].as_array().unwrap() {
        for f in resource["findings"].as_array().unwrap() {
            if f["severity"] != "info" {
                found.push(format!(
                    "{}.{}: {}",
                    resource["resource_name"].as_str().unwrap(),
                    f["column"].as_str().unwrap_or("-"),
                    f["kind"].as_str().unwrap()
                ));
            }
        }
    }
    found.sort();
    found
}

fn diff(root: &Path, url: Option<&str>) -> Output {
    let mut cmd = sqb();
    cmd.arg("--project-dir")
        .arg(root)
        .args(["contract", "diff", "--from", "analytics", "--json"]);
    if let Some(url) = url {
        cmd.env("SQB_DATABASE_URL", url);
    }
    run(&mut cmd)
}

/// The imported project with sizes compared as dbt compares them.
fn without_type_sizes(root: &Path) {
    let path = root.join("sqb.toml");
    let toml = std::fs::read_to_string(&path).unwrap().replace(
        "column_contract_mode = \"explicit\"\n",
        "column_contract_mode = \"explicit\"\ncompare_type_size = false\n",
    );
    std::fs::write(path, toml).unwrap();
}

#[test]
fn contract_diff_agrees_with_the_warehouse_dbt_built() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("shop");
    assert_eq!(import(&jaffle(), &out, &[]).status.code(), Some(0));
    // `dbt build`'s DuckDB file (scripts/dbt-fixture), copied: sqb only reads it, but the test
    // plants drift in it next.
    let file = out.join("jaffle.duckdb");
    std::fs::copy(jaffle().join("target/jaffle.duckdb"), &file).unwrap();
    let agreed = diff(&out, None);
    assert_eq!(
        agreed.status.code(),
        Some(0),
        "{}",
        transcript(&agreed, &out)
    );
    let json: Value = serde_json::from_slice(&agreed.stdout).unwrap();
    assert_eq!(json["summary"]["resources"], 17);

    duckdb_file(
        &file,
        "alter table analytics.fct_orders drop column payment_total;",
    );
    let drifted = diff(&out, None);
    assert_eq!(drifted.status.code(), Some(1));
    assert_eq!(
        differences(&drifted, &out),
        ["fct_orders.payment_total: missing_physical_column"]
    );
}

#[test]
fn contract_diff_agrees_with_the_duckdb_warehouse_and_finds_drift() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("shop");
    assert_eq!(import(&jaffle(), &out, &[]).status.code(), Some(0));
    let file = out.join("jaffle.duckdb");
    duckdb_file(&file, &migrations());
    {
        let conn = duckdb::Connection::open(&file).unwrap();
        conn.execute_batch("set schema = 'analytics'").unwrap();
        build_models(&out, &mut |sql| {
            let built = conn.execute_batch(&format!("begin; {sql}; commit"));
            built.map_err(|e| {
                conn.execute_batch("rollback").unwrap();
                e.to_string()
            })
        });
        conn.execute_batch("checkpoint").unwrap();
    }
    let agreed = diff(&out, None);
    assert_eq!(
        agreed.status.code(),
        Some(0),
        "{}",
        transcript(&agreed, &out)
    );
    assert!(differences(&agreed, &out).is_empty());

    duckdb_file(
        &file,
        "alter table analytics.dim_customers drop column is_returning;
         alter table raw.payments alter amount type decimal(10,2);",
    );
    let drifted = diff(&out, None);
    assert_eq!(drifted.status.code(), Some(1));
    assert_eq!(
        differences(&drifted, &out),
        [
            "dim_customers.is_returning: missing_physical_column",
            "raw_payments.amount: type_mismatch",
            // The view reads the table: its column changed type with it.
            "stg_payments.amount: type_mismatch",
        ]
    );

    without_type_sizes(&out);
    let dbt_like = diff(&out, None);
    assert_eq!(
        differences(&dbt_like, &out),
        ["dim_customers.is_returning: missing_physical_column"]
    );
    let json: Value = serde_json::from_slice(&dbt_like.stdout).unwrap();
    assert_eq!(json["summary"]["type_sizes_compared"], false);
}

#[test]
fn contract_diff_agrees_with_the_postgres_warehouse_and_finds_drift() {
    if postgres_url().is_none() {
        return;
    }
    let db = TestDb::create("import_dbt").expect("the server answered before");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("shop");
    let imported = import(&jaffle(), &out, &["--engine", "postgres"]);
    assert_eq!(imported.status.code(), Some(0));
    pg_exec(&db.url, &migrations());
    build_models(&out, &mut |sql| {
        pg_try_exec(&db.url, &format!("set search_path = analytics; {sql}"))
    });
    let agreed = diff(&out, Some(&db.url));
    assert_eq!(
        agreed.status.code(),
        Some(0),
        "{}",
        transcript(&agreed, &out)
    );

    pg_exec(
        &db.url,
        "alter table analytics.dim_customers drop column is_returning;
         alter table raw.types alter c_varchar_256 type varchar(257);",
    );
    let drifted = diff(&out, Some(&db.url));
    assert_eq!(drifted.status.code(), Some(1));
    assert_eq!(
        differences(&drifted, &out),
        [
            "dim_customers.is_returning: missing_physical_column",
            "raw_types.c_varchar_256: type_mismatch"
        ]
    );
    without_type_sizes(&out);
    assert_eq!(
        differences(&diff(&out, Some(&db.url)), &out),
        ["dim_customers.is_returning: missing_physical_column"]
    );
}

// ---------------------------------------------------------------------------------------------
// Bad input: a clear error, exit 2, and nothing in --out.

/// The fixture's manifest as JSON, to derive broken ones from.
fn manifest() -> Value {
    let text = std::fs::read_to_string(jaffle().join("target/manifest.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// A copy of the dbt project whose manifest is `text`.
fn project_with_manifest(dir: &Path, text: &str) -> PathBuf {
    let dbt = dir.join("dbt");
    std::fs::create_dir_all(dbt.join("target")).unwrap();
    std::fs::copy(
        jaffle().join("dbt_project.yml"),
        dbt.join("dbt_project.yml"),
    )
    .unwrap();
    std::fs::write(dbt.join("target/manifest.json"), text).unwrap();
    dbt
}

/// Runs the import of `dbt` and returns its transcript, asserting that nothing was written.
fn refused(dir: &Path, dbt: &Path, extra: &[&str]) -> String {
    let out = dir.join("out");
    let result = import(dbt, &out, extra);
    let text = transcript(&result, dir);
    assert_eq!(result.status.code(), Some(2), "{text}");
    assert!(!out.exists(), "--out was written: {text}");
    let leftovers: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with(".sqb"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    text
}

#[test]
fn a_manifest_that_is_not_json_or_not_a_manifest_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for (name, manifest) in [
        ("not json", "{\"metadata\": "),
        ("not a manifest", "{\"nodes\": {}}"),
        ("an array", "[1, 2]"),
        ("a catalog", "{\"metadata\": {\"dbt_schema_version\": \"https://schemas.getdbt.com/dbt/catalog/v1.json\"}}"),
    ] {
        let dir = tmp.path().join(name.replace(' ', "_"));
        let dbt = project_with_manifest(&dir, manifest);
        text.push_str(&format!("## {name}\n{}\n", refused(&dir, &dbt, &[])));
    }
    insta::assert_snapshot!(text);
}

#[test]
fn manifests_of_other_schema_versions_are_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for (version, dbt_version) in [(8, "1.4.9"), (13, "1.12.0")] {
        let mut m = manifest();
        m["metadata"]["dbt_schema_version"] =
            format!("https://schemas.getdbt.com/dbt/manifest/v{version}.json").into();
        m["metadata"]["dbt_version"] = dbt_version.into();
        let dir = tmp.path().join(format!("v{version}"));
        let dbt = project_with_manifest(&dir, &m.to_string());
        text.push_str(&format!("## v{version}\n{}\n", refused(&dir, &dbt, &[])));
    }
    insta::assert_snapshot!(text);
}

#[test]
fn a_parsed_but_not_compiled_manifest_asks_for_dbt_compile() {
    let tmp = tempfile::tempdir().unwrap();
    let mut m = manifest();
    for node in m["nodes"].as_object_mut().unwrap().values_mut() {
        node.as_object_mut().unwrap().remove("compiled_code");
    }
    let dbt = project_with_manifest(tmp.path(), &m.to_string());
    insta::assert_snapshot!(refused(tmp.path(), &dbt, &[]));
}

#[test]
fn an_unknown_adapter_needs_an_engine() {
    let tmp = tempfile::tempdir().unwrap();
    let mut m = manifest();
    m["metadata"]["adapter_type"] = "snowflake".into();
    let dbt = project_with_manifest(tmp.path(), &m.to_string());
    insta::assert_snapshot!(refused(tmp.path(), &dbt, &[]));
    let out = tmp.path().join("out");
    let result = import(&dbt, &out, &["--engine", "duckdb"]);
    assert_eq!(
        result.status.code(),
        Some(0),
        "{}",
        transcript(&result, tmp.path())
    );
}

#[test]
fn a_model_entry_of_the_wrong_shape_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let mut m = manifest();
    m["nodes"]["model.jaffle.fct_orders"]["columns"] = serde_json::json!({"order_id": 7});
    let dbt = project_with_manifest(tmp.path(), &m.to_string());
    let text = refused(tmp.path(), &dbt, &[]);
    assert!(text.contains("entry `model.jaffle.fct_orders`"), "{text}");
    assert!(text.contains("entry `order_id`"), "{text}");
}

#[test]
fn a_ref_to_a_disabled_model_is_reported_and_kept_external() {
    let tmp = tempfile::tempdir().unwrap();
    let mut m = manifest();
    let node = &mut m["nodes"]["model.jaffle.stg_countries"];
    node["depends_on"]["nodes"] = serde_json::json!(["model.jaffle.stg_legacy_orders"]);
    node["compiled_code"] = "select * from \"jaffle\".\"analytics\".\"stg_legacy_orders\"".into();
    let dbt = project_with_manifest(tmp.path(), &m.to_string());
    let out = tmp.path().join("out");
    let result = import(&dbt, &out, &["--format", "json"]);
    assert_eq!(
        result.status.code(),
        Some(0),
        "{}",
        transcript(&result, tmp.path())
    );
    let json: Value = serde_json::from_slice(&result.stdout).unwrap();
    let entry = json["not_carried_over"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["node"] == "model.jaffle.stg_countries")
        .expect("an entry for the model that reads the disabled one");
    insta::assert_json_snapshot!(entry);
    let sql = std::fs::read_to_string(out.join("models/staging/stg_countries.sql")).unwrap();
    assert!(
        sql.contains("\"jaffle\".\"analytics\".\"stg_legacy_orders\""),
        "{sql}"
    );
}

#[test]
fn a_bad_dbt_project_yml_is_located() {
    let tmp = tempfile::tempdir().unwrap();
    let dbt = project_with_manifest(tmp.path(), &manifest().to_string());
    std::fs::write(
        dbt.join("dbt_project.yml"),
        "name: jaffle\nmodels: [unclosed\n",
    )
    .unwrap();
    insta::assert_snapshot!(refused(tmp.path(), &dbt, &[]));
    std::fs::remove_file(dbt.join("dbt_project.yml")).unwrap();
    insta::assert_snapshot!("no_dbt_project_yml", refused(tmp.path(), &dbt, &[]));
}

#[test]
fn a_missing_manifest_asks_for_dbt_compile() {
    let tmp = tempfile::tempdir().unwrap();
    let dbt = project_with_manifest(tmp.path(), "");
    std::fs::remove_file(dbt.join("target/manifest.json")).unwrap();
    insta::assert_snapshot!(refused(tmp.path(), &dbt, &[]));
}

#[test]
fn a_non_empty_out_is_refused_unless_forced() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("keep.txt"), "mine").unwrap();
    let result = import(&jaffle(), &out, &[]);
    insta::assert_snapshot!(transcript(&result, tmp.path()));
    assert_eq!(result.status.code(), Some(2));
    assert_eq!(
        std::fs::read_to_string(out.join("keep.txt")).unwrap(),
        "mine"
    );

    let forced = import(&jaffle(), &out, &["--force"]);
    assert_eq!(
        forced.status.code(),
        Some(0),
        "{}",
        transcript(&forced, tmp.path())
    );
    assert!(!out.join("keep.txt").exists());
    assert!(out.join("sqb.toml").exists());
    let names: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["out"], "the old directory was left beside it");

    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    assert_eq!(import(&jaffle(), &empty, &[]).status.code(), Some(0));
}

#[test]
fn an_interrupted_import_leaves_out_as_it_was() {
    for fault in ["import-written", "sigint:import-written"] {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        let result = run(sqb()
            .env("SQB_FAULT_AFTER", fault)
            .args(["import", "dbt"])
            .arg(jaffle())
            .arg("--out")
            .arg(&out));
        assert_ne!(result.status.code(), Some(0), "{fault}");
        assert!(!out.exists(), "{fault}: --out was written");
        if fault.starts_with("sigint") {
            assert_eq!(result.status.code(), Some(130));
            let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
            assert!(left.is_empty(), "{fault}: the staging directory was left");
        }
    }
}

#[test]
fn sql_that_dbt_compiled_from_the_warehouse_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let mut m = manifest();
    let node = &mut m["nodes"]["model.jaffle.fct_orders"];
    // Compiled against a warehouse where the table existed: `is_incremental()` was true.
    let code = node["compiled_code"].as_str().unwrap().to_string()
        + "\nwhere orders.ordered_at > (select max(ordered_at) from \"jaffle\".\"analytics\".\"fct_orders\")";
    node["compiled_code"] = code.into();
    let node = &mut m["nodes"]["model.jaffle.dim_customers"];
    node["depends_on"]["macros"] = serde_json::json!(["macro.dbt_utils.star"]);
    let dbt = project_with_manifest(tmp.path(), &m.to_string());
    let out = tmp.path().join("out");
    let result = import(&dbt, &out, &["--format", "json"]);
    // No cycle: the model's own table stays external.
    let entries = not_carried(
        &result,
        tmp.path(),
        &["incremental branch", "compile-time macro"],
    );
    insta::assert_json_snapshot!(entries);
    let sql = std::fs::read_to_string(out.join("models/marts/fct_orders.sql")).unwrap();
    assert!(
        sql.ends_with("from \"jaffle\".\"analytics\".\"fct_orders\")\n"),
        "{sql}"
    );
}

/// dbt's parents of each model it builds from SQL, as sqb names: an ephemeral parent stands for
/// its own parents (dbt inlines it).
fn dbt_parents(
    manifest: &Value,
) -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    let nodes = manifest["nodes"].as_object().unwrap();
    let sources = manifest["sources"].as_object().unwrap();
    let sqb_name = |id: &str| -> String {
        if let Some(s) = sources.get(id) {
            return format!(
                "{}_{}",
                s["source_name"].as_str().unwrap(),
                s["name"].as_str().unwrap()
            );
        }
        let node = &nodes[id];
        let name = node["name"].as_str().unwrap();
        match &node["version"] {
            Value::Null => name.to_string(),
            v => format!("{name}_v{}", v.to_string().trim_matches('"')),
        }
    };
    let ephemeral = |id: &str| {
        nodes
            .get(id)
            .is_some_and(|n| n["config"]["materialized"] == "ephemeral")
    };
    fn expand(
        id: &str,
        nodes: &serde_json::Map<String, Value>,
        ephemeral: &dyn Fn(&str) -> bool,
        out: &mut Vec<String>,
    ) {
        for dep in nodes[id]["depends_on"]["nodes"].as_array().unwrap() {
            let dep = dep.as_str().unwrap();
            match ephemeral(dep) {
                true => expand(dep, nodes, ephemeral, out),
                false => out.push(dep.to_string()),
            }
        }
    }
    let mut parents = std::collections::BTreeMap::new();
    for (id, node) in nodes {
        let sql_model = node["resource_type"] == "model" && node["language"] == "sql";
        if !sql_model || ephemeral(id) {
            continue;
        }
        let mut deps = Vec::new();
        expand(id, nodes, &ephemeral, &mut deps);
        parents.insert(sqb_name(id), deps.iter().map(|d| sqb_name(d)).collect());
    }
    parents
}

#[test]
fn the_imported_dag_is_dbts() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("shop");
    assert_eq!(import(&jaffle(), &out, &[]).status.code(), Some(0));
    let project = sqb::project::Project::load(&out).unwrap();
    let (diags, graph) =
        sqb::compile::compile_with_graph(&project, sqb::compile::Options { sql_analysis: true });
    assert!(diags.is_empty(), "{diags:?}");
    let resources = sqb::project::all_resources(&project);
    let mut sqb = std::collections::BTreeMap::new();
    for (i, resource) in resources.iter().enumerate() {
        if resource.resource_type() != "model" {
            continue;
        }
        let parents: std::collections::BTreeSet<String> = graph.parents[i]
            .iter()
            .map(|&p| resources[p].name().to_string())
            .collect();
        sqb.insert(resource.name().to_string(), parents);
    }
    assert_eq!(sqb, dbt_parents(&manifest()));
}

#[test]
fn metricflow_without_a_sqb_form_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let mut m = manifest();
    let sm = &mut m["semantic_models"]["semantic_model.jaffle.orders"];
    sm["measures"][1]["agg"] = "percentile".into();
    // An expression dimension is carried as one (`expr`), and not reported.
    sm["dimensions"][1]["expr"] = "upper(status)".into();
    let metrics = m["metrics"].as_object_mut().unwrap();
    let mut ratio = metrics["metric.jaffle.revenue"].clone();
    ratio["name"] = "revenue_share".into();
    ratio["type"] = "ratio".into();
    ratio["type_params"]["numerator"] = serde_json::json!({"name": "revenue"});
    ratio["type_params"]["denominator"] = serde_json::json!({"name": "revenue", "filter": null});
    let mut filtered = metrics["metric.jaffle.revenue"].clone();
    filtered["name"] = "completed_revenue".into();
    filtered["filter"] = serde_json::json!({"where_filters": [{"where_sql_template": "{{ Dimension('orders__status') }} = 'completed'"}]});
    metrics.insert("metric.jaffle.completed_revenue".into(), filtered);
    let mut derived = metrics["metric.jaffle.revenue"].clone();
    derived["name"] = "revenue_growth".into();
    derived["type"] = "derived".into();
    metrics.insert("metric.jaffle.revenue_share".into(), ratio);
    metrics.insert("metric.jaffle.revenue_growth".into(), derived);
    let dbt = project_with_manifest(tmp.path(), &m.to_string());
    let out = tmp.path().join("out");
    let result = import(&dbt, &out, &["--format", "json"]);
    let entries = not_carried(&result, tmp.path(), &["semantic model", "metric"]);
    insta::assert_json_snapshot!(entries);
    insta::assert_snapshot!(std::fs::read_to_string(
        out.join("contracts/metrics/revenue_share.toml")
    )
    .unwrap());
    assert!(!out.join("contracts/metrics/revenue_growth.toml").exists());
    assert!(!out
        .join("contracts/metrics/completed_revenue.toml")
        .exists());
}

/// A successful JSON import's report entries of these kinds.
fn not_carried(result: &Output, root: &Path, kinds: &[&str]) -> Vec<Value> {
    assert_eq!(
        result.status.code(),
        Some(0),
        "{}",
        transcript(result, root)
    );
    let json: Value = serde_json::from_slice(&result.stdout).unwrap();
    json["not_carried_over"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| kinds.iter().any(|k| e["kind"] == *k))
        .cloned()
        .collect()
}
