//! The metric compiler (`sqb::semantic::query`) on the shop example: each compiled statement
//! runs on a real DuckDB file and a real Postgres database built from migrations/, and returns
//! exactly the rows of an independently hand-written query; the SQL of each engine is pinned.

mod common;

use std::path::Path;

use common::{copy_tree, duckdb_file, pg_exec, pg_strings, repo, shop_migrations, TestDb};
use sqb::catalog::Namespace;
use sqb::project::Project;
use sqb::semantic::query::{compile, QueryRequest};

/// A request, and the hand-written SQL whose rows it must return (in its column order).
struct Case {
    name: &'static str,
    metrics: &'static [&'static str],
    dimensions: &'static [&'static str],
    filters: &'static [&'static str],
    expected: &'static str,
}

const CASES: &[Case] = &[
    Case {
        name: "revenue",
        metrics: &["revenue"],
        dimensions: &[],
        filters: &[],
        // The mart's revenue, and the raw orders written after the mart's last order
        // (revenue's provisional realization): not final.
        expected: "SELECT (SELECT sum(amount) FROM analytics.fct_orders WHERE status <> 'cancelled') \
                   + (SELECT sum(amount) FROM raw.orders WHERE status <> 'cancelled' \
                      AND ordered_at > (SELECT max(ordered_at) FROM analytics.fct_orders)), false",
    },
    Case {
        name: "revenue_and_orders_by_status",
        metrics: &["sales", "orders"],
        dimensions: &["status"],
        filters: &["status <> 'placed'"],
        // orders: its population filter and the mandatory filter of its measure's guardrail.
        // No raw order after the mart's last one is shipped: final.
        expected: "SELECT status, sum(amount), count(*), true FROM analytics.fct_orders \
                   WHERE status <> 'placed' AND status <> 'cancelled' AND status IN ('placed', 'shipped') \
                   GROUP BY status",
    },
    Case {
        name: "buyers_by_first_order_month",
        metrics: &["buyers"],
        dimensions: &["customer.first_order_month"],
        filters: &[],
        expected: "SELECT date_trunc('month', c.first_ordered_at), count(DISTINCT o.customer_id) \
                   FROM analytics.fct_orders o LEFT JOIN analytics.dim_customers c ON o.customer_id = c.customer_id \
                   GROUP BY 1",
    },
    Case {
        name: "average_order_value_by_day",
        metrics: &["aov"],
        dimensions: &["order_date"],
        // Up to the mart's last order: revenue (its numerator) is final there.
        filters: &[
            "customer.first_order_month >= '2026-02-01'",
            "order_date < '2026-04-06'",
        ],
        expected: "SELECT date_trunc('day', o.ordered_at), CAST(sum(o.amount) AS {ratio}) / NULLIF(count(*), 0), true \
                   FROM analytics.fct_orders o JOIN analytics.dim_customers c ON o.customer_id = c.customer_id \
                   WHERE o.status IN ('placed', 'shipped') AND date_trunc('month', c.first_ordered_at) >= '2026-02-01' \
                   GROUP BY 1",
    },
];

fn shop_in(root: &Path, engine: &str) -> Project {
    copy_tree(&repo().join("examples/shop"), root);
    let toml = std::fs::read_to_string(root.join("sqb.toml")).unwrap();
    let toml = toml.replace("engine = \"duckdb\"", &format!("engine = \"{engine}\""));
    std::fs::write(root.join("sqb.toml"), toml).unwrap();
    let project = Project::load(root).unwrap();
    assert!(project.diagnostics.is_empty(), "{:#?}", project.diagnostics);
    project
}

fn request(case: &Case) -> QueryRequest {
    let strings = |s: &[&str]| s.iter().map(|x| x.to_string()).collect();
    QueryRequest {
        metrics: strings(case.metrics),
        dimensions: strings(case.dimensions),
        filters: strings(case.filters),
        context: None,
        principal: Some(analyst()),
        tenant: None,
        ..QueryRequest::default()
    }
}

/// The shop's analyst: every metric, every tenant (`tenancy_exempt`), emails hashed.
fn analyst() -> serde_json::Map<String, serde_json::Value> {
    claims(r#"{"roles": ["analyst"]}"#)
}

fn claims(json: &str) -> serde_json::Map<String, serde_json::Value> {
    serde_json::from_str(json).unwrap()
}

fn namespace() -> Namespace {
    Namespace {
        database: None,
        schema: "analytics".into(),
    }
}

/// Rows in one and not the other, either way, counting duplicates.
fn difference(compiled: &str, expected: &str, ratio: &str) -> String {
    let mut expected = expected.replace("{ratio}", ratio);
    if ratio == "double" {
        // DuckDB truncates TIMESTAMPTZ only with ICU; the compiler truncates UTC wall time.
        for column in ["c.first_ordered_at", "o.ordered_at"] {
            expected = expected.replace(
                &format!("{column})"),
                &format!("CAST({column} AS TIMESTAMP))"),
            );
        }
    }
    format!(
        "SELECT count(*) FROM (\
         (SELECT * FROM ({compiled}) a EXCEPT ALL SELECT * FROM ({expected}) b) \
         UNION ALL \
         (SELECT * FROM ({expected}) c EXCEPT ALL SELECT * FROM ({compiled}) d)) x"
    )
}

#[test]
fn every_case_returns_the_hand_written_rows_on_duckdb() {
    let dir = tempfile::tempdir().unwrap();
    let project = shop_in(dir.path(), "duckdb");
    let db = dir.path().join("w.duckdb");
    duckdb_file(&db, &shop_migrations());
    let conn = duckdb::Connection::open(&db).unwrap();
    for case in CASES {
        let compiled = compile(&project, &namespace(), &request(case)).unwrap();
        insta::assert_snapshot!(format!("duckdb_{}", case.name), compiled.sql);
        let rows: i64 = conn
            .query_row(
                &format!("SELECT count(*) FROM ({})", compiled.sql),
                [],
                |r| r.get(0),
            )
            .unwrap_or_else(|e| panic!("{}: {e}\n{}", case.name, compiled.sql));
        assert!(rows > 0, "{}: no rows", case.name);
        let diff: i64 = conn
            .query_row(
                &difference(&compiled.sql, case.expected, "double"),
                [],
                |r| r.get(0),
            )
            .unwrap_or_else(|e| panic!("{}: {e}", case.name));
        assert_eq!(diff, 0, "{}: rows differ\n{}", case.name, compiled.sql);
    }
}

#[test]
fn every_case_returns_the_hand_written_rows_on_postgres() {
    let Some(db) = TestDb::create("semantic_query") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let project = shop_in(dir.path(), "postgres");
    pg_exec(&db.url, &shop_migrations());
    for case in CASES {
        let compiled = compile(&project, &namespace(), &request(case)).unwrap();
        insta::assert_snapshot!(format!("postgres_{}", case.name), compiled.sql);
        let count =
            |sql: String| pg_strings(&db.url, &format!("SELECT count(*)::text FROM ({sql}) q"));
        assert_ne!(count(compiled.sql.clone()), ["0"], "{}: no rows", case.name);
        let diff = pg_strings(
            &db.url,
            &format!(
                "SELECT ({})::text",
                difference(&compiled.sql, case.expected, "numeric")
            ),
        );
        assert_eq!(diff, ["0"], "{}: rows differ\n{}", case.name, compiled.sql);
    }
}

#[test]
fn a_name_that_does_not_resolve_is_refused_with_its_code() {
    let dir = tempfile::tempdir().unwrap();
    let project = shop_in(dir.path(), "duckdb");
    let refuse = |metrics: &[&str], dimensions: &[&str]| {
        let strings = |s: &[&str]| s.iter().map(|x| x.to_string()).collect();
        let request = QueryRequest {
            metrics: strings(metrics),
            dimensions: strings(dimensions),
            filters: Vec::new(),
            context: None,
            principal: Some(analyst()),
            tenant: None,
            ..QueryRequest::default()
        };
        compile(&project, &namespace(), &request).unwrap_err()
    };
    let unknown = refuse(&["revenu"], &[]);
    assert_eq!(
        (unknown.code, unknown.hint.as_deref()),
        ("unresolved", Some("did you mean `revenue`?"))
    );
    assert_eq!(refuse(&["revenue"], &["stauts"]).code, "unresolved");
    assert_eq!(refuse(&["revenue"], &["status.month"]).code, "unresolved");
    assert_eq!(refuse(&[], &[]).code, "unresolved");
}

/// One entity reached over several joins (testdata/query/entities): `customer.DIM` (and
/// MetricFlow's `customer__DIM`) goes through the join named `customer` when its relation has
/// DIM, else through the one whose relation has it; where two have it the name is ambiguous,
/// and naming the join resolves it.
#[test]
fn an_entity_over_several_joins_resolves_by_the_dimension() {
    let project = Project::load(&repo().join("testdata/query/entities")).unwrap();
    assert!(project.diagnostics.is_empty(), "{:#?}", project.diagnostics);
    let ask = |dimension: &str| {
        let request = QueryRequest {
            metrics: vec!["revenue".into()],
            dimensions: vec![dimension.into()],
            filters: Vec::new(),
            context: None,
            principal: None,
            tenant: None,
            ..QueryRequest::default()
        };
        compile(&project, &namespace(), &request)
    };
    for (dimension, relation) in [
        ("customer.region", "customer_regions"),
        ("customer__region", "customer_regions"),
        ("customer.segment", "customers"),
        ("customer_tiers.tier", "customer_tiers"),
        ("customer.tier", "customers"),
    ] {
        let sql = match ask(dimension) {
            Ok(compiled) => compiled.sql,
            Err(refusal) => panic!("{dimension}: {refusal:?}"),
        };
        assert!(
            sql.contains(&format!("\"analytics\".\"{relation}\"")),
            "{dimension} is not read from {relation}: {sql}"
        );
    }
    let refusal = ask("customer__nothing").unwrap_err();
    assert_eq!(refusal.code, "unresolved");
    // Both further joins of the entity have `since`, and `customers` has none.
    let refusal = ask("customer.since").unwrap_err();
    assert_eq!(refusal.code, "ambiguous_join_path", "{refusal:?}");
    assert!(
        refusal
            .hint
            .as_deref()
            .is_some_and(|h| h.contains("`customer_regions.since`")),
        "{refusal:?}"
    );
    assert!(ask("customer_tiers.since").is_ok());
}

/// Compiles against testdata/query/refusals.
fn refusals(
    metrics: &[&str],
    dimensions: &[&str],
    filters: &[&str],
    context: Option<&str>,
) -> Result<sqb::semantic::query::CompiledQuery, sqb::semantic::query::Refusal> {
    let project = Project::load(&repo().join("testdata/query/refusals")).unwrap();
    assert!(project.diagnostics.is_empty(), "{:#?}", project.diagnostics);
    let strings = |s: &[&str]| s.iter().map(|x| x.to_string()).collect();
    let request = QueryRequest {
        metrics: strings(metrics),
        dimensions: strings(dimensions),
        filters: strings(filters),
        context: context.map(str::to_string),
        principal: None,
        tenant: None,
        ..QueryRequest::default()
    };
    compile(&project, &namespace(), &request)
}

#[test]
fn every_refusal_has_its_code() {
    let code = |r: Result<_, sqb::semantic::query::Refusal>| {
        r.map(|_: sqb::semantic::query::CompiledQuery| ())
            .unwrap_err()
            .code
    };
    // A one-to-many join would count each order once per item.
    assert_eq!(
        code(refusals(&["revenue"], &["items.sku"], &[], None)),
        "fanout_unsafe"
    );
    assert_eq!(
        code(refusals(&["revenue"], &[], &["items.sku = 'sku-1'"], None)),
        "fanout_unsafe"
    );
    // Customers are reached as `customer` and as `buyer`.
    assert_eq!(
        code(refusals(&["revenue"], &["region"], &[], None)),
        "ambiguous_join_path"
    );
    assert!(refusals(&["revenue"], &["buyer.region"], &[], None).is_ok());
    assert_eq!(
        code(refusals(&["revenue"], &["method"], &[], None)),
        "unreachable"
    );
    // An opaque metric only at its native grain.
    assert!(refusals(&["order_revenue"], &["order_id"], &[], None).is_ok());
    assert_eq!(
        code(refusals(&["order_revenue"], &["placed_on"], &[], None)),
        "unsupported_measure"
    );
    assert_eq!(
        code(refusals(&["order_revenue"], &[], &[], None)),
        "unsupported_measure"
    );
}

#[test]
fn guardrails_refuse_in_their_context_and_warn_when_they_say_so() {
    let refused = refusals(
        &["revenue"],
        &["customer.region"],
        &[],
        Some("board_reporting"),
    )
    .unwrap_err();
    assert_eq!(refused.code, "guardrail");
    assert_eq!(
        refused.message,
        "guardrail `board_by_day` requires grouping by or filtering on `placed_on`"
    );
    assert_eq!(
        refused.hint.as_deref(),
        Some("The board reads revenue over time, never one total.")
    );
    // Grouped by it, filtered on it, or outside the context: served.
    assert!(refusals(&["revenue"], &["placed_on"], &[], Some("board_reporting")).is_ok());
    assert!(refusals(
        &["revenue"],
        &[],
        &["placed_on >= '2026-01-01'"],
        Some("board_reporting")
    )
    .is_ok());
    let served = refusals(&["revenue"], &["customer.region"], &[], None).unwrap();
    // The warn-level mandatory filter is applied, and said.
    assert!(
        served.sql.contains(r#"("s"."amount" > 0)"#),
        "{}",
        served.sql
    );
    assert_eq!(
        served.warnings,
        ["guardrail `positive` applied `amount > 0`"]
    );
}

fn shop_request(metrics: &[&str], dimensions: &[&str], principal: Option<&str>) -> QueryRequest {
    let strings = |s: &[&str]| s.iter().map(|x| x.to_string()).collect();
    QueryRequest {
        metrics: strings(metrics),
        dimensions: strings(dimensions),
        filters: Vec::new(),
        context: None,
        principal: principal.map(claims),
        tenant: None,
        ..QueryRequest::default()
    }
}

#[test]
fn a_tenant_sees_its_rows_only_and_an_outer_join_keeps_the_unmatched_ones() {
    let dir = tempfile::tempdir().unwrap();
    shop_in(dir.path(), "duckdb");
    // A role scoped to its tenant that may group by the customer's dimensions.
    let roles = dir.path().join("contracts/policies/roles.toml");
    let mut text = std::fs::read_to_string(&roles).unwrap();
    text.push_str("\n[roles.portal]\ndimensions = { allow = \"*\" }\n");
    std::fs::write(&roles, text).unwrap();
    let project = Project::load(dir.path()).unwrap();
    let db = dir.path().join("w.duckdb");
    // Customer 4 has an order but no row in dim_customers.
    let extra = "INSERT INTO analytics.fct_orders VALUES \
                 (104, 4, TIMESTAMPTZ '2026-04-06 10:00:00+00', 'placed', 'pickup', 40.00, false);";
    duckdb_file(&db, &format!("{}\n{extra}", shop_migrations()));
    let conn = duckdb::Connection::open(&db).unwrap();
    let run = |request: &QueryRequest| -> Vec<(Option<String>, String)> {
        let compiled = compile(&project, &namespace(), request).unwrap();
        let mut stmt = conn
            .prepare(&format!(
                "SELECT CAST(\"{}\" AS VARCHAR), CAST(\"{}\" AS VARCHAR) FROM ({}) q",
                compiled.columns[0],
                compiled.columns[compiled.columns.len() - 1],
                compiled.sql
            ))
            .unwrap();
        let params: Vec<&dyn duckdb::ToSql> = compiled
            .params
            .iter()
            .map(|p| p as &dyn duckdb::ToSql)
            .collect();
        stmt.query_map(params.as_slice(), |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    // The tenant's value is bound, never spliced.
    let one = shop_request(
        &["revenue"],
        &["status"],
        Some(r#"{"customer_id": 1, "roles": "customer"}"#),
    );
    let compiled = compile(&project, &namespace(), &one).unwrap();
    assert_eq!(compiled.params, ["1"]);
    assert!(
        !compiled.sql.contains("= 1") && compiled.sql.contains("= CAST($1 AS INTEGER)"),
        "{}",
        compiled.sql
    );
    assert_eq!(
        run(&one),
        [
            (Some("placed".into()), "35.00".into()),
            (Some("shipped".into()), "120.50".into())
        ]
    );
    // Scoped before joined: customer 4's order stays, with no month (a predicate on the joined
    // side after the join would drop it).
    let portal = r#"{"customer_id": "4", "roles": ["portal"]}"#;
    let rows = run(&shop_request(
        &["revenue"],
        &["customer.first_order_month"],
        Some(portal),
    ));
    assert_eq!(rows, [(None, "40.00".into())]);
    // An analyst is exempt from tenancy: every tenant's rows, the unmatched one included.
    let four = shop_request(
        &["revenue"],
        &["customer.first_order_month"],
        Some(r#"{"customer_id": "4", "roles": ["analyst", "customer"]}"#),
    );
    let all = run(&four);
    assert_eq!(
        all,
        [
            (Some("2026-04-01 00:00:00".into()), "245.49".into()),
            (None, "40.00".into())
        ]
    );
}

#[test]
fn roles_and_tenancy_refuse_what_they_do_not_allow() {
    let dir = tempfile::tempdir().unwrap();
    let project = shop_in(dir.path(), "duckdb");
    let refused = |r: QueryRequest| compile(&project, &namespace(), &r).unwrap_err().code;
    // No principal: the tenancy policy denies.
    assert_eq!(
        refused(shop_request(&["revenue"], &[], None)),
        "no_principal"
    );
    // A customer may see revenue and orders, by order date and status only.
    let customer = Some(r#"{"customer_id": 1}"#);
    assert!(compile(
        &project,
        &namespace(),
        &shop_request(&["revenue"], &["order_date"], customer)
    )
    .is_ok());
    assert_eq!(
        refused(shop_request(&["buyers"], &[], customer)),
        "forbidden"
    );
    assert_eq!(
        refused(shop_request(&["revenue"], &["fulfillment"], customer)),
        "forbidden"
    );
    // Nor filter by one: the filter would tell what the role does not see.
    let mut filtered = shop_request(&["revenue"], &[], customer);
    filtered.filters = vec!["fulfillment = 'pickup'".into()];
    assert_eq!(refused(filtered), "forbidden");
    // The analyst's dimensions deny fulfillment, and an undeclared role is refused.
    assert_eq!(
        refused(shop_request(
            &["revenue"],
            &["fulfillment"],
            Some(r#"{"roles": ["analyst"]}"#)
        )),
        "forbidden"
    );
    assert_eq!(
        refused(shop_request(
            &["revenue"],
            &[],
            Some(r#"{"roles": ["intern"], "customer_id": 1}"#)
        )),
        "forbidden"
    );
}

#[test]
fn a_masked_column_is_masked_in_the_outermost_projection() {
    let dir = tempfile::tempdir().unwrap();
    let project = shop_in(dir.path(), "duckdb");
    let db = dir.path().join("w.duckdb");
    duckdb_file(&db, &shop_migrations());
    let conn = duckdb::Connection::open(&db).unwrap();
    let emails = |principal: &str| -> Vec<Option<String>> {
        let request = shop_request(&["orders"], &["customer.email"], Some(principal));
        let compiled = compile(&project, &namespace(), &request).unwrap();
        let mut stmt = conn
            .prepare(&format!(
                "SELECT \"customer.email\" FROM ({}) q ORDER BY 1",
                compiled.sql
            ))
            .unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    // The analyst sees MD5 digests; finance (`masking = []`) the addresses.
    let hashed = emails(r#"{"roles": ["analyst"]}"#);
    let plain = emails(r#"{"roles": ["finance"]}"#);
    assert!(plain.contains(&Some("ada@example.com".into())), "{plain:?}");
    let digest: String = conn
        .query_row("SELECT md5('ada@example.com')", [], |r| r.get(0))
        .unwrap();
    assert!(hashed.contains(&Some(digest)), "{hashed:?}");
    assert!(
        !hashed.iter().flatten().any(|e| e.contains('@')),
        "{hashed:?}"
    );
}

/// A dimension over an expression of a masked column would show what the mask hides: refused
/// to the principal who sees the column masked, grouped by or filtered on; served to one who
/// sees it.
#[test]
fn an_expression_over_a_masked_column_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    shop_in(dir.path(), "duckdb");
    let sidecar = dir.path().join("models/marts/dim_customers.toml");
    let mut text = std::fs::read_to_string(&sidecar).unwrap();
    text.push_str("\n[dimensions.email_domain]\nexpr = \"split_part(email, '@', 2)\"\n");
    std::fs::write(&sidecar, text).unwrap();
    let project = Project::load(dir.path()).unwrap();
    assert!(project.diagnostics.is_empty(), "{:#?}", project.diagnostics);
    let ask = |dimensions: &[&str], filters: &[&str], principal: &str| {
        let mut request = shop_request(&["orders"], dimensions, Some(principal));
        request.filters = filters.iter().map(|f| f.to_string()).collect();
        compile(&project, &namespace(), &request)
    };
    let analyst = r#"{"roles": ["analyst"]}"#;
    let refused = ask(&["customer.email_domain"], &[], analyst).unwrap_err();
    assert_eq!(refused.code, "forbidden", "{refused:?}");
    assert!(
        refused
            .message
            .contains("an expression over `dim_customers.email`"),
        "{refused:?}"
    );
    let refused = ask(&[], &["customer.email_domain = 'example.com'"], analyst).unwrap_err();
    assert_eq!(refused.code, "forbidden", "{refused:?}");
    let served = ask(&["customer.email_domain"], &[], r#"{"roles": ["finance"]}"#).unwrap();
    assert!(
        served.sql.contains("split_part(\"j_customer\".\"email\""),
        "{}",
        served.sql
    );
}

#[test]
fn a_balance_is_collapsed_over_time_and_summed_over_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.duckdb");
    duckdb_file(
        &db,
        "CREATE SCHEMA analytics;
         CREATE TABLE analytics.orders (order_id INTEGER, customer_id INTEGER, buyer_id INTEGER, amount DECIMAL(12,2), placed_on DATE);
         CREATE TABLE analytics.customers (customer_id INTEGER, region VARCHAR);
         INSERT INTO analytics.orders VALUES
           (1, 7, 7, 10.00, DATE '2026-01-01'), (2, 7, 7, 20.00, DATE '2026-01-02'),
           (3, 8, 8, 5.00, DATE '2026-01-01'), (4, 8, 8, 7.00, DATE '2026-01-03');
         INSERT INTO analytics.customers VALUES (7, 'north'), (8, 'south');",
    );
    let conn = duckdb::Connection::open(&db).unwrap();
    let rows = |metric: &str, dimensions: &[&str]| -> Vec<String> {
        let compiled = refusals(&[metric], dimensions, &[], None).unwrap();
        let sql = format!(
            "SELECT CAST(q.\"{metric}\" AS VARCHAR) FROM ({}) q ORDER BY 1",
            compiled.sql
        );
        let mut stmt = conn.prepare(&sql).unwrap_or_else(|e| panic!("{e}\n{sql}"));
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    // The last day's balances (the 3rd: 7.00), not the sum over days (42.00).
    assert_eq!(rows("balance", &[]), ["7.00"]);
    // Per region: north's last day is the 2nd (20.00), south's the 3rd (7.00).
    assert_eq!(rows("balance", &["customer.region"]), ["20.00", "7.00"]);
    // By day, each day's balances summed.
    assert_eq!(rows("balance", &["placed_on"]), ["15.00", "20.00", "7.00"]);
    // The average over days, per region: north (10 + 20) / 2, south (5 + 7) / 2.
    assert_eq!(rows("balance_avg", &["customer.region"]), ["15.0", "6.0"]);
}
