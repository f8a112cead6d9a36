//! Semantic contracts on the bundled example: every kind of `contracts/` file compiles clean,
//! roles inherit field by field, and the drift impact of a column lists every contract that
//! names it. (The invalid projects, one per check, are testdata/compile/*_checks.)

mod common;

use common::repo;
use sqb::project::policies::Allow;
use sqb::project::Project;

fn shop() -> Project {
    Project::load(&repo().join("examples/shop")).expect("the shop example loads")
}

#[test]
fn the_shop_has_every_kind_of_contract_and_compiles_clean() {
    let project = shop();
    let contracts = &project.contracts;
    assert_eq!(project.metrics.len(), 5);
    assert_eq!(contracts.guardrails.len(), 4);
    assert_eq!(contracts.finality.len(), 1);
    assert_eq!(contracts.assertions.len(), 3);
    assert!(contracts.tenancy.is_some() && contracts.roles.is_some());
    let mut diags = project.diagnostics.clone();
    diags.extend(sqb::semantic::validate(&project));
    assert!(diags.is_empty(), "{diags:#?}");
}

#[test]
fn roles_inherit_field_by_field_and_an_authored_empty_list_replaces() {
    let project = shop();
    let roles = project.contracts.roles.as_ref().unwrap();
    let role = |name| sqb::semantic::effective_role(roles, name).unwrap();

    // finance inherits the analyst's metrics (`"*"`) and authors `masking = []`.
    let finance = role("finance");
    assert!(matches!(finance.metrics.allow, Some(Allow::All(_))));
    assert_eq!(finance.masking.as_ref().map(Vec::len), Some(0));
    assert_eq!(finance.run_sql.map(|r| r.value), Some(true));
    assert_eq!(finance.tenancy_exempt.map(|t| t.value), Some(true));

    // board replaces the metrics it may see, keeps the analyst's dimensions and hashed email.
    let board = role("board");
    let Some(Allow::Only(metrics)) = &board.metrics.allow else {
        panic!("board allows only some metrics: {:?}", board.metrics.allow);
    };
    let names: Vec<&str> = metrics.value.iter().map(|m| m.value.as_str()).collect();
    assert_eq!(names, ["revenue", "average_order_value"]);
    let deny: Vec<&str> = board
        .dimensions
        .deny
        .iter()
        .flat_map(|d| d.value.iter())
        .map(|d| d.value.as_str())
        .collect();
    assert_eq!(deny, ["fulfillment"]);
    let masks = board.masking.unwrap();
    assert_eq!(masks.len(), 1);
    assert_eq!(masks[0].strategy.as_ref().unwrap().value, "hash");

    // customer inherits nothing: its own partial mask, no SQL.
    let customer = role("customer");
    assert_eq!(
        customer.masking.unwrap()[0]
            .strategy
            .as_ref()
            .unwrap()
            .value,
        "partial"
    );
    assert!(customer.run_sql.is_none());
    assert!(sqb::semantic::effective_role(roles, "nobody").is_none());
}

#[test]
fn a_column_lists_every_semantic_contract_that_names_it() {
    let project = shop();
    let uses = |relation, column| -> Vec<String> {
        sqb::semantic::uses(&project, relation, column)
            .into_iter()
            .map(|u| {
                format!("{} @ {}", u.what, {
                    let f = project.sources.get(u.loc.file);
                    let (line, _) = f.line_col(u.loc.span().start);
                    format!("{}:{line}", f.rel_path)
                })
            })
            .collect()
    };
    insta::assert_debug_snapshot!(
        "uses_fct_orders_customer_id",
        uses("fct_orders", "customer_id")
    );
    insta::assert_debug_snapshot!("uses_fct_orders_status", uses("fct_orders", "status"));
    insta::assert_debug_snapshot!(
        "uses_fct_orders_ordered_at",
        uses("fct_orders", "ordered_at")
    );
    insta::assert_debug_snapshot!("uses_dim_customers_email", uses("dim_customers", "email"));
    insta::assert_debug_snapshot!("uses_raw_orders_amount", uses("raw_orders", "amount"));
}
