//! SQL analysis in `sqb compile` and `sqb lineage`: a realistic project that compiles clean,
//! mutated copies that each fail with the expected code, a corpus of valid SQL over opaque
//! inputs that must never produce an error, on both dialects, and lineage snapshots.

mod common;

use std::path::Path;

use common::*;

fn compile(root: &Path) -> std::process::Output {
    run(sqb()
        .arg("--project-dir")
        .arg(root)
        .args(["compile", "--format", "json"]))
}

fn codes(out: &std::process::Output) -> Vec<String> {
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut codes: Vec<String> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["severity"] != "info")
        .map(|d| d["code"].as_str().unwrap().to_string())
        .collect();
    codes.sort();
    codes.dedup();
    codes
}

/// The realistic project, on DuckDB and its Postgres twin.
const PROJECTS: [&str; 2] = ["testdata/sql_project", "testdata/sql_project_pg"];

fn project_copy(project: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(&repo().join(project), tmp.path());
    tmp
}

#[test]
fn the_realistic_project_compiles_clean() {
    for project in PROJECTS {
        let dir = repo().join(project);
        let out = compile(&dir);
        assert_eq!(out.status.code(), Some(0), "{}", transcript(&out, &dir));
        assert_eq!(
            codes(&out),
            Vec::<String>::new(),
            "{project}: {}",
            transcript(&out, &dir)
        );
    }
}

/// A file, the text to replace in it, its replacement, and the codes that must follow.
type Mutation<'a> = (&'a str, &'a str, &'a str, &'a [&'a str]);

const COMMON_MUTATIONS: &[Mutation] = &[
    (
        "models/customer_orders.sql",
        "SELECT c.customer_id, c.name,",
        "SELECT c.customer_id, c.full_name AS name,",
        &["E054"],
    ),
    (
        "models/stg_orders.toml",
        "type = \"NUMERIC(12,2)\"",
        "type = \"NUMERIC(10,2)\"",
        &["E052"],
    ),
    (
        "models/customer_orders.toml",
        "type = \"INTEGER\"      # nullable",
        "type = \"INTEGER\"\nnullable = false      # nullable",
        &["E053"],
    ),
    (
        "models/all_events.sql",
        "AS kind FROM stg_orders",
        "AS category FROM stg_orders",
        &["E050", "E051"],
    ),
    (
        "models/customer_orders.sql",
        "WHERE c.name IS NOT NULL",
        "WHERE customer_id > 0",
        &["E055"],
    ),
    (
        "models/stg_customers.sql",
        "FROM raw.customers",
        "FROM stg_customers",
        &["E041"],
    ),
    (
        "models/order_totals.toml",
        "[columns.biggest]",
        "[columns.largest]",
        &["E050"],
    ),
    (
        "models/customer_orders.sql",
        "ORDER BY c.customer_id",
        "ORDER BY c.segment",
        &["E054"],
    ),
];

#[test]
fn each_mutation_fails_with_its_code() {
    let duckdb: &[Mutation] = &[(
        "models/public_orders.sql",
        "EXCLUDE (status)",
        "EXCLUDE (created_at)",
        &["E050", "E051"],
    )];
    let postgres: &[Mutation] = &[(
        "models/public_orders.sql",
        ", o.created_at\n",
        "\n",
        &["E050"],
    )];
    for (project, extra) in PROJECTS.into_iter().zip([duckdb, postgres]) {
        for mutation in COMMON_MUTATIONS.iter().chain(extra) {
            check_mutation(project, mutation);
        }
    }
}

fn check_mutation(project: &str, (file, from, to, expected): &Mutation) {
    let tmp = project_copy(project);
    let path = tmp.path().join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains(from),
        "{project} {file} does not contain {from:?}"
    );
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    let out = compile(tmp.path());
    assert_eq!(
        out.status.code(),
        Some(1),
        "{project} {file}: {}",
        transcript(&out, tmp.path())
    );
    let found = codes(&out);
    for code in *expected {
        assert!(
            found.contains(&code.to_string()),
            "{project} {file}: expected {code}, got {found:?}"
        );
    }
}

/// Valid SQL over relations sqb knows nothing about, with the output names declared: it must
/// never produce an error (warnings and notes are allowed).
const COMMON_CORPUS: &[(&str, &[&str])] = &[
    ("SELECT * FROM ext.events", &["id"]),
    (
        "SELECT e.id, e.payload FROM ext.events AS e",
        &["id", "payload"],
    ),
    (
        "SELECT id, count(*) AS n FROM ext.events GROUP BY id",
        &["id", "n"],
    ),
    (
        "WITH x AS (SELECT * FROM ext.events) SELECT x.id FROM x",
        &["id"],
    ),
    (
        "SELECT a.id, b.val FROM ext.a AS a JOIN ext.b AS b USING (id)",
        &["id", "val"],
    ),
    ("SELECT id FROM ext.a UNION SELECT id FROM ext.b", &["id"]),
    (
        "SELECT id, lag(val) OVER (ORDER BY ts) AS prev FROM ext.series",
        &["id", "prev"],
    ),
    (
        "SELECT DISTINCT id FROM ext.a WHERE id IN (SELECT id FROM ext.b)",
        &["id"],
    ),
    (
        "SELECT coalesce(a.x, b.x) AS x FROM ext.a AS a FULL OUTER JOIN ext.b AS b ON a.id = b.id",
        &["x"],
    ),
    (
        "SELECT id, CASE WHEN val > 0 THEN 'pos' ELSE 'neg' END AS sign FROM ext.a",
        &["id", "sign"],
    ),
    ("SELECT t.* FROM ext.a AS t", &["anything"]),
    (
        "SELECT upper(name) AS name, length(name) AS len FROM ext.people",
        &["name", "len"],
    ),
    ("SELECT id FROM ext.a ORDER BY val DESC LIMIT 10", &["id"]),
    (
        "SELECT x.id, y.id AS other_id FROM ext.a AS x CROSS JOIN ext.a AS y",
        &["id", "other_id"],
    ),
    (
        "SELECT s.total FROM (SELECT sum(val) AS total FROM ext.a) AS s",
        &["total"],
    ),
    ("SELECT k FROM ext.a AS u (k, v)", &["k"]),
    (
        "SELECT a.id FROM ext.a AS a LEFT JOIN ext.b AS b ON b.id = a.id WHERE b.id IS NULL",
        &["id"],
    ),
    (
        "SELECT id, val FROM ext.a WHERE EXISTS (SELECT 1 FROM ext.b WHERE ext.b.id = ext.a.id)",
        &["id", "val"],
    ),
    (
        "SELECT 1 AS one, 'x' AS letter, NULL AS nothing",
        &["one", "letter", "nothing"],
    ),
    (
        "SELECT id, sum(val) FILTER (WHERE val > 0) AS positive FROM ext.a GROUP BY id",
        &["id", "positive"],
    ),
];

const DUCKDB_CORPUS: &[(&str, &[&str])] = &[
    ("SELECT * EXCLUDE (secret) FROM ext.users", &["id"]),
    (
        "SELECT list_transform(xs, x -> x + 1) AS ys FROM ext.lists",
        &["ys"],
    ),
    (
        "SELECT id, val FROM ext.a QUALIFY row_number() OVER (PARTITION BY id ORDER BY val) = 1",
        &["id", "val"],
    ),
    ("SELECT * FROM read_csv('data.csv')", &["a"]),
    ("SELECT id, val FROM ext.a ORDER BY ALL", &["id", "val"]),
];

const POSTGRES_CORPUS: &[(&str, &[&str])] = &[
    ("SELECT generate_series(1, 3) AS n", &["n"]),
    ("SELECT x::text AS y FROM ext.a", &["y"]),
    (
        "SELECT DISTINCT ON (id) id, val FROM ext.a ORDER BY id, ts DESC",
        &["id", "val"],
    ),
    ("SELECT id, val ->> 'k' AS k FROM ext.docs", &["id", "k"]),
];

fn corpus_project(root: &Path, engine: &str, corpus: &[&[(&str, &[&str])]]) {
    let connection = match engine {
        "duckdb" => "engine = \"duckdb\"\npath = \"w.duckdb\"",
        _ => "engine = \"postgres\"\nurl = \"postgres://nobody@db.invalid/x\"",
    };
    write_files(root, &[("sqb.toml", &format!("default_target = \"prod\"\n[connection]\n{connection}\n[targets.prod]\nschema = \"s\"\n"))]);
    for (i, (sql, columns)) in corpus.iter().flat_map(|c| c.iter()).enumerate() {
        let toml: String = columns.iter().map(|c| format!("[columns.{c}]\n")).collect();
        write_files(
            root,
            &[
                (&format!("models/q{i:02}.sql"), &format!("{sql}\n")),
                (&format!("models/q{i:02}.toml"), &toml),
            ],
        );
    }
}

#[test]
fn valid_sql_over_opaque_inputs_never_errors() {
    for (engine, extra) in [("duckdb", DUCKDB_CORPUS), ("postgres", POSTGRES_CORPUS)] {
        let tmp = tempfile::tempdir().unwrap();
        corpus_project(tmp.path(), engine, &[COMMON_CORPUS, extra]);
        let out = compile(tmp.path());
        let errors: Vec<String> = codes(&out)
            .into_iter()
            .filter(|c| c.starts_with('E'))
            .collect();
        assert!(
            errors.is_empty(),
            "{engine}: {}",
            transcript(&out, tmp.path())
        );
        assert_eq!(out.status.code(), Some(0), "{engine}");
    }
}

#[test]
fn no_sql_analysis_turns_the_checks_off() {
    let tmp = project_copy(PROJECTS[0]);
    let path = tmp.path().join("models/all_events.sql");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replacen("AS kind FROM stg_orders", "AS category FROM stg_orders", 1),
    )
    .unwrap();
    let off = run(sqb()
        .arg("--project-dir")
        .arg(tmp.path())
        .args(["compile", "--no-sql-analysis"]));
    assert_eq!(
        off.status.code(),
        Some(0),
        "{}",
        transcript(&off, tmp.path())
    );
    let toml = tmp.path().join("models/all_events.toml");
    let declared = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(&toml, format!("sql_analysis = false\n{declared}")).unwrap();
    assert_eq!(compile(tmp.path()).status.code(), Some(0));
    std::fs::write(&toml, &declared).unwrap();
    assert_eq!(compile(tmp.path()).status.code(), Some(1));
    let project = tmp.path().join("sqb.toml");
    let settings = std::fs::read_to_string(&project).unwrap();
    std::fs::write(
        &project,
        format!("{settings}\n[settings]\nsql_analysis = false\n"),
    )
    .unwrap();
    assert_eq!(compile(tmp.path()).status.code(), Some(0));
}

#[test]
fn lineage_through_ctes_subqueries_and_stars() {
    let dir = repo().join("testdata/sql_project");
    let text = run(sqb().arg("--project-dir").arg(&dir).args([
        "lineage",
        "customer_orders",
        "--include-uses",
    ]));
    assert_eq!(text.status.code(), Some(0), "{}", transcript(&text, &dir));
    insta::assert_snapshot!("customer_orders_text", transcript(&text, &dir));
    let json = run(sqb().arg("--project-dir").arg(&dir).args([
        "lineage",
        "order_totals",
        "--include-uses",
        "--format",
        "json",
    ]));
    insta::assert_snapshot!("order_totals_json", transcript(&json, &dir));
    let shop = repo().join("examples/shop");
    let dim = run(sqb()
        .arg("--project-dir")
        .arg(&shop)
        .args(["lineage", "dim_customers"]));
    insta::assert_snapshot!("shop_dim_customers", transcript(&dim, &shop));
    let missing = run(sqb()
        .arg("--project-dir")
        .arg(&shop)
        .args(["lineage", "dim_customer"]));
    assert_eq!(missing.status.code(), Some(2));
    insta::assert_snapshot!("unknown_model", transcript(&missing, &shop));
}

/// `sqb lineage source:NAME`: each source column and the model columns computed from it (an
/// open source's undeclared columns too), its uses, and the errors that name the way out.
#[test]
fn lineage_of_a_source() {
    let dir = repo().join("testdata/lineage_source");
    let lineage = |args: &[&str]| {
        let out = run(sqb()
            .arg("--project-dir")
            .arg(&dir)
            .arg("lineage")
            .args(args));
        (out.status.code(), transcript(&out, &dir))
    };
    let (code, text) = lineage(&["source:events", "--include-uses"]);
    assert_eq!(code, Some(0), "{text}");
    insta::assert_snapshot!("source_events_text", text);
    let (code, json) = lineage(&["source:events", "--include-uses", "--format", "json"]);
    assert_eq!(code, Some(0), "{json}");
    insta::assert_snapshot!("source_events_json", json);
    let (code, model) = lineage(&["model:stg_events"]);
    assert_eq!(code, Some(0), "{model}");
    insta::assert_snapshot!("model_with_unproven_types", model);
    let mut errors = String::new();
    for args in [["events"], ["source:event"], ["tag:nightly"]] {
        let (code, text) = lineage(&args);
        assert_eq!(code, Some(2), "{text}");
        errors.push_str(&format!("$ sqb lineage {}\n{text}\n", args[0]));
    }
    insta::assert_snapshot!("source_lineage_errors", errors);
}

/// A model's inferred shape reaches the models that read it however they spell its name (any
/// case, quoted), even when its own SQL mentions its name too: the compile keeps a shape
/// only for models that another model's SQL mentions.
#[test]
fn upstream_shapes_reach_readers_spelled_any_way() {
    let readers = [
        ("FROM UP_MODEL", ""),
        ("FROM Up_Model AS u", ""),
        ("FROM \"up_model\"", "alias = \"up_relation\"\n"),
    ];
    for (from, up_toml) in readers {
        let tmp = tempfile::tempdir().unwrap();
        write_files(
            tmp.path(),
            &[
                (
                    "sqb.toml",
                    "default_target = \"prod\"\n[connection]\nengine = \"duckdb\"\npath = \"w.duckdb\"\n[targets.prod]\nschema = \"s\"\n",
                ),
                (
                    "models/up_model.sql",
                    "-- up_model: the upstream\nSELECT CAST(1 AS INTEGER) AS id\n",
                ),
                ("models/up_model.toml", up_toml),
                ("models/down.sql", &format!("SELECT id FROM (SELECT * {from}) AS x\n")),
                (
                    "models/down.toml",
                    "contract = \"enforced\"\n[columns.id]\ntype = \"DATE\"\n",
                ),
            ],
        );
        let out = compile(tmp.path());
        assert_eq!(
            codes(&out),
            vec!["E052".to_string()],
            "{from}: {}",
            transcript(&out, tmp.path())
        );
    }
}

/// A column of a set operation comes from every branch, and its nullability follows the
/// operator (EXCEPT: the first branch's; INTERSECT: non-null where either branch is).
#[test]
fn set_operations_keep_every_branch_and_their_own_nullability() {
    let tmp = project_copy("testdata/compile/set_operation_nullability");
    let dir = tmp.path();
    // Without the one false declaration the compile case pins, the project compiles.
    std::fs::write(
        dir.join("models/either.toml"),
        "[columns.channel]\ntype = \"TEXT\"\n",
    )
    .unwrap();
    let lineage = |model: &str| -> serde_json::Value {
        let out = run(sqb()
            .arg("--project-dir")
            .arg(dir)
            .args(["lineage", model, "--format", "json"]));
        assert_eq!(out.status.code(), Some(0), "{}", transcript(&out, dir));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()["columns"][0].clone()
    };
    let both = lineage("both_channels");
    let upstream: Vec<&str> = both["upstream"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["resource"].as_str().unwrap())
        .collect();
    assert_eq!(upstream, ["sales", "returns"]);
    assert_eq!(both["nullable"], false);
    let only = lineage("only_sales");
    assert_eq!(only["nullable"], false);
    // EXCEPT's values are its first branch's; the second only removes rows.
    assert_eq!(only["upstream"][0]["resource"], "sales");
    assert_eq!(only["upstream"].as_array().unwrap().len(), 1);
    assert_eq!(lineage("in_both")["nullable"], false);
    assert_eq!(lineage("either")["nullable"], true);
}

/// Grouping sets leave a column NULL in the rows of every set it is absent from (the subtotals
/// and the grand total): each model of the fixture runs on DuckDB and Postgres, over a `sales`
/// whose columns are never NULL, and a column holds a NULL exactly where lineage says it may.
#[test]
fn grouping_sets_nullability_is_the_engines() {
    let case = repo().join("testdata/compile/grouping_sets_nullability");
    let models = ["by_rollup", "by_cube", "by_grouping_sets", "kept"];
    let setup = "CREATE TABLE sales (id INTEGER NOT NULL, channel TEXT NOT NULL);
                 INSERT INTO sales VALUES (1, 'web'), (2, 'store');";
    let sql =
        |model: &str| std::fs::read_to_string(case.join(format!("models/{model}.sql"))).unwrap();
    let nulls_in = |rows: Vec<Vec<bool>>| -> Vec<bool> {
        let width = rows.first().map_or(0, Vec::len);
        (0..width).map(|i| rows.iter().any(|r| r[i])).collect()
    };

    let tmp = tempfile::tempdir().unwrap();
    let duck = duckdb::Connection::open_in_memory().unwrap();
    duck.execute_batch(setup).unwrap();
    let pg = TestDb::create("grouping_sets");
    if let Some(db) = &pg {
        pg_exec(&db.url, setup);
    }
    for engine in ["duckdb", "postgres"] {
        let root = tmp.path().join(engine);
        copy_tree(&case, &root);
        if engine == "duckdb" {
            let toml = root.join("sqb.toml");
            let text = std::fs::read_to_string(&toml).unwrap();
            let switched = text.replace(
                "engine = \"postgres\"\nurl = \"postgres://analyst@db.invalid/shop\"",
                "engine = \"duckdb\"\npath = \"w.duckdb\"",
            );
            assert_ne!(text, switched);
            std::fs::write(toml, switched).unwrap();
        }
        for model in models {
            // Without the false declarations the compile case pins, the project compiles.
            let toml = root.join(format!("models/{model}.toml"));
            let text = std::fs::read_to_string(&toml).unwrap();
            std::fs::write(&toml, text.replace("nullable = false\n", "")).unwrap();
        }
        for model in models {
            let rows = match engine {
                "duckdb" => duckdb_nulls(&duck, &sql(model)),
                _ => match &pg {
                    Some(db) => pg_nulls(&db.url, &sql(model)),
                    None => continue,
                },
            };
            let engine_nulls = nulls_in(rows);
            let out = run(sqb()
                .arg("--project-dir")
                .arg(&root)
                .args(["lineage", model, "--format", "json"]));
            assert_eq!(out.status.code(), Some(0), "{}", transcript(&out, &root));
            let lineage: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let proven: Vec<bool> = lineage["columns"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["nullable"] == true)
                .collect();
            assert_eq!(proven, engine_nulls, "{engine}: {model}");
        }
    }
    assert!(
        sql("by_rollup").contains("ROLLUP") && sql("kept").contains("ROLLUP"),
        "the fixture still rolls up"
    );
}

/// Per row, whether each column is NULL.
fn duckdb_nulls(conn: &duckdb::Connection, sql: &str) -> Vec<Vec<bool>> {
    let mut stmt = conn.prepare(sql).unwrap();
    let mut rows = stmt.query([]).unwrap();
    let mut out = Vec::new();
    while let Some(row) = rows.next().unwrap() {
        let width = row.as_ref().column_count();
        out.push(
            (0..width)
                .map(|i| matches!(row.get_ref(i).unwrap(), duckdb::types::ValueRef::Null))
                .collect(),
        );
    }
    out
}

/// `WITH orders AS (SELECT * FROM orders)`: inside a CTE's own definition its name is not in
/// scope, so the inner `orders` is the model. On both dialects the edge is there: lineage names
/// the model's columns, its declared types and nullability prove the reader's, and a column it
/// does not declare is E054. Under WITH RECURSIVE the name is the CTE's own, never the model's.
#[test]
fn a_cte_named_like_its_input_reads_the_model() {
    let case = repo().join("testdata/cte_shadowing");
    for engine in ["duckdb", "postgres"] {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        case_project(&case, engine, root);
        let out = compile(root);
        assert_eq!(
            codes(&out),
            Vec::<String>::new(),
            "{engine}: {}",
            transcript(&out, root)
        );
        let out = run(sqb().arg("--project-dir").arg(root).args([
            "lineage",
            "recent_orders",
            "--format",
            "json",
        ]));
        assert_eq!(out.status.code(), Some(0), "{}", transcript(&out, root));
        let lineage: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        for column in lineage["columns"].as_array().unwrap() {
            let name = &column["name"];
            assert_eq!(
                column["upstream"],
                serde_json::json!([{"resource_type": "model", "resource": "orders", "column": name}]),
                "{engine}"
            );
            assert_eq!(column["nullable"], false, "{engine}: {name}");
        }
        let sql = root.join("models/recent_orders.sql");
        let text = std::fs::read_to_string(&sql).unwrap();
        std::fs::write(
            &sql,
            text.replace("SELECT id, amount", "SELECT id, amount, discount"),
        )
        .unwrap();
        let out = compile(root);
        assert!(
            codes(&out).contains(&"E054".to_string()),
            "{engine}: {}",
            transcript(&out, root)
        );
        std::fs::copy(root.join("variants/recursive.sql"), &sql).unwrap();
        let out = compile(root);
        assert_eq!(
            codes(&out),
            Vec::<String>::new(),
            "{engine}: {}",
            transcript(&out, root)
        );
    }
}

/// An unqualified column over relations of unknown shape belongs to the one relation that
/// declares it; one that no relation declares is `unknown`, with the candidates, in text and
/// JSON: never "(no upstream column)", which is what `count(*)` reads. Same on both dialects.
#[test]
fn unattributed_columns_name_their_candidates() {
    let case = repo().join("testdata/lineage_attribution");
    let mut seen = Vec::new();
    for engine in ["duckdb", "postgres"] {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        case_project(&case, engine, root);
        let mut both = String::new();
        for format in ["text", "json"] {
            let out = run(sqb().arg("--project-dir").arg(root).args([
                "lineage",
                "store_sales",
                "--format",
                format,
            ]));
            both.push_str(&expect_exit(
                &out,
                0,
                &format!("lineage store_sales --format {format}"),
                root,
            ));
        }
        seen.push(both);
    }
    assert_eq!(seen[0], seen[1], "the dialects attribute alike");
    insta::assert_snapshot!("unattributed_columns", seen[0]);
}
