//! `sqb query` and `sqb assert` end to end on the shop example: against its DuckDB warehouse
//! built from migrations/ in every format, every refusal with its exit status, trust earned by
//! a passing `sqb assert`, failing assertions with expected and actual values; and on Postgres,
//! as a role that could write, only reads are sent, the password appears nowhere, and the rows
//! are the DuckDB rows, value for value.

mod common;

use std::path::Path;
use std::process::Output;

use common::{
    copy_tree, duckdb_file, pg_exec, pg_strings, repo, run, shop_migrations, sqb, transcript,
    TestDb,
};

const ANALYST: &str = r#"{"roles": ["analyst"]}"#;

fn shop(root: &Path) {
    copy_tree(&repo().join("examples/shop"), root);
    let _ = std::fs::remove_file(root.join("warehouse.duckdb"));
    let _ = std::fs::remove_dir_all(root.join(".sqb"));
}

fn shop_on_duckdb(root: &Path) {
    shop(root);
    duckdb_file(&root.join("warehouse.duckdb"), &shop_migrations());
}

/// `sqb ARGS` in `root`, with the compile cache on: `sqb assert` records its verdicts there.
fn sqb_in(root: &Path, url: Option<&str>, args: &[&str]) -> Output {
    let mut cmd = sqb();
    cmd.current_dir(root).env_remove("SQB_NO_CACHE").args(args);
    if let Some(url) = url {
        cmd.env("SQB_DATABASE_URL", url);
    }
    run(&mut cmd)
}

fn transcripts(root: &Path, url: Option<&str>, runs: &[&[&str]]) -> String {
    runs.iter()
        .map(|args| {
            let out = sqb_in(root, url, args);
            format!("$ sqb {}\n{}", args.join(" "), transcript(&out, root))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn shop_query_on_duckdb_in_every_format() {
    let tmp = tempfile::tempdir().unwrap();
    shop_on_duckdb(tmp.path());
    let by_status: &[&str] = &[
        "query", "-m", "revenue", "-m", "orders", "-d", "status", "--claims", ANALYST, "--from",
        "prod",
    ];
    let runs: Vec<Vec<&str>> = vec![
        by_status.to_vec(),
        [by_status, &["--format", "csv"]].concat(),
        [by_status, &["--format", "json"]].concat(),
        // A customer (the default role) sees their own orders only, the provisional one too.
        vec![
            "query",
            "-m",
            "sales",
            "-d",
            "order_date.month",
            "--claims",
            r#"{"customer_id": 2}"#,
            "--from",
            "prod",
        ],
        // A balance is the latest day's, summed over customers.
        vec![
            "query",
            "-m",
            "account_balance",
            "-d",
            "balance_date",
            "--claims",
            ANALYST,
            "--from",
            "prod",
        ],
        vec![
            "query", "-m", "aov", "--claims", ANALYST, "--from", "prod", "--format", "csv",
        ],
    ];
    let runs: Vec<&[&str]> = runs.iter().map(Vec::as_slice).collect();
    insta::assert_snapshot!(transcripts(tmp.path(), None, &runs));
}

#[test]
fn sql_is_printed_offline_with_its_parameters() {
    let tmp = tempfile::tempdir().unwrap();
    // No warehouse file at all: --sql never connects.
    shop(tmp.path());
    insta::assert_snapshot!(transcripts(
        tmp.path(),
        None,
        &[&[
            "query",
            "-m",
            "revenue",
            "-d",
            "status",
            "--claims",
            r#"{"customer_id": "1"}"#,
            "--sql",
            "--from",
            "prod",
        ]]
    ));
}

#[test]
fn every_refusal_ends_with_its_exit_status() {
    let tmp = tempfile::tempdir().unwrap();
    shop_on_duckdb(tmp.path());
    let status = |args: &[&str]| sqb_in(tmp.path(), None, args).status.code();
    fn q<'a>(extra: &[&'a str]) -> Vec<&'a str> {
        [&["query", "--from", "prod"][..], extra].concat()
    }
    assert_eq!(status(&q(&["-m", "revenu", "--claims", ANALYST])), Some(10));
    assert_eq!(
        status(&q(&["-m", "revenue", "-d", "stauts", "--claims", ANALYST])),
        Some(10)
    );
    assert_eq!(
        status(&q(&[
            "-m",
            "revenue",
            "--filter",
            "status = ",
            "--claims",
            ANALYST
        ])),
        Some(20)
    );
    // The default role may not see balances; without a tenant claim nothing is served.
    assert_eq!(
        status(&q(&[
            "-m",
            "account_balance",
            "--claims",
            r#"{"customer_id": 1}"#
        ])),
        Some(19)
    );
    assert_eq!(status(&q(&["-m", "revenue"])), Some(18));
    assert_eq!(
        status(&q(&[
            "-m",
            "revenue",
            "--claims",
            r#"{"customer_id": 1, "roles": "nobody"}"#
        ])),
        Some(19)
    );
    insta::assert_snapshot!(transcripts(
        tmp.path(),
        None,
        &[
            &q(&[
                "-m",
                "revenue",
                "--filter",
                "status = ",
                "--claims",
                ANALYST
            ]),
            &q(&[
                "-m",
                "sales",
                "--claims",
                ANALYST,
                "--format",
                "json",
                "--context",
                "board_reporting"
            ]),
        ]
    ));
}

#[test]
fn a_passing_assertion_earns_the_trust_a_board_query_needs() {
    let tmp = tempfile::tempdir().unwrap();
    shop_on_duckdb(tmp.path());
    let board: &[&str] = &[
        "query",
        "-m",
        "sales",
        "--context",
        "board_reporting",
        "--claims",
        ANALYST,
        "--from",
        "prod",
    ];
    insta::assert_snapshot!(transcripts(
        tmp.path(),
        None,
        &[
            board,
            &["assert", "--claims", ANALYST, "--from", "prod"],
            board,
            &[
                "query",
                "-m",
                "revenue",
                "-d",
                "status",
                "--claims",
                ANALYST,
                "--from",
                "prod",
                "--harness"
            ],
        ]
    ));
}

#[test]
fn a_failing_assertion_shows_expected_and_actual_in_every_format() {
    let tmp = tempfile::tempdir().unwrap();
    shop_on_duckdb(tmp.path());
    let path = tmp.path().join("contracts/assertions/revenue_total.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("\"285.49\"", "\"285.50\"")).unwrap();
    let base: &[&str] = &["assert", "--claims", ANALYST, "--from", "prod"];
    fn with<'a>(base: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
        [base, extra].concat()
    }
    assert_eq!(sqb_in(tmp.path(), None, base).status.code(), Some(1));
    assert_eq!(
        sqb_in(tmp.path(), None, &with(base, &["--min-accuracy", "0.6"]))
            .status
            .code(),
        Some(0)
    );
    assert_eq!(
        sqb_in(tmp.path(), None, &with(base, &["--min-accuracy", "0.7"]))
            .status
            .code(),
        Some(1)
    );
    // Without the principal an assertion of a tenant-scoped metric cannot run: 2, never a pass.
    assert_eq!(
        sqb_in(tmp.path(), None, &["assert", "--from", "prod"])
            .status
            .code(),
        Some(2)
    );
    insta::assert_snapshot!(transcripts(
        tmp.path(),
        None,
        &[
            &with(base, &["--select", "revenue_t*"]),
            &with(base, &["--select", "revenue_t*", "--format", "json"]),
            &with(base, &["--select", "revenue_t*", "--format", "junit"]),
            &with(base, &["--select", "revenue_t*", "--format", "github"]),
            &with(base, &["--select", "nothing_*"]),
        ]
    ));
}

#[test]
fn postgres_serves_the_duckdb_rows_reading_only_and_never_shows_the_password() {
    let Some(db) = TestDb::create("query_cli") else {
        return;
    };
    pg_exec(&db.url, &shop_migrations());
    const SECRET: &str = "pl4nted-s3cret";
    let role = format!("sqb_query_{}", std::process::id());
    pg_exec(
        &db.url,
        &format!(
            "DROP ROLE IF EXISTS {role}; CREATE ROLE {role} LOGIN PASSWORD '{SECRET}';
             GRANT ALL ON ALL TABLES IN SCHEMA analytics, dev, raw TO {role};
             GRANT ALL ON SCHEMA analytics, dev, raw TO {role};
             CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
             SELECT pg_stat_statements_reset();"
        ),
    );
    let url = db
        .url
        .replace("sqb_test:sqb_test@", &format!("{role}:{SECRET}@"));
    let pg = tempfile::tempdir().unwrap();
    shop(pg.path());
    let toml = std::fs::read_to_string(pg.path().join("sqb.toml")).unwrap();
    std::fs::write(
        pg.path().join("sqb.toml"),
        toml.replace("engine = \"duckdb\"", "engine = \"postgres\""),
    )
    .unwrap();
    let duck = tempfile::tempdir().unwrap();
    shop_on_duckdb(duck.path());
    let queries: &[&[&str]] = &[
        &[
            "query", "-m", "revenue", "-m", "orders", "-m", "buyers", "-d", "status", "--claims",
            ANALYST,
        ],
        &[
            "query",
            "-m",
            "sales",
            "-d",
            "order_date.month",
            "--claims",
            r#"{"customer_id": 2}"#,
        ],
        &[
            "query",
            "-m",
            "account_balance",
            "-d",
            "balance_date",
            "--claims",
            ANALYST,
        ],
        &[
            "query",
            "-m",
            "aov",
            "-d",
            "customer.first_order_month",
            "--claims",
            ANALYST,
        ],
    ];
    for args in queries {
        let args = [*args, &["--from", "prod", "--format", "json"]].concat();
        let on_pg = sqb_in(pg.path(), Some(&url), &args);
        let on_duck = sqb_in(duck.path(), None, &args);
        let shown = transcript(&on_pg, pg.path());
        assert_eq!(on_pg.status.code(), Some(0), "{shown}");
        assert!(!shown.contains(SECRET), "{shown}");
        let rows = |o: &Output| {
            let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            normalize(&doc["rows"])
        };
        assert_eq!(rows(&on_pg), rows(&on_duck), "{args:?}");
    }
    let assert = sqb_in(
        pg.path(),
        Some(&url),
        &["assert", "--claims", ANALYST, "--from", "prod"],
    );
    let shown = transcript(&assert, pg.path());
    assert_eq!(assert.status.code(), Some(0), "{shown}");
    assert!(!shown.contains(SECRET), "{shown}");
    // A wrong password: refused, and neither password is shown.
    let wrong = url.replace(SECRET, "wr0ng-s3cret");
    let out = sqb_in(
        pg.path(),
        Some(&wrong),
        &[
            "query", "-m", "revenue", "--claims", ANALYST, "--from", "prod",
        ],
    );
    let shown = transcript(&out, pg.path());
    assert_eq!(out.status.code(), Some(2), "{shown}");
    assert!(
        !shown.contains(SECRET) && !shown.contains("wr0ng-s3cret"),
        "{shown}"
    );
    let statements = pg_strings(
        &db.url,
        &format!(
            "SELECT query FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid
              WHERE r.rolname = '{role}' AND s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
        ),
    );
    pg_exec(&db.url, &format!("DROP OWNED BY {role}; DROP ROLE {role};"));
    assert!(
        statements.iter().any(|s| s.contains("WITH \"m0\"")),
        "no semantic query was seen: {statements:?}"
    );
    for statement in &statements {
        let head = statement
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_uppercase();
        assert!(
            ["SELECT", "WITH", "BEGIN", "ROLLBACK", "SET", "SHOW"].contains(&head.as_str()),
            "sqb sent a statement that is not a read: {statement}"
        );
    }
}

/// Rows with each instant as its UTC wall time and each number as its exact value: Postgres
/// keeps a TIMESTAMPTZ's zone (`Z`) where DuckDB, without ICU, truncates to a TIMESTAMP, and a
/// ratio is NUMERIC on Postgres where DuckDB computes a DOUBLE.
fn normalize(rows: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match rows {
        Value::Array(items) => Value::Array(items.iter().map(normalize).collect()),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), normalize(v))).collect())
        }
        Value::String(s) if s.ends_with('Z') => Value::String(s.trim_end_matches('Z').into()),
        Value::String(s) => match s.parse::<f64>() {
            Ok(f) => Value::String(format!("{:.6}", f)),
            Err(_) => Value::String(s.clone()),
        },
        Value::Number(n) => Value::String(format!("{:.6}", n.as_f64().unwrap_or(f64::NAN))),
        other => other.clone(),
    }
}

#[test]
fn assertions_rerun_per_tenant_prove_no_leak_and_add_up() {
    let tmp = tempfile::tempdir().unwrap();
    shop_on_duckdb(tmp.path());
    let base: &[&str] = &["assert", "--claims", ANALYST, "--from", "prod", "--tenants"];
    // Every customer: each additive total is the sum over them.
    let all = sqb_in(tmp.path(), None, &[base, &["1,2,3"]].concat());
    assert_eq!(
        all.status.code(),
        Some(0),
        "{}",
        transcript(&all, tmp.path())
    );
    // One customer alone is not the whole: the totals say so, group by group.
    insta::assert_snapshot!(transcripts(
        tmp.path(),
        None,
        &[&[base, &["1", "--select", "revenue_by_status"]].concat()]
    ));
    // Without a tenancy policy there is nothing to prove: a usage error.
    std::fs::remove_file(tmp.path().join("contracts/policies/tenancy.toml")).unwrap();
    let none = sqb_in(tmp.path(), None, &[base, &["1"]].concat());
    assert_eq!(
        none.status.code(),
        Some(2),
        "{}",
        transcript(&none, tmp.path())
    );
}

/// `sqb query ARGS --format json` in `root`, parsed.
fn query_json(root: &Path, url: Option<&str>, args: &[&str]) -> serde_json::Value {
    let args = [args, &["--format", "json"]].concat();
    let out = sqb_in(root, url, &args);
    assert_eq!(out.status.code(), Some(0), "{}", transcript(&out, root));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Rewrites the shop's finality rule to say finality as `how`.
fn result_flag(root: &Path, how: &str) {
    let path = root.join("contracts/guardrails/finality-revenue.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let text: String = text
        .lines()
        .map(|l| match l.starts_with("result_flag") {
            true => format!("result_flag = \"{how}\"\n"),
            false => format!("{l}\n"),
        })
        .collect();
    std::fs::write(&path, text).unwrap();
}

#[test]
fn result_flag_metadata_flags_each_row_beside_the_result_and_none_says_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    shop_on_duckdb(tmp.path());
    let args: &[&str] = &[
        "query", "-m", "revenue", "-d", "status", "--claims", ANALYST, "--from", "prod",
    ];
    // `column`: the flag is a column of the result.
    let doc = query_json(tmp.path(), None, args);
    let names: Vec<&str> = doc["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["status", "revenue", "revenue.final"]);
    assert!(doc["metrics"][0].get("final_rows").is_none(), "{doc:#}");

    result_flag(tmp.path(), "metadata");
    let doc = query_json(tmp.path(), None, args);
    let rows = doc["rows"].as_array().unwrap();
    assert!(
        rows.iter().all(|r| r.get("revenue.final").is_none()),
        "{doc:#}"
    );
    let flags = doc["metrics"][0]["final_rows"].as_array().unwrap();
    assert_eq!(flags.len(), rows.len(), "{doc:#}");
    // The provisional raw order is `placed`: that row alone is not final.
    for (row, flag) in rows.iter().zip(flags) {
        let placed = row["status"] == "placed";
        assert_eq!(flag.as_bool(), Some(!placed), "{doc:#}");
    }
    assert_eq!(doc["metrics"][0]["final"], false);
    let text = sqb_in(tmp.path(), None, args);
    let placed = 1 + rows.iter().position(|r| r["status"] == "placed").unwrap();
    let stderr = String::from_utf8_lossy(&text.stderr);
    assert!(
        stderr.contains(&format!("provisional in row {placed}")),
        "{stderr}"
    );

    result_flag(tmp.path(), "none");
    let doc = query_json(tmp.path(), None, args);
    assert!(doc["metrics"][0]["final"].is_null(), "{doc:#}");
    assert!(doc["metrics"][0].get("final_rows").is_none(), "{doc:#}");
    assert_eq!(doc["metrics"][0]["trust"]["tier"], "provisional", "{doc:#}");
}

const ADA: &str = "3e3417d7ef77d5932a6734b916515ed5";

/// testdata/query/masking on `engine`, its warehouse built; the database URL for Postgres.
fn masking_project(root: &Path, engine: &str) -> String {
    copy_tree(&repo().join("testdata/query/masking"), root);
    let toml = std::fs::read_to_string(root.join("sqb.toml")).unwrap();
    let toml = toml.replace("engine = \"duckdb\"", &format!("engine = \"{engine}\""));
    std::fs::write(root.join("sqb.toml"), toml).unwrap();
    std::fs::read_to_string(root.join("warehouse.sql")).unwrap()
}

/// Each role's view of an order's customer and their referrer, one row per pair.
fn emails_by_role(root: &Path, url: Option<&str>) -> Vec<(String, serde_json::Value)> {
    ["analyst", "support", "owner"]
        .iter()
        .map(|role| {
            let claims = format!(r#"{{"roles": ["{role}"]}}"#);
            let doc = query_json(
                root,
                url,
                &[
                    "query",
                    "-m",
                    "orders",
                    "-d",
                    "customer.email",
                    "-d",
                    "customer.referrer.email",
                    "--claims",
                    &claims,
                ],
            );
            (role.to_string(), normalize(&doc["rows"]))
        })
        .collect()
}

#[test]
fn a_masked_column_is_masked_under_every_alias_a_self_join_reaches_it_by() {
    let tmp = tempfile::tempdir().unwrap();
    let warehouse = masking_project(tmp.path(), "duckdb");
    let sql = sqb_in(
        tmp.path(),
        None,
        &[
            "query",
            "-m",
            "orders",
            "-d",
            "customer.email",
            "-d",
            "customer.referrer.email",
            "--sql",
        ],
    );
    insta::assert_snapshot!(transcript(&sql, tmp.path()));
    duckdb_file(&tmp.path().join("w.duckdb"), &warehouse);
    let duck = emails_by_role(tmp.path(), None);
    let analyst = duck[0].1.to_string();
    // Bob and Cy were referred by Ada: her address is hashed as a referrer too.
    assert!(analyst.contains(ADA), "{analyst}");
    assert!(!analyst.contains('@'), "{analyst}");
    let support = duck[1].1.to_string();
    assert!(support.contains("\"ad***\""), "{support}");
    assert!(!support.contains('@'), "{support}");
    let owner = duck[2].1.to_string();
    assert!(owner.contains("ada@example.com"), "{owner}");
    insta::assert_snapshot!(serde_json::to_string_pretty(&duck).unwrap());
    // A filter on the masked column would tell what the mask hides: refused, unless the role
    // sees the column.
    let filtered = |claims: &str| {
        sqb_in(
            tmp.path(),
            None,
            &[
                "query",
                "-m",
                "orders",
                "--filter",
                "customer.referrer.email = 'ada@example.com'",
                "--claims",
                claims,
            ],
        )
    };
    let refused = filtered(r#"{"roles": ["support"]}"#);
    assert_eq!(refused.status.code(), Some(19));
    insta::assert_snapshot!(transcript(&refused, tmp.path()));
    // Nor through a function, a concatenation or a cast around it.
    for filter in [
        "lower(customer.referrer.email) = 'ada@example.com'",
        "coalesce(customer.referrer.email, '') LIKE 'a%'",
        "customer.referrer.email || '' = 'ada@example.com'",
        "CAST(customer.referrer.email AS VARCHAR) = 'ada@example.com'",
    ] {
        let args = [
            "query",
            "-m",
            "orders",
            "--filter",
            filter,
            "--claims",
            r#"{"roles": ["support"]}"#,
        ];
        let out = sqb_in(tmp.path(), None, &args);
        assert_eq!(out.status.code(), Some(19), "{filter}");
    }
    let owner = filtered(r#"{"roles": ["owner"]}"#);
    assert_eq!(
        owner.status.code(),
        Some(0),
        "{}",
        transcript(&owner, tmp.path())
    );
    // Bob's two orders and Cy's one.
    assert!(
        String::from_utf8_lossy(&owner.stdout).contains(" 3 "),
        "{}",
        transcript(&owner, tmp.path())
    );

    let Some(db) = TestDb::create("query_masking") else {
        return;
    };
    let pg = tempfile::tempdir().unwrap();
    masking_project(pg.path(), "postgres");
    pg_exec(&db.url, &warehouse);
    assert_eq!(emails_by_role(pg.path(), Some(&db.url)), duck);
}

#[test]
fn a_malformed_claim_is_refused_and_never_taken_for_a_missing_one() {
    let tmp = tempfile::tempdir().unwrap();
    shop_on_duckdb(tmp.path());
    let status = |claims: &str| {
        let args = [
            "query", "--from", "prod", "-m", "revenue", "--claims", claims,
        ];
        sqb_in(tmp.path(), None, &args).status.code()
    };
    for claims in [
        r#"{"customer_id": [1, 2]}"#,
        r#"{"customer_id": null}"#,
        r#"{"customer_id": {"id": 1}}"#,
        r#"{"customer_id": "abc"}"#,
        r#"{"customer_id": 2.5}"#,
        r#"{"customer_id": "1 "}"#,
        r#"{"customer_id": 99999999999}"#,
        r#"{"customer_id": 1, "roles": [1]}"#,
        r#"{"customer_id": 1, "roles": 5}"#,
        r#"{"customer_id": 1, "roles": null}"#,
    ] {
        assert_eq!(status(claims), Some(22), "{claims}");
    }
    assert_eq!(status(r#"{"customer_id": "1"}"#), Some(0));
    assert_eq!(
        status(r#"{"customer_id": 1, "roles": ["customer"]}"#),
        Some(0)
    );
    assert_eq!(status(r#"{"customer_id": -2147483648}"#), Some(0));

    // Where a missing claim is served unscoped, a malformed one is still refused.
    let tenancy = tmp.path().join("contracts/policies/tenancy.toml");
    let text = std::fs::read_to_string(&tenancy).unwrap();
    std::fs::write(
        &tenancy,
        text.replace(
            "on_missing_principal = \"deny\"",
            "on_missing_principal = \"allow_unscoped\"",
        ),
    )
    .unwrap();
    assert_eq!(status(r#"{"customer_id": null}"#), Some(22));
    assert_eq!(status(r#"{"customer_id": [1, 2]}"#), Some(22));
    assert_eq!(status("{}"), Some(0));
    insta::assert_snapshot!(transcripts(
        tmp.path(),
        None,
        &[&[
            "query",
            "--from",
            "prod",
            "-m",
            "revenue",
            "--claims",
            r#"{"customer_id": [1, 2]}"#
        ]]
    ));
}

#[test]
fn the_tenant_filter_is_served_by_an_index_on_the_tenant_column() {
    let Some(db) = TestDb::create("query_tenant_index") else {
        return;
    };
    pg_exec(&db.url, &shop_migrations());
    pg_exec(
        &db.url,
        &format!(
            "CREATE INDEX fct_orders_tenant ON analytics.fct_orders (customer_id);
             ANALYZE analytics.fct_orders;
             ALTER DATABASE \"{}\" SET enable_seqscan = off;",
            db.name
        ),
    );
    let tmp = tempfile::tempdir().unwrap();
    shop(tmp.path());
    let args = [
        "query",
        "-m",
        "revenue",
        "--claims",
        r#"{"customer_id": 1}"#,
        "--sql",
        "--from",
        "prod",
    ];
    let out = sqb_in(tmp.path(), None, &args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        transcript(&out, tmp.path())
    );
    // The statement as sqb sends it, with its text parameter written in: the cast of `$1` to
    // the column's type is a constant, so the comparison is one an index serves.
    let statement: String = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("--"))
        .collect::<Vec<_>>()
        .join("\n");
    let statement = statement
        .trim_end()
        .trim_end_matches(';')
        .replace("$1", "'1'");
    let plan = pg_strings(&db.url, &format!("EXPLAIN {statement}")).join("\n");
    assert!(
        plan.contains("fct_orders_tenant"),
        "no index in the plan:\n{plan}"
    );
}

#[test]
fn a_saved_query_answers_as_the_query_it_saves() {
    let tmp = tempfile::tempdir().unwrap();
    shop_on_duckdb(tmp.path());
    let base: &[&str] = &[
        "query", "--claims", ANALYST, "--from", "prod", "--format", "json",
    ];
    let saved = sqb_in(
        tmp.path(),
        None,
        &[base, &["--saved", "revenue_by_status"]].concat(),
    );
    let written = sqb_in(
        tmp.path(),
        None,
        &[
            base,
            &[
                "-m",
                "revenue",
                "-m",
                "orders",
                "-d",
                "status",
                "--filter",
                "status <> 'cancelled'",
            ],
        ]
        .concat(),
    );
    assert_eq!(
        saved.status.code(),
        Some(0),
        "{}",
        transcript(&saved, tmp.path())
    );
    let rows = |out: &Output| {
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        json["rows"].clone()
    };
    assert_eq!(rows(&saved), rows(&written));
    assert!(rows(&saved).as_array().is_some_and(|r| !r.is_empty()));
    // A filter of the command line is AND-ed to the saved query's own.
    let narrowed = sqb_in(
        tmp.path(),
        None,
        &[
            base,
            &[
                "--saved",
                "revenue_by_status",
                "--filter",
                "status = 'shipped'",
            ],
        ]
        .concat(),
    );
    assert_eq!(rows(&narrowed).as_array().map(Vec::len), Some(1));
    let unknown = sqb_in(
        tmp.path(),
        None,
        &[base, &["--saved", "revenue_by_stauts"]].concat(),
    );
    let said = transcript(&unknown, tmp.path());
    assert_eq!(unknown.status.code(), Some(10), "{said}");
    assert!(said.contains("did you mean `revenue_by_status`?"), "{said}");
    let both = sqb_in(
        tmp.path(),
        None,
        &[base, &["--saved", "revenue_by_status", "-m", "revenue"]].concat(),
    );
    assert_eq!(
        both.status.code(),
        Some(2),
        "{}",
        transcript(&both, tmp.path())
    );
}

/// The warehouse file opens while the project loads. A question refused before it runs does
/// not wait for the file another process holds locked, and says nothing about it. A question
/// that runs waits for that process, says so once, and answers.
#[test]
fn the_file_opened_early_is_waited_for_only_by_a_question_that_runs() {
    let tmp = tempfile::tempdir().unwrap();
    shop_on_duckdb(tmp.path());
    let path = tmp.path().join("warehouse.duckdb");
    let writer = duckdb::Connection::open(&path).unwrap();
    writer.execute_batch("CHECKPOINT").unwrap();
    let ask = |metric: &str| {
        sqb_in(
            tmp.path(),
            None,
            &[
                "query",
                "--from",
                "prod",
                "-m",
                metric,
                "--claims",
                ANALYST,
                "--connect-timeout",
                "60",
                "--format",
                "csv",
            ],
        )
    };
    let started = std::time::Instant::now();
    let refused = ask("revenu");
    let shown = transcript(&refused, tmp.path());
    assert_eq!(refused.status.code(), Some(10), "{shown}");
    assert!(!shown.contains("waiting"), "{shown}");
    // Far less than the connect timeout: the refusal did not wait it out.
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    let release = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(700));
        drop(writer);
    });
    let answered = ask("revenue");
    release.join().unwrap();
    let shown = transcript(&answered, tmp.path());
    assert_eq!(answered.status.code(), Some(0), "{shown}");
    assert_eq!(
        shown.matches("which another process holds locked").count(),
        1,
        "{shown}"
    );
    assert!(shown.contains("revenue"), "{shown}");
}
