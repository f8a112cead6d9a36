//! The findings of `contract diff`, one rule at a time.

use super::*;
use crate::catalog::RelationKind;
use crate::source::{FileId, Spanned};

fn loc() -> Loc {
    Loc::file_start(FileId(0))
}

fn col(name: &str, ty: Option<&str>, nullable: Option<bool>) -> Column {
    Column {
        name: Spanned::new(name.to_string(), loc()),
        file: FileId(0),
        type_text: ty.map(|t| Spanned::new(t.into(), loc())),
        ty: ty.map(|t| std::sync::Arc::new(types::parse(t, Engine::Postgres).unwrap())),
        nullable: nullable.map(|n| Spanned::new(n, loc())),
        docs: None,
    }
}

fn phys(name: &str, ty: &str, nullable: Option<bool>) -> PhysicalColumn {
    PhysicalColumn::new(name.into(), ty, nullable)
}

fn relation(columns: Vec<PhysicalColumn>) -> PhysicalRelation {
    PhysicalRelation {
        name: "t".into(),
        kind: RelationKind::Table,
        columns,
        unavailable: None,
    }
}

fn run(
    columns: &[Column],
    coverage: Coverage,
    physical: Option<&PhysicalRelation>,
) -> Vec<(FindingKind, Severity, Option<String>)> {
    let declared = Declared {
        engine: Engine::Postgres,
        compare_sizes: true,
        coverage,
        columns: columns.iter().collect(),
        enums: Box::new(|_| None),
        resource_loc: loc(),
    };
    diff(&declared, physical, "db.s.t", None)
        .into_iter()
        .map(|f| (f.kind, f.severity, f.column))
        .collect()
}

#[test]
fn agreement_has_no_findings() {
    let declared = [
        col("id", Some("INTEGER"), Some(false)),
        col("name", Some("VARCHAR(10)"), None),
    ];
    let physical = relation(vec![
        phys("id", "integer", Some(false)),
        phys("name", "character varying(10)", Some(true)),
    ]);
    assert!(run(&declared, Coverage::Closed, Some(&physical)).is_empty());
}

#[test]
fn case_only_difference_is_one_name_conflict() {
    let declared = [col("OrderID", Some("INTEGER"), None)];
    let physical = relation(vec![phys("orderid", "integer", None)]);
    assert_eq!(
        run(&declared, Coverage::Closed, Some(&physical)),
        [(
            FindingKind::NameConflict,
            Severity::Error,
            Some("OrderID".into())
        )]
    );
}

#[test]
fn exact_matches_win_over_case_folded_ones() {
    let declared = [
        col("id", Some("INTEGER"), None),
        col("ID", Some("INTEGER"), None),
    ];
    let physical = relation(vec![
        phys("ID", "integer", None),
        phys("id", "integer", None),
    ]);
    assert!(run(&declared, Coverage::Closed, Some(&physical)).is_empty());
}

#[test]
fn columns_are_matched_by_name_in_any_order() {
    let declared = [
        col("b", Some("TEXT"), None),
        col("a", Some("INTEGER"), None),
        col("gone", Some("DATE"), None),
        col("c", Some("INTEGER"), None),
    ];
    // `c` is where the declaration puts it but of another type; `a` and `b` are swapped.
    let physical = relation(vec![
        phys("a", "integer", None),
        phys("b", "text", None),
        phys("extra", "integer", None),
        phys("c", "text", None),
    ]);
    let mut found = run(&declared, Coverage::Closed, Some(&physical));
    found.sort_by_key(|(_, _, c)| c.clone());
    assert_eq!(
        found,
        [
            (FindingKind::TypeMismatch, Severity::Error, Some("c".into())),
            (
                FindingKind::UndeclaredPhysicalColumn,
                Severity::Error,
                Some("extra".into())
            ),
            (
                FindingKind::MissingPhysicalColumn,
                Severity::Error,
                Some("gone".into())
            ),
        ]
    );
}

#[test]
fn severity_follows_the_contract_shape() {
    let declared = [col("gone", Some("DATE"), None)];
    let physical = relation(vec![phys("extra", "integer", None)]);
    let closed = run(&declared, Coverage::Closed, Some(&physical));
    assert_eq!(closed[0].1, Severity::Error);
    assert_eq!(
        closed[1],
        (
            FindingKind::UndeclaredPhysicalColumn,
            Severity::Error,
            Some("extra".into())
        )
    );
    let open = run(&declared, Coverage::Open, Some(&physical));
    assert_eq!((open[0].1, open[1].1), (Severity::Error, Severity::Info));
    let metadata = run(&declared, Coverage::Metadata, Some(&physical));
    assert_eq!(
        (metadata[0].1, metadata[1].1),
        (Severity::Warning, Severity::Info)
    );
}

#[test]
fn each_policy_gives_its_coverage() {
    assert_eq!(Coverage::of(Policy::Enforced), Coverage::Closed);
    assert_eq!(Coverage::of(Policy::Implicit), Coverage::Open);
    assert_eq!(Coverage::of(Policy::Explicit), Coverage::Metadata);
    assert_eq!(Coverage::of(Policy::None), Coverage::Metadata);
    assert_eq!(Policy::Enforced.as_str(), "enforced");
    assert_eq!(
        FindingKind::UndeclaredPhysicalColumn.as_str(),
        "undeclared_physical_column"
    );
}

#[test]
fn nullability_is_compared_only_where_stated_and_known() {
    let declared = [
        col("a", Some("INTEGER"), Some(false)),
        col("b", Some("INTEGER"), Some(true)),
        col("c", Some("INTEGER"), None),
    ];
    let table = relation(vec![
        phys("a", "integer", Some(true)),
        phys("b", "integer", Some(false)),
        phys("c", "integer", Some(false)),
    ]);
    let found = run(&declared, Coverage::Open, Some(&table));
    assert_eq!(
        found
            .iter()
            .map(|f| f.2.clone().unwrap())
            .collect::<Vec<_>>(),
        ["a", "b"]
    );
    let mut view = relation(vec![
        phys("a", "integer", None),
        phys("b", "integer", None),
        phys("c", "integer", None),
    ]);
    view.kind = RelationKind::View;
    assert!(run(&declared, Coverage::Open, Some(&view)).is_empty());
}

#[test]
fn missing_relation_and_unavailable_relation() {
    let declared = [col("a", Some("INTEGER"), None)];
    assert_eq!(
        run(&declared, Coverage::Open, None)[0].0,
        FindingKind::RelationMissing
    );
    let mut broken = relation(vec![]);
    broken.unavailable = Some("no".into());
    assert_eq!(
        run(&declared, Coverage::Open, Some(&broken))[0].0,
        FindingKind::InspectionUnavailable
    );
}

#[test]
fn domains_agree_with_their_base_type() {
    let declared = [col("p", Some("INTEGER"), None)];
    let mut column = phys("p", "positive_int", None);
    column.user_type = Some(Box::new(crate::catalog::UserType {
        domain_base: Some("integer".into()),
        ..Default::default()
    }));
    assert!(run(&declared, Coverage::Closed, Some(&relation(vec![column]))).is_empty());
}

/// The remembered type comparison answers for the declaration it is asked about: the same
/// declared type and catalog spelling compared with and without sizes, and a declared type that
/// names one of the project's enums, each get their own answer.
#[test]
fn remembered_comparisons_keep_sizes_and_enums_apart() {
    let declared_col = col("name", Some("VARCHAR(10)"), None);
    let ty = declared_col.ty.clone().unwrap();
    let wider = phys("name", "character varying(20)", None);
    let declared = |compare_sizes: bool| Declared {
        engine: Engine::Postgres,
        compare_sizes,
        coverage: Coverage::Closed,
        columns: vec![&declared_col],
        enums: Box::new(|_| None),
        resource_loc: loc(),
    };
    for _ in 0..2 {
        assert!(!type_agrees_remembered(&declared(true), &ty, &wider));
        assert!(type_agrees_remembered(&declared(false), &ty, &wider));
    }
    // `mood` is an enum of the project: its members decide, never a remembered answer.
    let mood = std::sync::Arc::new(DataType::Named("mood".into()));
    let sad = Spanned::new("sad".to_string(), loc());
    let def = EnumDef {
        name: "mood".into(),
        file: FileId(0),
        description: None,
        members: vec![(sad.clone(), sad)],
        base: Some(EnumBase::Varchar),
    };
    let with_mood = Declared {
        enums: Box::new(|name| (name == "mood").then_some(&def)),
        ..declared(true)
    };
    let text = phys("mood", "character varying", None);
    let number = phys("mood", "integer", None);
    for _ in 0..2 {
        assert!(type_agrees_remembered(&with_mood, &mood, &text));
        assert!(!type_agrees_remembered(&with_mood, &mood, &number));
        assert_eq!(
            type_agrees_remembered(&declared(true), &mood, &text),
            type_agrees(&declared(true), &mood, &text)
        );
    }
}
