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
        parents: Vec::new(),
        sequences: Vec::new(),
        dependents: Vec::new(),
        not_null: Vec::new(),
        swap: Default::default(),
        rights: Rights::all(),
        staged_rights: Rights::all(),
        may_create: true,
    }
}

#[test]
fn copies_in_place_by_key_and_deletes_what_vanished_last() {
    let plan = plan(Engine::Postgres, &[facts("customer")], Strategy::Auto).unwrap();
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
    let plan = plan(Engine::Postgres, &[f], Strategy::Auto).unwrap();
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
    let sql: Vec<String> = plan(Engine::Postgres, &[f], Strategy::Auto)
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
    let plan = plan(Engine::Postgres, &[child, parent], Strategy::Auto).unwrap();
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
    let refused = plan(
        Engine::Postgres,
        &[view, missing, keyless, drifted],
        Strategy::Auto,
    )
    .unwrap_err();
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
    let plan = plan(Engine::DuckDb, &[f], Strategy::Auto).unwrap();
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

fn swappable(name: &str) -> Facts {
    let mut f = facts(name);
    f.sequences = vec![("id".into(), Name::new("prod", "film_id_seq"))];
    f.swap = Swap::Yes(Box::new(Carried {
        old_name: "film__sqb_old".into(),
        owner: "owner".into(),
        staged_owner: "builder".into(),
        not_null: vec!["id".into()],
        staged_not_null: vec!["name".into()],
        defaults: vec![("id".into(), "nextval('prod.film_id_seq'::regclass)".into())],
        constraints: vec![("film_pkey".into(), "PRIMARY KEY (id)".into())],
        indexes: vec!["CREATE INDEX film_name ON prod.film USING btree (name)".into()],
        clustered: Some("film_name".into()),
        triggers: vec![(
            "touch".into(),
            "CREATE TRIGGER touch BEFORE UPDATE ON prod.film FOR EACH ROW EXECUTE FUNCTION prod.touch()".into(),
            'D',
        )],
        grants: vec![
            Grant {
                privilege: "SELECT".into(),
                column: None,
                grantee: "owner".into(),
                grantable: false,
            },
            Grant {
                privilege: "UPDATE".into(),
                column: Some("name".into()),
                grantee: "PUBLIC".into(),
                grantable: true,
            },
        ],
        staged_grantees: vec!["PUBLIC".into(), "owner".into()],
        comments: vec![Comment {
            on: Commented::Table,
            text: "it's a \\ film".into(),
        }],
        staged_comments: vec![Commented::Column("name".into())],
        views: vec![View {
            name: Name::new("prod", "film_list"),
            definition: " SELECT film.id\n   FROM prod.film;".into(),
            options: vec!["check_option=local".into()],
        }],
    }));
    f
}

#[test]
fn a_table_only_views_read_is_swapped_and_its_identity_made_again() {
    let plan = plan(Engine::Postgres, &[swappable("film")], Strategy::Auto).unwrap();
    let locks: Vec<&str> = plan.locks.iter().map(|s| s.sql.as_str()).collect();
    assert_eq!(
        locks,
        [
            r#"LOCK TABLE "prod"."film_list" IN ACCESS EXCLUSIVE MODE"#,
            r#"LOCK TABLE "prod"."film" IN ACCESS EXCLUSIVE MODE"#,
            r#"LOCK TABLE "staging"."film" IN ACCESS EXCLUSIVE MODE"#,
        ]
    );
    let sql: Vec<&str> = plan.writes.iter().map(|s| s.sql.as_str()).collect();
    assert_eq!(
        sql,
        [
            r#"ALTER TABLE "prod"."film" RENAME TO "film__sqb_old""#,
            r#"ALTER TABLE "staging"."film" SET SCHEMA "prod""#,
            r#"ALTER TABLE "prod"."film" OWNER TO "owner""#,
            r#"ALTER SEQUENCE "prod"."film_id_seq" OWNED BY "prod"."film"."id""#,
            "CREATE OR REPLACE VIEW \"prod\".\"film_list\" WITH (\"check_option\" = E'local') AS SELECT film.id\n   FROM prod.film",
            r#"DROP TABLE "prod"."film__sqb_old" RESTRICT"#,
            r#"ALTER TABLE "prod"."film" ALTER COLUMN "name" DROP NOT NULL"#,
            r#"ALTER TABLE "prod"."film" ALTER COLUMN "id" SET NOT NULL"#,
            r#"ALTER TABLE "prod"."film" ALTER COLUMN "id" SET DEFAULT nextval('prod.film_id_seq'::regclass)"#,
            r#"ALTER TABLE "prod"."film" ADD CONSTRAINT "film_pkey" PRIMARY KEY (id)"#,
            "CREATE INDEX film_name ON prod.film USING btree (name)",
            r#"ALTER TABLE "prod"."film" CLUSTER ON "film_name""#,
            "CREATE TRIGGER touch BEFORE UPDATE ON prod.film FOR EACH ROW EXECUTE FUNCTION prod.touch()",
            r#"ALTER TABLE "prod"."film" DISABLE TRIGGER "touch""#,
            r#"REVOKE ALL ON TABLE "prod"."film" FROM PUBLIC, "owner""#,
            r#"GRANT SELECT ON TABLE "prod"."film" TO "owner""#,
            r#"GRANT UPDATE ("name") ON TABLE "prod"."film" TO PUBLIC WITH GRANT OPTION"#,
            r#"COMMENT ON COLUMN "prod"."film"."name" IS NULL"#,
            r#"COMMENT ON TABLE "prod"."film" IS E'it''s a \\ film'"#,
        ]
    );
    assert_eq!(plan.strategies[0].1, "swap (only views read it)");
    // The sequence is restarted past the staged keys, as for a copy.
    assert_eq!(plan.restarts.len(), 1);
}

#[test]
fn the_strategy_can_be_chosen() {
    let copied = plan(Engine::Postgres, &[swappable("film")], Strategy::Copy).unwrap();
    assert!(copied.writes[0].sql.starts_with("INSERT INTO"));
    assert_eq!(copied.strategies[0].1, "copy in place (--strategy copy)");
    let mut bound = facts("customer");
    bound.swap = Swap::No("foreign key x of prod.y references it".into());
    let refused = plan(Engine::Postgres, &[bound], Strategy::Swap).unwrap_err();
    assert_eq!(
        refused[0].why,
        "--strategy swap: it cannot be swapped: foreign key x of prod.y references it"
    );
}

fn not_owned(owner: &str) -> Rights {
    Rights {
        owner: owner.into(),
        owns: false,
        ..Rights::all()
    }
}

fn whys(facts: &[Facts]) -> Vec<String> {
    plan(Engine::Postgres, facts, Strategy::Auto)
        .map(|_| Vec::new())
        .unwrap_or_else(|refusals| {
            refusals
                .into_iter()
                .map(|r| format!("{}: {}", r.relation, r.why))
                .collect()
        })
}

#[test]
fn a_copy_the_session_has_no_rights_for_is_refused_before_anything_is_written() {
    let mut f = facts("customer");
    f.rights.delete = false;
    f.rights.update = false;
    f.staged_rights = Rights {
        update: false,
        delete: false,
        truncate: false,
        ..Rights::all()
    };
    f.triggers = vec![Trigger {
        name: "touch".into(),
        enabled: 'O',
    }];
    f.rights.owner = "owner".into();
    f.rights.owns = false;
    assert_eq!(
        whys(&[f]),
        [
            "prod.customer: this session lacks one of UPDATE, DELETE or TRUNCATE on the staged copy `staging.customer`, which the publish reads and holds locked while it is checked",
            "prod.customer: this session lacks UPDATE and DELETE on it, which a copy in place needs",
            "prod.customer: this session cannot act as its owner owner, as disabling its trigger `touch` while the rows are copied needs",
        ]
    );
}

#[test]
fn only_what_the_plan_does_needs_a_right() {
    // No key: every row is deleted and inserted again, nothing is read or updated.
    let mut keyless = facts("log");
    keyless.key.clear();
    keyless.rights.select = false;
    keyless.rights.update = false;
    keyless.rights.owns = false;
    // By key with only key columns: inserted, never updated.
    let mut keys_only = facts("tag");
    keys_only.columns.truncate(1);
    keys_only.staged_columns.truncate(1);
    keys_only.rights.update = false;
    assert_eq!(whys(&[keyless, keys_only]), Vec::<String>::new());
    let mut keyed = facts("film");
    keyed.rights.select = false;
    assert_eq!(
        whys(&[keyed]),
        ["prod.film: this session lacks SELECT on it, which a copy in place needs"]
    );
}

#[test]
fn a_swap_a_new_table_a_refresh_and_a_restart_ask_for_their_own_rights() {
    // A swap's needs are the swap catalog's: it is not refused for what a copy would need.
    let mut swapped = swappable("film");
    swapped.rights = Rights {
        delete: false,
        ..not_owned("owner")
    };
    assert!(whys(std::slice::from_ref(&swapped)).is_empty());
    let mut created = facts("fresh");
    created.kind = None;
    created.may_create = false;
    let mut viewed = facts("customer");
    viewed.dependents = vec![
        Dependent {
            name: Name::new("prod", "counts"),
            populated: true,
            depth: 1,
            rights: not_owned("analyst"),
        },
        Dependent {
            name: Name::new("prod", "empty"),
            populated: false,
            depth: 1,
            rights: not_owned("analyst"),
        },
    ];
    assert_eq!(
        whys(&[created, viewed.clone(), viewed]),
        [
            "prod.fresh: this session may not create in schema `prod`, where the publish creates it",
            "prod.counts: this session cannot act as its owner analyst, as refreshing it after the publish needs",
        ]
    );
    let mut sequenced = facts("film");
    sequenced.sequences = vec![("id".into(), Name::new("prod", "film_id_seq"))];
    sequenced.rights = not_owned("owner");
    let plan = plan(Engine::Postgres, &[sequenced], Strategy::Copy).unwrap();
    let refusal = plan.restarts[0].refusal().unwrap();
    assert_eq!(
        refusal.why,
        "this session cannot act as its owner owner, as restarting its sequence `prod.film_id_seq` past the published keys needs"
    );
}
