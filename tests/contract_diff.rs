//! `sqb contract diff` against real DuckDB files and a real PostgreSQL server: every finding
//! kind on both engines, the tricky types, odd identifiers, connection failures, selectors,
//! the read-only guarantee, and one snapshot per output format.

mod common;

use std::path::Path;

use common::*;

const PG_HEADER: &str = "name = \"t\"\ndefault_target = \"prod\"\n\n[connection]\nengine = \"postgres\"\n\n[targets.prod]\nschema = \"analytics\"\n";
const DUCK_HEADER: &str = "name = \"t\"\ndefault_target = \"prod\"\n\n[connection]\nengine = \"duckdb\"\npath = \"w.duckdb\"\n\n[targets.prod]\nschema = \"analytics\"\n";

/// Runs `sqb contract diff` in `root`, with `url` as SQB_DATABASE_URL when given.
fn diff(root: &Path, url: Option<&str>, args: &[&str]) -> std::process::Output {
    let mut cmd = sqb();
    cmd.arg("--project-dir")
        .arg(root)
        .args(["contract", "diff"])
        .args(args);
    if let Some(url) = url {
        cmd.env("SQB_DATABASE_URL", url);
    }
    run(&mut cmd)
}

fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// (resource, kind, column) of every finding, for compact assertions.
fn kinds(report: &serde_json::Value) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for r in report["resources"].as_array().unwrap() {
        for f in r["findings"].as_array().unwrap() {
            out.push((
                r["resource_name"].as_str().unwrap().to_string(),
                f["kind"].as_str().unwrap().to_string(),
                f["column"].as_str().unwrap_or("").to_string(),
            ));
        }
    }
    out.sort();
    out
}

fn triples(items: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    let mut v: Vec<_> = items
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect();
    v.sort();
    v
}

// ---------------------------------------------------------------------------------------------
// Every finding kind

const KINDS_SIDECAR: &str = r#"contract = "enforced"

[columns.OrderID]
type = "INTEGER"
nullable = false

[columns.amount]
type = "INTEGER"

[columns.note]

[columns.flag]
type = "BOOLEAN"
nullable = false

[columns.gone]
type = "DATE"

[columns.code]
type = "VARCHAR(3)"
"#;

fn kinds_project(root: &Path, header: &str) {
    write_files(
        root,
        &[
            ("sqb.toml", header),
            ("models/orders.sql", "SELECT * FROM analytics.orders\n"),
            ("models/orders.toml", KINDS_SIDECAR),
            ("models/ghost.sql", "SELECT * FROM analytics.ghost\n"),
            ("models/broken.sql", "SELECT * FROM analytics.broken\n"),
        ],
    );
}

const KINDS_EXPECTED: &[(&str, &str, &str)] = &[
    ("ghost", "relation_missing", ""),
    ("orders", "name_conflict", "OrderID"),
    ("orders", "type_mismatch", "amount"),
    ("orders", "missing_type", "note"),
    ("orders", "nullability_mismatch", "flag"),
    ("orders", "missing_physical_column", "gone"),
    ("orders", "undeclared_physical_column", "extra"),
];

#[test]
fn every_finding_kind_on_duckdb() {
    let tmp = tempfile::tempdir().unwrap();
    kinds_project(tmp.path(), DUCK_HEADER);
    duckdb_file(
        &tmp.path().join("w.duckdb"),
        "CREATE SCHEMA analytics;
         CREATE TABLE analytics.orders (orderid INTEGER NOT NULL, amount BIGINT, note VARCHAR, flag BOOLEAN, extra INTEGER, code VARCHAR);
         CREATE TABLE analytics.base (id INTEGER);
         CREATE VIEW analytics.broken AS SELECT id FROM analytics.base;
         DROP TABLE analytics.base;",
    );
    let out = diff(tmp.path(), None, &["--from", "prod", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        transcript(&out, tmp.path())
    );
    let report = json(&out);
    let mut expected = KINDS_EXPECTED.to_vec();
    expected.push(("broken", "inspection_unavailable", ""));
    assert_eq!(kinds(&report), triples(&expected));
    insta::assert_snapshot!(transcript(&out, tmp.path()));
}

#[test]
fn every_finding_kind_on_postgres() {
    let Some(db) = TestDb::create("kinds") else {
        return;
    };
    pg_exec(
        &db.url,
        "CREATE SCHEMA analytics;
         CREATE TABLE analytics.orders (orderid integer NOT NULL, amount bigint, note text, flag boolean, extra integer, code varchar(3));
         CREATE VIEW analytics.broken AS SELECT 1 AS id;",
    );
    let tmp = tempfile::tempdir().unwrap();
    kinds_project(tmp.path(), PG_HEADER);
    let out = diff(tmp.path(), Some(&db.url), &["--from", "prod", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        transcript(&out, tmp.path())
    );
    let report = json(&out);
    // Postgres catalogs always expose a relation's columns: the view `broken` is simply read.
    let mut expected = KINDS_EXPECTED.to_vec();
    expected.push(("broken", "undeclared_physical_column", "id"));
    assert_eq!(kinds(&report), triples(&expected));
    let text = transcript(&out, tmp.path()).replace(&db.name, "[DB]");
    insta::assert_snapshot!(text);
}

// ---------------------------------------------------------------------------------------------
// Tricky types

const PG_TYPES: &str = "
CREATE SCHEMA analytics;
CREATE TYPE analytics.mood AS ENUM ('happy', 'sad');
CREATE DOMAIN analytics.positive_int AS integer CHECK (VALUE > 0);
CREATE TABLE analytics.types (
    v255 varchar(255), t text, n numeric(12,2), nb numeric, ts timestamptz, tags text[],
    moods analytics.mood[], m analytics.mood, p analytics.positive_int, u uuid, j jsonb,
    f float8, r real, c char(3), i4 int4[], big bigint NOT NULL
);
CREATE MATERIALIZED VIEW analytics.mv AS SELECT 1::int AS id, 'x'::varchar(10) AS name;
CREATE TABLE analytics.events (id int NOT NULL, at date NOT NULL) PARTITION BY RANGE (at);
CREATE TABLE analytics.events_2026 PARTITION OF analytics.events FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
CREATE EXTENSION file_fdw;
CREATE SERVER files FOREIGN DATA WRAPPER file_fdw;
CREATE FOREIGN TABLE analytics.ft (id integer NOT NULL, name text) SERVER files OPTIONS (filename '/dev/null');
";

const PG_TYPES_AGREE: &str = r#"[columns.v255]
type = "VARCHAR(255)"
[columns.t]
type = "TEXT"
[columns.n]
type = "NUMERIC(12,2)"
[columns.nb]
type = "NUMERIC"
[columns.ts]
type = "TIMESTAMPTZ"
[columns.tags]
type = "TEXT[]"
[columns.moods]
type = "mood[]"
[columns.m]
type = "mood"
[columns.p]
type = "INTEGER"
[columns.u]
type = "UUID"
[columns.j]
type = "JSONB"
[columns.f]
type = "FLOAT"
[columns.r]
type = "REAL"
[columns.c]
type = "CHAR(3)"
[columns.i4]
type = "INTEGER[]"
[columns.big]
type = "INT8"
nullable = false
"#;

const PG_TYPES_DRIFT: &str = r#"alias = "types"
[columns.v255]
type = "TEXT"
[columns.t]
type = "VARCHAR(255)"
[columns.n]
type = "NUMERIC(12,3)"
[columns.nb]
type = "NUMERIC(18,2)"
[columns.ts]
type = "TIMESTAMP"
[columns.moods]
type = "TEXT[]"
[columns.m]
type = "flavour"
[columns.j]
type = "JSON"
[columns.f]
type = "REAL"
[columns.c]
type = "VARCHAR(3)"
[columns.big]
type = "INTEGER"
"#;

#[test]
fn postgres_tricky_types() {
    let Some(db) = TestDb::create("types") else {
        return;
    };
    pg_exec(&db.url, PG_TYPES);
    let tmp = tempfile::tempdir().unwrap();
    write_files(
        tmp.path(),
        &[
            ("sqb.toml", PG_HEADER),
            ("enums/mood.toml", "[members]\nHAPPY = \"happy\"\nSAD = \"sad\"\n"),
            ("enums/flavour.toml", "[members]\nSWEET = \"sweet\"\nSOUR = \"sour\"\n"),
            ("models/types.sql", "SELECT * FROM analytics.types\n"),
            ("models/types.toml", PG_TYPES_AGREE),
            ("models/types_drift.sql", "SELECT * FROM analytics.types_drift\n"),
            ("models/types_drift.toml", PG_TYPES_DRIFT),
            ("models/mv.sql", "SELECT * FROM analytics.mv\n"),
            ("models/mv.toml", "[columns.id]\ntype = \"INTEGER\"\nnullable = false\n[columns.name]\ntype = \"VARCHAR(10)\"\n"),
            ("models/events.sql", "SELECT * FROM analytics.events\n"),
            ("models/events.toml", "[columns.id]\ntype = \"INTEGER\"\nnullable = false\n[columns.at]\ntype = \"DATE\"\nnullable = false\n"),
            ("models/events_2026.sql", "SELECT * FROM analytics.events_2026\n"),
            ("models/ft.sql", "SELECT * FROM analytics.ft\n"),
            ("models/ft.toml", "[columns.id]\ntype = \"INTEGER\"\nnullable = false\n[columns.name]\ntype = \"TEXT\"\nnullable = false\n"),
        ],
    );
    let agree = diff(
        tmp.path(),
        Some(&db.url),
        &["--from", "prod", "--json", "-s", "types", "mv", "events"],
    );
    assert_eq!(
        agree.status.code(),
        Some(0),
        "{}",
        transcript(&agree, tmp.path())
    );
    // Foreign tables record NOT NULL, so nullability is compared there too.
    let foreign = diff(
        tmp.path(),
        Some(&db.url),
        &["--from", "prod", "--json", "-s", "ft"],
    );
    assert_eq!(
        kinds(&json(&foreign)),
        triples(&[("ft", "nullability_mismatch", "name")])
    );
    let drift = diff(
        tmp.path(),
        Some(&db.url),
        &[
            "--from",
            "prod",
            "--json",
            "-s",
            "types_drift",
            "events_2026",
        ],
    );
    assert_eq!(drift.status.code(), Some(1));
    let report = json(&drift);
    let expected: Vec<(&str, &str, &str)> = [
        "v255", "t", "n", "nb", "ts", "moods", "m", "j", "f", "c", "big",
    ]
    .iter()
    .map(|c| ("types_drift", "type_mismatch", *c))
    .chain([("events_2026", "relation_missing", "")])
    .chain(
        ["tags", "p", "u", "r", "i4"]
            .iter()
            .map(|c| ("types_drift", "undeclared_physical_column", *c)),
    )
    .collect();
    assert_eq!(kinds(&report), triples(&expected));
    let drifted = report["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["resource_name"] == "types_drift")
        .unwrap();
    let physical: Vec<&str> = drifted["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "type_mismatch")
        .map(|f| f["physical_type"].as_str().unwrap())
        .collect();
    assert_eq!(
        physical,
        [
            "character varying(255)",
            "text",
            "numeric(12,2)",
            "numeric",
            "timestamp with time zone",
            "analytics.mood[]",
            "analytics.mood",
            "jsonb",
            "double precision",
            "character(3)",
            "bigint"
        ]
    );
}

const DUCK_TYPES: &str = "
CREATE SCHEMA analytics;
CREATE TYPE mood AS ENUM ('happy', 'sad');
CREATE TABLE analytics.types (
    s STRUCT(a INTEGER, b VARCHAR), m MAP(VARCHAR, INTEGER), l INTEGER[], h HUGEINT,
    e ENUM('x', 'y'), md mood, fa INTEGER[3], u UBIGINT, v VARCHAR, d DECIMAL(18,3), f FLOAT,
    dbl DOUBLE, ts TIMESTAMPTZ, un UNION(n INTEGER, s VARCHAR), big BIGINT NOT NULL
);
";

const DUCK_TYPES_AGREE: &str = r#"[columns.s]
type = "STRUCT(a INTEGER, b TEXT)"
[columns.m]
type = "MAP(VARCHAR, INTEGER)"
[columns.l]
type = "LIST(INTEGER)"
[columns.h]
type = "HUGEINT"
[columns.e]
type = "xy"
[columns.md]
type = "mood"
[columns.fa]
type = "INTEGER[3]"
[columns.u]
type = "UBIGINT"
[columns.v]
type = "VARCHAR(255)"
[columns.d]
type = "NUMERIC(18,3)"
[columns.f]
type = "FLOAT"
[columns.dbl]
type = "DOUBLE PRECISION"
[columns.ts]
type = "TIMESTAMPTZ"
[columns.un]
type = "UNION(n INTEGER, s VARCHAR)"
[columns.big]
type = "BIGINT"
nullable = false
"#;

const DUCK_TYPES_DRIFT: &str = r#"alias = "types"
[columns.s]
type = "STRUCT(a BIGINT, b VARCHAR)"
[columns.m]
type = "MAP(VARCHAR, BIGINT)"
[columns.l]
type = "BIGINT[]"
[columns.h]
type = "BIGINT"
[columns.e]
type = "ENUM('x', 'z')"
[columns.fa]
type = "INTEGER[4]"
[columns.u]
type = "BIGINT"
[columns.d]
type = "NUMERIC(18,2)"
[columns.f]
type = "DOUBLE"
[columns.ts]
type = "TIMESTAMP"
"#;

#[test]
fn duckdb_tricky_types() {
    let tmp = tempfile::tempdir().unwrap();
    write_files(
        tmp.path(),
        &[
            ("sqb.toml", DUCK_HEADER),
            (
                "enums/mood.toml",
                "[members]\nHAPPY = \"happy\"\nSAD = \"sad\"\n",
            ),
            ("enums/xy.toml", "[members]\nX = \"x\"\nY = \"y\"\n"),
            ("models/types.sql", "SELECT * FROM analytics.types\n"),
            ("models/types.toml", DUCK_TYPES_AGREE),
            (
                "models/types_drift.sql",
                "SELECT * FROM analytics.types_drift\n",
            ),
            ("models/types_drift.toml", DUCK_TYPES_DRIFT),
        ],
    );
    duckdb_file(&tmp.path().join("w.duckdb"), DUCK_TYPES);
    let agree = diff(
        tmp.path(),
        None,
        &["--from", "prod", "--json", "-s", "types"],
    );
    assert_eq!(
        agree.status.code(),
        Some(0),
        "{}",
        transcript(&agree, tmp.path())
    );
    let drift = diff(
        tmp.path(),
        None,
        &["--from", "prod", "--json", "-s", "types_drift"],
    );
    assert_eq!(drift.status.code(), Some(1));
    let expected: Vec<(&str, &str, &str)> = ["s", "m", "l", "h", "e", "fa", "u", "d", "f", "ts"]
        .iter()
        .map(|c| ("types_drift", "type_mismatch", *c))
        .chain(
            ["md", "v", "dbl", "un", "big"]
                .iter()
                .map(|c| ("types_drift", "undeclared_physical_column", *c)),
        )
        .collect();
    assert_eq!(kinds(&json(&drift)), triples(&expected));
}

// ---------------------------------------------------------------------------------------------
// Odd identifiers

const ODD_SQL: &str = r#"CREATE SCHEMA "Odd Schema";
CREATE TABLE "Odd Schema"."Order Items" ("Order ID" integer NOT NULL, "select" text, "naïve" integer, "quote""d" integer, "MixedCase" integer, "a.b" integer);
"#;

const ODD_SIDECAR: &str = r#"alias = "Order Items"
contract = "enforced"

[columns."Order ID"]
type = "INTEGER"
nullable = false

[columns.select]
type = "TEXT"

[columns."naïve"]
type = "INTEGER"

[columns.'quote"d']
type = "INTEGER"

[columns.MixedCase]
type = "INTEGER"

[columns."a.b"]
type = "INTEGER"
"#;

fn odd_project(root: &Path, header: &str) {
    let header = header.replace("schema = \"analytics\"", "schema = \"Odd Schema\"");
    write_files(
        root,
        &[
            ("sqb.toml", &header),
            (
                "models/order_items.sql",
                "SELECT * FROM \"Odd Schema\".\"Order Items\"\n",
            ),
            ("models/order_items.toml", ODD_SIDECAR),
            (
                "models/order_items_lower.sql",
                "SELECT * FROM analytics.order_items_lower\n",
            ),
            (
                "models/order_items_lower.toml",
                "alias = \"Order Items\"\n\n[columns.mixedcase]\ntype = \"INTEGER\"\n",
            ),
        ],
    );
}

#[test]
fn odd_identifiers_on_postgres() {
    let Some(db) = TestDb::create("odd") else {
        return;
    };
    pg_exec(&db.url, ODD_SQL);
    let tmp = tempfile::tempdir().unwrap();
    odd_project(tmp.path(), PG_HEADER);
    let out = diff(
        tmp.path(),
        Some(&db.url),
        &["--from", "prod", "--json", "-s", "order_items"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        transcript(&out, tmp.path())
    );
    assert_eq!(
        json(&out)["resources"][0]["relation"],
        format!("{}.\"Odd Schema\".\"Order Items\"", db.name)
    );
    let lower = diff(
        tmp.path(),
        Some(&db.url),
        &["--from", "prod", "--json", "-s", "order_items_lower"],
    );
    let report = json(&lower);
    let conflict = &report["resources"][0]["findings"][0];
    assert_eq!(conflict["kind"], "name_conflict");
    assert_eq!(conflict["column"], "mixedcase");
    assert_eq!(conflict["physical_column"], "MixedCase");
}

#[test]
fn odd_identifiers_on_duckdb() {
    let tmp = tempfile::tempdir().unwrap();
    odd_project(tmp.path(), DUCK_HEADER);
    duckdb_file(&tmp.path().join("w.duckdb"), ODD_SQL);
    let out = diff(
        tmp.path(),
        None,
        &["--from", "prod", "--json", "-s", "order_items"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        transcript(&out, tmp.path())
    );
    let lower = diff(
        tmp.path(),
        None,
        &["--from", "prod", "--json", "-s", "order_items_lower"],
    );
    assert_eq!(
        json(&lower)["resources"][0]["findings"][0]["kind"],
        "name_conflict"
    );
}

// ---------------------------------------------------------------------------------------------
// The shop example on both engines, and every output format

fn shop_copy(root: &Path) {
    copy_tree(&repo().join("examples/shop"), root);
    let _ = std::fs::remove_file(root.join("warehouse.duckdb"));
}

/// The shop example with its connection switched to Postgres (the URL comes from the test).
fn shop_copy_on_postgres(root: &Path) {
    shop_copy(root);
    let toml = std::fs::read_to_string(root.join("sqb.toml")).unwrap();
    std::fs::write(
        root.join("sqb.toml"),
        toml.replace("engine = \"duckdb\"", "engine = \"postgres\""),
    )
    .unwrap();
}

#[test]
fn shop_example_on_duckdb_in_every_format() {
    let tmp = tempfile::tempdir().unwrap();
    shop_copy(tmp.path());
    duckdb_file(&tmp.path().join("warehouse.duckdb"), &shop_migrations());
    let prod = diff(tmp.path(), None, &["--from", "prod"]);
    assert_eq!(
        prod.status.code(),
        Some(0),
        "{}",
        transcript(&prod, tmp.path())
    );
    insta::assert_snapshot!("shop_prod_text", transcript(&prod, tmp.path()));
    for format in ["text", "json", "markdown", "junit", "github"] {
        let out = diff(tmp.path(), None, &["--from", "dev", "--format", format]);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{format}: {}",
            transcript(&out, tmp.path())
        );
        insta::assert_snapshot!(format!("shop_dev_{format}"), transcript(&out, tmp.path()));
    }
}

#[test]
fn shop_example_on_postgres() {
    let Some(db) = TestDb::create("shop") else {
        return;
    };
    pg_exec(&db.url, &shop_migrations());
    let tmp = tempfile::tempdir().unwrap();
    shop_copy(tmp.path());
    let toml = std::fs::read_to_string(tmp.path().join("sqb.toml")).unwrap();
    let toml = toml.replace(
        "engine = \"duckdb\"\npath = \"warehouse.duckdb\"",
        "engine = \"postgres\"\nurl = \"postgres://nobody@127.0.0.1:1/nothing\"",
    );
    std::fs::write(tmp.path().join("sqb.toml"), toml).unwrap();
    // SQB_DATABASE_URL overrides the project's url.
    let prod = diff(tmp.path(), Some(&db.url), &["--from", "prod"]);
    assert_eq!(
        prod.status.code(),
        Some(0),
        "{}",
        transcript(&prod, tmp.path())
    );
    let dev = diff(tmp.path(), Some(&db.url), &["--from", "dev", "--json"]);
    assert_eq!(dev.status.code(), Some(1));
    insta::assert_snapshot!(transcript(&dev, tmp.path()).replace(&db.name, "[DB]"));
}

#[test]
fn output_file_is_written_atomically_and_stdout_stays_empty() {
    let tmp = tempfile::tempdir().unwrap();
    shop_copy(tmp.path());
    duckdb_file(&tmp.path().join("warehouse.duckdb"), &shop_migrations());
    let report = tmp.path().join("drift.json");
    let out = diff(
        tmp.path(),
        None,
        &[
            "--from",
            "dev",
            "--json",
            "--output",
            report.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(written["summary"]["differing"], 2);
    let bad = diff(
        tmp.path(),
        None,
        &["--from", "dev", "--output", "/nonexistent-dir/x.txt"],
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("/nonexistent-dir/x.txt"));
}

// ---------------------------------------------------------------------------------------------
// Selectors

fn shop_with_warehouse() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    shop_copy(tmp.path());
    duckdb_file(&tmp.path().join("warehouse.duckdb"), &shop_migrations());
    tmp
}

fn selected(root: &Path, args: &[&str]) -> Vec<String> {
    let mut all = vec!["--from", "prod", "--json"];
    all.extend_from_slice(args);
    let out = diff(root, None, &all);
    assert!(out.status.code() != Some(2), "{}", transcript(&out, root));
    json(&out)["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{}:{}",
                r["resource_type"].as_str().unwrap(),
                r["resource_name"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn selectors_union_intersect_and_exclude() {
    let tmp = shop_with_warehouse();
    let root = tmp.path();
    // Resources come in project order: models by path, then sources in file order.
    assert_eq!(
        selected(root, &["-s", "stg_*"]),
        ["model:stg_customers", "model:stg_orders"]
    );
    assert_eq!(
        selected(root, &["-s", "model:fct_orders", "source:raw_customers"]),
        ["model:fct_orders", "source:raw_customers"]
    );
    assert_eq!(
        selected(root, &["-s", "tag:commerce"]),
        [
            "model:dim_customers",
            "model:fct_orders",
            "model:stg_orders",
            "source:raw_orders"
        ]
    );
    assert_eq!(
        selected(root, &["-s", "tag:commerce,source:*"]),
        ["source:raw_orders"]
    );
    assert_eq!(
        selected(root, &["-s", "path:models/marts"]),
        ["model:dim_customers", "model:fct_orders"]
    );
    assert_eq!(
        selected(root, &["-s", "models/staging"]),
        ["model:stg_customers", "model:stg_orders"]
    );
    assert_eq!(
        selected(
            root,
            &["-s", "source:raw_*", "--exclude", "source:raw_orders"]
        ),
        ["source:raw_customers"]
    );
    assert_eq!(selected(root, &[]).len(), 6);
    std::fs::write(
        root.join("sel.txt"),
        "# nightly\nfct_orders\n\nsource:raw_orders\n",
    )
    .unwrap();
    let file = root.join("sel.txt");
    assert_eq!(
        selected(root, &["--select-file", file.to_str().unwrap()]),
        ["model:fct_orders", "source:raw_orders"]
    );
}

#[test]
fn graph_operators_follow_the_model_dag() {
    let tmp = shop_with_warehouse();
    let root = tmp.path();
    assert_eq!(
        selected(root, &["-s", "+fct_orders"]),
        ["model:fct_orders", "model:stg_orders", "source:raw_orders"]
    );
    assert_eq!(
        selected(root, &["-s", "stg_orders+"]),
        [
            "model:dim_customers",
            "model:fct_orders",
            "model:stg_orders"
        ]
    );
    assert_eq!(
        selected(root, &["-s", "source:raw_orders+"]),
        [
            "model:dim_customers",
            "model:fct_orders",
            "model:stg_orders",
            "source:raw_orders"
        ]
    );
    assert_eq!(
        selected(root, &["-s", "1+dim_customers"]),
        [
            "model:dim_customers",
            "model:stg_customers",
            "model:stg_orders"
        ]
    );
    assert_eq!(
        selected(root, &["-s", "2+dim_customers", "--exclude", "source:*"]),
        [
            "model:dim_customers",
            "model:stg_customers",
            "model:stg_orders"
        ]
    );
    assert_eq!(
        selected(root, &["-s", "+dim_customers,tag:commerce"]),
        [
            "model:dim_customers",
            "model:stg_orders",
            "source:raw_orders"
        ]
    );
    assert_eq!(
        selected(root, &["-s", "stg_customers+1"]),
        ["model:dim_customers", "model:stg_customers"]
    );
}

#[test]
fn selector_errors_are_clear() {
    let tmp = shop_with_warehouse();
    let root = tmp.path();
    let none = diff(root, None, &["--from", "prod", "-s", "fct_order"]);
    assert_eq!(none.status.code(), Some(2));
    insta::assert_snapshot!(transcript(&none, root));
    let graph = diff(root, None, &["--from", "prod", "-s", "+fct_ordrs"]);
    assert_eq!(graph.status.code(), Some(2));
    insta::assert_snapshot!(transcript(&graph, root));
    let target = diff(root, None, &["--from", "prd"]);
    assert_eq!(target.status.code(), Some(2));
    insta::assert_snapshot!(transcript(&target, root));
}

// ---------------------------------------------------------------------------------------------
// Failures: connection, authentication, files, invalid projects

const SECRET: &str = "Sup3r-Secret-pw";

#[test]
fn wrong_password_is_a_clear_error_without_the_password() {
    let Some(admin) = postgres_url() else { return };
    let tmp = tempfile::tempdir().unwrap();
    kinds_project(tmp.path(), PG_HEADER);
    let url = admin.replace("sqb_test:sqb_test@", &format!("sqb_test:{SECRET}@"));
    let out = diff(tmp.path(), Some(&url), &["--from", "prod"]);
    assert_eq!(out.status.code(), Some(2));
    let text = transcript(&out, tmp.path());
    assert!(!text.contains(SECRET), "{text}");
    assert!(
        text.contains("password authentication failed for user `sqb_test`"),
        "{text}"
    );
    // The same through PGPASSWORD.
    let bare = admin.replace("sqb_test:sqb_test@", "sqb_test@");
    let mut cmd = sqb();
    cmd.arg("--project-dir")
        .arg(tmp.path())
        .args(["contract", "diff", "--from", "prod", "--json"]);
    cmd.env("SQB_DATABASE_URL", &bare).env("PGPASSWORD", SECRET);
    let out = run(&mut cmd);
    assert_eq!(out.status.code(), Some(2));
    let text = transcript(&out, tmp.path());
    assert!(
        !text.contains(SECRET) && text.contains("password authentication failed"),
        "{text}"
    );
}

#[test]
fn no_error_path_shows_the_password() {
    let Some(admin) = postgres_url() else { return };
    let tmp = tempfile::tempdir().unwrap();
    kinds_project(tmp.path(), PG_HEADER);
    let good = admin.replace("sqb_test:sqb_test@", &format!("sqb_test:{SECRET}@"));
    // A server that accepts and never answers: the connect timeout.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_port = silent.local_addr().unwrap().port();
    // A server-side error after authentication: a role without CONNECT on the database.
    let db = TestDb::create("noconnect").unwrap();
    let role = format!("sqb_secret_{}", std::process::id());
    pg_exec(
        &admin,
        &format!(
            "DROP ROLE IF EXISTS {role}; CREATE ROLE {role} LOGIN PASSWORD '{SECRET}';
             REVOKE CONNECT ON DATABASE {} FROM PUBLIC;",
            db.name
        ),
    );
    let no_connect = db
        .url
        .replace("sqb_test:sqb_test@", &format!("{role}:{SECRET}@"));
    let cases = [
        (
            "connect timeout",
            format!("postgres://sqb_test:{SECRET}@127.0.0.1:{silent_port}/postgres"),
            "timed out after 3s connecting to 127.0.0.1",
        ),
        (
            "permission denied by the server",
            no_connect,
            "permission denied for database",
        ),
        (
            "wrong password",
            good.clone(),
            "password authentication failed",
        ),
        (
            "unknown database",
            with_database(&admin, "no_such_db"),
            "does not exist",
        ),
        (
            "unknown host",
            format!("postgres://sqb_test:{SECRET}@host.invalid:5432/postgres"),
            "could not connect to host.invalid:5432",
        ),
        (
            "closed port",
            format!("postgres://sqb_test:{SECRET}@127.0.0.1:1/postgres"),
            "could not connect to 127.0.0.1:1",
        ),
        (
            "bad URL",
            format!("postgres://sqb_test:{SECRET}@127.0.0.1:notaport/postgres"),
            "invalid Postgres connection URL",
        ),
    ];
    let logging: [&[(&str, &str)]; 2] = [&[], &[("RUST_LOG", "trace")]];
    for ((what, url, expected), log) in cases
        .iter()
        .flat_map(|c| logging.iter().map(move |l| (c, l)))
    {
        let output = tmp.path().join("report.json");
        let mut cmd = sqb();
        cmd.envs(log.iter().copied()).arg("-vv");
        cmd.arg("--project-dir").arg(tmp.path()).args([
            "contract",
            "diff",
            "--from",
            "prod",
            "--json",
            "--connect-timeout",
            "3",
        ]);
        cmd.arg("--output")
            .arg(&output)
            .env("SQB_DATABASE_URL", url)
            .env("PGPASSWORD", SECRET);
        let out = run(&mut cmd);
        let text = transcript(&out, tmp.path());
        assert_eq!(out.status.code(), Some(2), "{what}: {text}");
        assert!(text.contains(expected), "{what}: {text}");
        assert!(!text.contains(SECRET), "{what} leaked the password: {text}");
        assert!(!output.exists(), "{what}: a failed run wrote a report");
        if !log.is_empty() {
            assert!(text.contains(" DEBUG "), "{what}: no trace log: {text}");
        }
    }
    drop(db);
    pg_exec(&admin, &format!("DROP ROLE {role}"));
}

#[test]
fn trace_logs_of_a_successful_diff_show_no_password() {
    let Some(db) = TestDb::create("tracelog") else {
        return;
    };
    pg_exec(&db.url, &shop_migrations());
    let role = format!("sqb_trace_{}", std::process::id());
    pg_exec(
        &db.url,
        &format!("DROP ROLE IF EXISTS {role}; CREATE ROLE {role} LOGIN PASSWORD '{SECRET}';"),
    );
    let tmp = tempfile::tempdir().unwrap();
    shop_copy_on_postgres(tmp.path());
    let url = db
        .url
        .replace("sqb_test:sqb_test@", &format!("{role}:{SECRET}@"));
    let out = run(sqb()
        .arg("--project-dir")
        .arg(tmp.path())
        .args(["-vv", "contract", "diff", "--from", "prod"])
        .env("RUST_LOG", "trace")
        .env("SQB_DATABASE_URL", &url));
    let text = transcript(&out, tmp.path());
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("warehouse read"), "{text}");
    assert!(
        !text.contains(SECRET),
        "the trace log leaked the password: {text}"
    );
    pg_exec(&db.url, &format!("DROP OWNED BY {role}"));
    drop(db);
    pg_exec(
        &postgres_url().unwrap(),
        &format!("DROP ROLE IF EXISTS {role}"),
    );
}

#[test]
fn closed_port_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    kinds_project(tmp.path(), PG_HEADER);
    let url = format!("postgres://ana:{SECRET}@127.0.0.1:1/shop");
    let out = diff(
        tmp.path(),
        Some(&url),
        &["--from", "prod", "--connect-timeout", "3"],
    );
    assert_eq!(out.status.code(), Some(2));
    let text = transcript(&out, tmp.path());
    assert!(!text.contains(SECRET), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn missing_url_and_bad_url_are_usage_errors() {
    let tmp = tempfile::tempdir().unwrap();
    kinds_project(tmp.path(), PG_HEADER);
    let out = diff(tmp.path(), None, &["--from", "prod"]);
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!(transcript(&out, tmp.path()));
    let out = diff(
        tmp.path(),
        Some(&format!("mysql://x:{SECRET}@h/db")),
        &["--from", "prod"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(!transcript(&out, tmp.path()).contains(SECRET));
}

#[test]
fn duckdb_missing_and_locked_files_are_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    kinds_project(tmp.path(), DUCK_HEADER);
    let missing = diff(tmp.path(), None, &["--from", "prod"]);
    assert_eq!(missing.status.code(), Some(2));
    insta::assert_snapshot!(transcript(&missing, tmp.path()));
    let path = tmp.path().join("w.duckdb");
    duckdb_file(
        &path,
        "CREATE SCHEMA analytics; CREATE TABLE analytics.orders (id INTEGER);",
    );
    let writer = duckdb::Connection::open(&path).unwrap();
    writer
        .execute_batch("INSERT INTO analytics.orders VALUES (1)")
        .unwrap();
    let locked = diff(tmp.path(), None, &["--from", "prod"]);
    drop(writer);
    assert_eq!(locked.status.code(), Some(2));
    insta::assert_snapshot!(transcript(&locked, tmp.path()));
}

#[test]
fn a_project_that_does_not_compile_is_exit_2_with_diagnostics() {
    let tmp = tempfile::tempdir().unwrap();
    write_files(
        tmp.path(),
        &[
            ("sqb.toml", DUCK_HEADER),
            ("models/a.sql", "SELECT * FROM analytics.a\n"),
            ("models/a.toml", "[columns.x]\nnulable = true\n"),
        ],
    );
    let out = diff(tmp.path(), None, &["--from", "prod"]);
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!(transcript(&out, tmp.path()));
}

// ---------------------------------------------------------------------------------------------
// Read-only

#[test]
fn duckdb_file_bytes_are_unchanged() {
    let tmp = shop_with_warehouse();
    let path = tmp.path().join("warehouse.duckdb");
    let before = std::fs::read(&path).unwrap();
    for target in ["prod", "dev"] {
        diff(tmp.path(), None, &["--from", target]);
    }
    assert!(
        std::fs::read(&path).unwrap() == before,
        "the DuckDB file changed"
    );
    assert!(!tmp.path().join("warehouse.duckdb.wal").exists());
}

#[test]
fn postgres_sees_only_reads_from_a_role_that_can_write() {
    let Some(db) = TestDb::create("readonly") else {
        return;
    };
    pg_exec(&db.url, &shop_migrations());
    let role = format!("sqb_probe_{}", std::process::id());
    pg_exec(
        &db.url,
        &format!(
            "DROP ROLE IF EXISTS {role}; CREATE ROLE {role} LOGIN PASSWORD 'probe';
             GRANT ALL ON ALL TABLES IN SCHEMA analytics, dev, raw TO {role};
             GRANT ALL ON SCHEMA analytics, dev, raw TO {role};
             CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
             SELECT pg_stat_statements_reset();"
        ),
    );
    let tmp = tempfile::tempdir().unwrap();
    shop_copy_on_postgres(tmp.path());
    let url = db
        .url
        .replace("sqb_test:sqb_test@", &format!("{role}:probe@"));
    for target in ["prod", "dev"] {
        let out = diff(tmp.path(), Some(&url), &["--from", target]);
        assert_ne!(
            out.status.code(),
            Some(2),
            "{}",
            transcript(&out, tmp.path())
        );
    }
    let statements = pg_strings(
        &db.url,
        &format!(
            "SELECT query FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid
              WHERE r.rolname = '{role}' AND s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
        ),
    );
    pg_exec(&db.url, &format!("DROP OWNED BY {role}; DROP ROLE {role};"));
    assert!(!statements.is_empty(), "pg_stat_statements saw nothing");
    for statement in &statements {
        let head = statement
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_uppercase();
        assert!(
            ["SELECT", "BEGIN", "ROLLBACK", "SET", "SHOW"].contains(&head.as_str()),
            "sqb sent a statement that is not a read: {statement}"
        );
    }
}
