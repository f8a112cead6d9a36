//! The filter language (docs/security.md, "Filters") proven, not argued. Generated filters (the
//! grammar's constructs, the attacks of the security review, and mutations of both: quotes,
//! parentheses, comments, placeholders, Unicode) are each either refused or compiled to a
//! statement that reads only relations the principal's query may read, calls only the
//! compiler's own functions and the allow-list, and names only dimensions the principal sees.
//! And non-interference, on both engines: two warehouses that differ only in other tenants'
//! rows and in a table no model declares give byte-identical answers to every filter.

mod common;

use std::collections::BTreeSet;
use std::ops::ControlFlow;
use std::path::Path;

use common::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use sqb::catalog::Namespace;
use sqb::project::Project;
use sqb::semantic::query::{compile, QueryRequest};
use sqlparser::ast::{visit_expressions, visit_relations, Expr};

/// The shop's customer portal: a customer (the default role) sees `revenue` and `orders` by
/// `order_date` and `status`, scoped to their own orders.
const CLAIMS: &str = r#"{"customer_id": 1}"#;
const VISIBLE_DIMENSIONS: [&str; 2] = ["order_date", "status"];

fn request(dimensions: &[&str], filters: Vec<String>) -> QueryRequest {
    QueryRequest {
        metrics: vec!["revenue".into(), "orders".into()],
        dimensions: dimensions.iter().map(|d| d.to_string()).collect(),
        filters,
        principal: serde_json::from_str(CLAIMS).unwrap(),
        ..QueryRequest::default()
    }
}

fn namespace() -> Namespace {
    Namespace {
        database: None,
        schema: "analytics".into(),
    }
}

/// The relations and functions a compiled statement reads and calls.
fn reads(project: &Project, sql: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let statements = sqlparser::parser::Parser::parse_sql(project.engine().dialect().as_ref(), sql)
        .unwrap_or_else(|e| panic!("{e}: the compiler wrote SQL that does not parse:\n{sql}"));
    let (mut relations, mut functions) = (BTreeSet::new(), BTreeSet::new());
    let _ = visit_relations(&statements, |name| {
        relations.insert(name.to_string());
        ControlFlow::<()>::Continue(())
    });
    let _ = visit_expressions(&statements, |e: &Expr| {
        if let Expr::Function(f) = e {
            functions.insert(f.name.to_string().to_lowercase());
        }
        ControlFlow::<()>::Continue(())
    });
    // The CTEs the compiler names are no relations of the warehouse.
    relations.retain(|r| !r.starts_with("\"m") && r != "\"k\"");
    (relations, functions)
}

/// What the principal's queries may read and call without any filter: every visible dimension.
fn baseline(project: &Project) -> (BTreeSet<String>, BTreeSet<String>) {
    let compiled = compile(
        project,
        &namespace(),
        &request(&VISIBLE_DIMENSIONS, Vec::new()),
    )
    .unwrap_or_else(|r| panic!("{r:?}"));
    let (relations, mut functions) = reads(project, &compiled.sql);
    let rules = sqb::engine_rules::of(project.engine());
    functions.extend(rules.filter_functions().iter().map(|f| f.to_string()));
    (relations, functions)
}

fn column_refs(filter: &str, project: &Project) -> Vec<String> {
    let expr = sqb::semantic::filter::parse(filter, project.engine()).unwrap();
    let mut names = Vec::new();
    let _ = visit_expressions(&expr, |e: &Expr| {
        match e {
            Expr::Identifier(i) => names.push(i.value.clone()),
            Expr::CompoundIdentifier(parts) => names.push(
                parts
                    .iter()
                    .map(|p| p.value.clone())
                    .collect::<Vec<_>>()
                    .join("."),
            ),
            _ => {}
        }
        ControlFlow::<()>::Continue(())
    });
    names
}

// ---------------------------------------------------------------------------------------------
// The generator

const COLUMNS: &[&str] = &[
    "status",
    "order_date",
    "\"status\"",
    "STATUS",
    "amount",
    "email",
    "customer_id",
    "customer.email",
    "s.status",
    "secret",
];

const LITERALS: &[&str] = &[
    "'shipped'",
    "'cancelled'",
    "'O''Brien'",
    "'é✓ 🙂'",
    "1",
    "-2",
    "3.5",
    "NULL",
    "TRUE",
    "DATE '2026-01-01'",
    "INTERVAL '7 days'",
    "''') or (1=1'",
];

/// The attacks of the security review, and their relatives.
const ATTACKS: &[&str] = &[
    "(select count(*) from raw.orders)",
    "(select count(*) from raw.secrets)",
    "query_to_xml('select email from raw.customers where id = 3', true, true, '')::text",
    "pg_read_file('/etc/passwd')",
    "read_text('/etc/passwd')",
    "read_csv('/etc/passwd')",
    "(select count(*) from glob('/etc/*'))",
    "query('select 1')",
    "current_setting('is_superuser')",
    "pg_sleep(1)",
    "$1",
    "(select status)",
    "exists (select 1 from raw.secrets)",
    "version()",
    "current_user",
    "lower((select email from raw.customers limit 1))",
];

const FUNCTIONS: &[&str] = &[
    "lower",
    "upper",
    "coalesce",
    "abs",
    "md5",
    "pg_read_file",
    "read_text",
    "getenv",
    "concat",
];

fn leaf() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(COLUMNS).prop_map(str::to_string),
        4 => prop::sample::select(LITERALS).prop_map(str::to_string),
        2 => prop::sample::select(ATTACKS).prop_map(str::to_string),
    ]
}

fn expression() -> impl Strategy<Value = String> {
    leaf().prop_recursive(4, 24, 3, |inner| {
        let op = prop::sample::select(
            &[
                "=",
                "<>",
                "<",
                ">=",
                "AND",
                "OR",
                "+",
                "*",
                "||",
                "LIKE",
                "ILIKE",
                "IS DISTINCT FROM",
            ][..],
        );
        prop_oneof![
            (inner.clone(), op, inner.clone()).prop_map(|(a, op, b)| format!("{a} {op} {b}")),
            inner.clone().prop_map(|a| format!("NOT ({a})")),
            inner.clone().prop_map(|a| format!("({a})")),
            inner.clone().prop_map(|a| format!("{a} IS NULL")),
            (
                inner.clone(),
                prop::collection::vec(prop::sample::select(LITERALS), 1..4)
            )
                .prop_map(|(a, list)| format!("{a} IN ({})", list.join(", "))),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(a, b, c)| format!("{a} BETWEEN {b} AND {c}")),
            (prop::sample::select(FUNCTIONS), inner.clone()).prop_map(|(f, a)| format!("{f}({a})")),
            inner.clone().prop_map(|a| format!("CAST({a} AS integer)")),
            inner.clone().prop_map(|a| format!("{a}::text")),
        ]
    })
}

/// A text with one of the edits an attacker tries: a quote, a parenthesis, a comment, a
/// statement separator, a placeholder or a multi-byte character, anywhere.
fn mutated() -> impl Strategy<Value = String> {
    let edits = prop::sample::select(
        &[
            "'",
            "\"",
            "(",
            ")",
            "--",
            "/*",
            "*/",
            ";",
            "$1",
            "é",
            "\\",
            " OR 1=1",
            ") OR (1=1",
        ][..],
    );
    (expression(), edits, any::<prop::sample::Index>()).prop_map(|(text, edit, at)| {
        let cut = text
            .char_indices()
            .map(|(i, _)| i)
            .chain([text.len()])
            .nth(at.index(text.chars().count() + 1))
            .unwrap_or(text.len());
        format!("{}{edit}{}", &text[..cut], &text[cut..])
    })
}

fn filters() -> impl Strategy<Value = String> {
    prop_oneof![3 => expression(), 2 => mutated()]
}

#[test]
fn every_generated_filter_is_refused_or_reads_only_what_the_principal_may() {
    let project = Project::load(&repo().join("examples/shop")).unwrap();
    let (relations, functions) = baseline(&project);
    let mut runner = TestRunner::new(Config {
        cases: 768,
        failure_persistence: None,
        ..Config::default()
    });
    let (accepted, refused) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
    runner
        .run(&filters(), |filter| {
            let asked = request(&["status"], vec![filter.clone()]);
            let compiled = match compile(&project, &namespace(), &asked) {
                Ok(compiled) => compiled,
                Err(_) => {
                    refused.set(refused.get() + 1);
                    return Ok(());
                }
            };
            accepted.set(accepted.get() + 1);
            let (read, called) = reads(&project, &compiled.sql);
            let extra: Vec<_> = read.difference(&relations).collect();
            prop_assert!(extra.is_empty(), "`{}` reads {:?}", filter, extra);
            let unknown: Vec<_> = called.difference(&functions).collect();
            prop_assert!(unknown.is_empty(), "`{}` calls {:?}", filter, unknown);
            for name in column_refs(&filter, &project) {
                let visible = VISIBLE_DIMENSIONS
                    .iter()
                    .any(|d| d.eq_ignore_ascii_case(name.trim_matches('"')));
                prop_assert!(visible, "`{}` names `{}`", filter, name);
            }
            prop_assert_eq!(compiled.params.len(), 1, "only the tenant is bound");
            Ok(())
        })
        .unwrap();
    // Both sides of the property were exercised.
    let (accepted, refused) = (accepted.get(), refused.get());
    assert!(
        accepted > 20 && refused > 20,
        "{accepted} accepted, {refused} refused"
    );
}

// ---------------------------------------------------------------------------------------------
// Non-interference

/// Filters accepted and refused, the attacks among them.
fn probe_filters() -> Vec<String> {
    let mut filters: Vec<String> = [
        "status = 'shipped'",
        "status <> 'cancelled' AND order_date >= DATE '2020-01-01'",
        "lower(status) LIKE 's%' OR status IS NULL",
        "status IN ('shipped', 'returned')",
        "coalesce(status, '') || 'x' = 'shippedx'",
    ]
    .iter()
    .map(|f| f.to_string())
    .collect();
    filters.extend(ATTACKS.iter().map(|a| format!("{a} = 1")));
    filters.extend(
        ATTACKS
            .iter()
            .map(|a| format!("status = 'shipped' AND {a} IS NOT NULL")),
    );
    filters
}

/// What differs between the two warehouses: rows of other tenants, and a table no model
/// declares.
const OTHER_TENANTS: &str = "
    INSERT INTO analytics.fct_orders
        (order_id, customer_id, ordered_at, status, fulfillment, amount, is_large)
        SELECT order_id + 1000, customer_id + 100, ordered_at, status, fulfillment, amount * 7,
            is_large
        FROM analytics.fct_orders;
    INSERT INTO raw.orders (id, customer_id, ordered_at, status, fulfillment, amount)
        SELECT id + 1000, customer_id + 100, ordered_at, status, fulfillment, amount * 7
        FROM raw.orders;
    CREATE TABLE raw.secrets (secret VARCHAR(40));
    INSERT INTO raw.secrets VALUES ('the crown jewels'), ('and more');
";
fn answers(root: &Path, url: Option<&str>) -> Vec<String> {
    probe_filters()
        .iter()
        .map(|filter| {
            let mut cmd = sqb();
            cmd.current_dir(root).args([
                "query", "--from", "prod", "-m", "revenue", "-m", "orders", "-d", "status",
                "--claims", CLAIMS, "--format", "json", "--filter", filter,
            ]);
            if let Some(url) = url {
                cmd.env("SQB_DATABASE_URL", url);
            }
            let out = run(&mut cmd);
            format!(
                "$ --filter {filter}\nexit {:?}\n{}\n{}",
                out.status.code(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        })
        .collect()
}

fn shop_copy(root: &Path, engine: &str) {
    copy_tree(&repo().join("examples/shop"), root);
    let _ = std::fs::remove_file(root.join("warehouse.duckdb"));
    let _ = std::fs::remove_dir_all(root.join(".sqb"));
    let toml = std::fs::read_to_string(root.join("sqb.toml")).unwrap();
    let toml = toml.replace("engine = \"duckdb\"", &format!("engine = \"{engine}\""));
    std::fs::write(root.join("sqb.toml"), toml).unwrap();
}

fn assert_same(one: &[String], other: &[String]) {
    assert!(
        one.iter().any(|a| a.contains("exit Some(0)")),
        "no filter was served"
    );
    for (a, b) in one.iter().zip(other) {
        assert_eq!(a, b, "the answers differ");
    }
}

#[test]
fn other_tenants_rows_and_undeclared_tables_never_change_an_answer_on_duckdb() {
    let (one, other) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    shop_copy(one.path(), "duckdb");
    shop_copy(other.path(), "duckdb");
    duckdb_file(&one.path().join("warehouse.duckdb"), &shop_migrations());
    duckdb_file(
        &other.path().join("warehouse.duckdb"),
        &format!("{}\n{OTHER_TENANTS}", shop_migrations()),
    );
    assert_same(&answers(one.path(), None), &answers(other.path(), None));
}

#[test]
fn other_tenants_rows_and_undeclared_tables_never_change_an_answer_on_postgres() {
    let (Some(one), Some(other)) = (
        TestDb::create("filter_noninterference_a"),
        TestDb::create("filter_noninterference_b"),
    ) else {
        return;
    };
    pg_exec(&one.url, &shop_migrations());
    pg_exec(
        &other.url,
        &format!("{}\n{OTHER_TENANTS}", shop_migrations()),
    );
    let root = tempfile::tempdir().unwrap();
    shop_copy(root.path(), "postgres");
    let a = answers(root.path(), Some(&one.url));
    let b = answers(root.path(), Some(&other.url));
    assert_same(&a, &b);
}
