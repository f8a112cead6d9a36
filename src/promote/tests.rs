use super::*;

fn col(name: &str) -> Column {
    Column {
        name: name.into(),
        ..Column::default()
    }
}

fn facts(name: &str) -> Facts {
    Facts {
        dest: Name::new("prod", name),
        staged: Name::new("staging", name),
        kind: Some("table".into()),
        staged_kind: Some("table".into()),
        columns: vec![
            Column {
                not_null: true,
                ..col("id")
            },
            col("name"),
        ],
        staged_columns: vec![col("id"), col("name")],
        key: vec!["id".into()],
        triggers: Vec::new(),
        references: Vec::new(),
        sequences: Vec::new(),
        dependents: Vec::new(),
        not_null: Vec::new(),
    }
}

#[test]
fn copies_in_place_by_key_and_deletes_what_vanished_last() {
    let plan = plan(Engine::Postgres, &[facts("customer")]).unwrap();
    let sql: Vec<&str> = plan.writes.iter().map(|s| s.sql.as_str()).collect();
    assert_eq!(
        plan.locks[0].sql,
        r#"LOCK TABLE "prod"."customer" IN SHARE ROW EXCLUSIVE MODE"#
    );
    assert!(sql[0].starts_with(r#"INSERT INTO "prod"."customer" ("id", "name") SELECT "id", "name" FROM "staging"."customer" ON CONFLICT ("id") DO UPDATE SET ("name") = ROW(EXCLUDED."name") WHERE"#));
    assert!(sql[1].starts_with(r#"DELETE FROM "prod"."customer" AS d WHERE NOT EXISTS"#));
    assert_eq!(
        plan.checks.len(),
        2,
        "duplicate keys and NULLs under NOT NULL"
    );
}

#[test]
fn generated_columns_are_left_out_and_identity_overridden() {
    let mut f = facts("film");
    f.columns.push(Column {
        generated: true,
        ..col("fulltext")
    });
    f.columns[0].identity_always = true;
    let plan = plan(Engine::Postgres, &[f]).unwrap();
    let insert = &plan.writes[0].sql;
    assert!(!insert.contains("fulltext"), "{insert}");
    assert!(insert.contains("OVERRIDING SYSTEM VALUE"), "{insert}");
}

#[test]
fn triggers_are_disabled_around_the_copy_and_enabled_as_they_were() {
    let mut f = facts("film");
    f.triggers = vec![
        Trigger {
            name: "last_updated".into(),
            enabled: 'O',
        },
        Trigger {
            name: "audit".into(),
            enabled: 'A',
        },
    ];
    let sql: Vec<String> = plan(Engine::Postgres, &[f])
        .unwrap()
        .writes
        .into_iter()
        .map(|s| s.sql)
        .collect();
    assert!(sql[0].ends_with(r#"DISABLE TRIGGER "last_updated""#));
    assert!(sql[1].ends_with(r#"DISABLE TRIGGER "audit""#));
    assert!(sql[sql.len() - 2].ends_with(r#"ENABLE TRIGGER "last_updated""#));
    assert!(sql[sql.len() - 1].ends_with(r#"ENABLE ALWAYS TRIGGER "audit""#));
}

#[test]
fn parents_are_copied_first_and_deleted_from_last() {
    let mut parent = facts("customer");
    parent.references.push(Reference {
        constraint: "payment_customer_fkey".into(),
        from: Name::new("prod", "payment"),
        columns: vec!["customer_id".into()],
        to_columns: vec!["id".into()],
    });
    let child = facts("payment");
    let plan = plan(Engine::Postgres, &[child, parent]).unwrap();
    let order: Vec<(&str, bool)> = plan
        .writes
        .iter()
        .map(|s| (s.relation.name.as_str(), s.sql.starts_with("INSERT")))
        .collect();
    assert_eq!(
        order,
        [
            ("customer", true),
            ("payment", true),
            ("payment", false),
            ("customer", false)
        ]
    );
    // The child is published in the same run: its staged rows are what must match.
    let reference = plan
        .checks
        .iter()
        .find(|c| c.what.contains("payment"))
        .unwrap();
    assert!(reference
        .step
        .sql
        .contains(r#"FROM "staging"."payment" AS r"#));
}

#[test]
fn what_cannot_be_published_is_refused_before_anything_is_planned() {
    let mut view = facts("film_list");
    view.kind = Some("view".into());
    let mut missing = facts("rental");
    missing.staged_kind = None;
    let mut keyless = facts("store");
    keyless.key.clear();
    keyless.references.push(Reference {
        constraint: "staff_store_fkey".into(),
        from: Name::new("prod", "staff"),
        columns: vec!["store_id".into()],
        to_columns: vec!["id".into()],
    });
    let mut drifted = facts("actor");
    drifted.staged_columns.push(col("extra"));
    let refused = plan(Engine::Postgres, &[view, missing, keyless, drifted]).unwrap_err();
    let whys: Vec<String> = refused
        .iter()
        .map(|r| format!("{}: {}", r.relation, r.why))
        .collect();
    assert_eq!(whys.len(), 4, "{whys:#?}");
    assert!(whys[0].contains("is a view"));
    assert!(whys[1].contains("does not exist"));
    assert!(whys[2].contains("no primary key"));
    assert!(whys[3].contains("no column `extra`"));
}

#[test]
fn a_new_destination_is_created_with_its_contract_not_nulls() {
    let mut f = facts("fresh");
    f.kind = None;
    f.columns.clear();
    f.not_null = vec!["id".into()];
    let plan = plan(Engine::DuckDb, &[f]).unwrap();
    let sql: Vec<&str> = plan.writes.iter().map(|s| s.sql.as_str()).collect();
    assert_eq!(
        sql,
        [
            r#"CREATE TABLE "prod"."fresh" AS SELECT "id", "name" FROM "staging"."fresh" LIMIT 0"#,
            r#"ALTER TABLE "prod"."fresh" ALTER COLUMN "id" SET NOT NULL"#,
            r#"INSERT INTO "prod"."fresh" ("id", "name") SELECT "id", "name" FROM "staging"."fresh""#,
        ]
    );
    assert!(plan.locks.is_empty());
}
