//! The swap: a destination table that only views read is replaced by its staged copy, renamed
//! into its place in the publish transaction. Whatever belongs to the table's identity and not
//! to its rows is made again on the copy from the catalog's own definitions: owner, NOT NULL,
//! defaults, sequence ownership, constraints, indexes, triggers (each enabled as it was),
//! grants (column grants too) and comments. Each view that reads the table is made again from
//! its own definition (`CREATE OR REPLACE VIEW`), which binds it to the new table and keeps
//! the view itself: its grants, owner, comments and the views over it stay as they were.
//!
//! The rows are not copied, which is the point for a large table: the destination is
//! unreadable only for the moment of the swap (it is held `ACCESS EXCLUSIVE`), and readers
//! queued on it then read the new table. What the catalog says cannot be carried this way
//! (a foreign key into it, a typed function, partitions, a materialized view reading it) is
//! [`Swap::No`], and the relation is copied in place instead.

use crate::ident::quoted;
use crate::table_facts::{Carried, Commented, Facts, Name, Step};

/// The locks a swap takes, in this order: the views that read the destination first (readers
/// lock a view before its table), then the destination, then the staged copy.
pub(super) fn view_locks(c: &Carried) -> Vec<Name> {
    let mut views: Vec<Name> = c.views.iter().map(|v| v.name.clone()).collect();
    views.sort();
    views
}

pub(super) fn access_exclusive(name: &Name) -> Step {
    step(
        format!("LOCK TABLE {} IN ACCESS EXCLUSIVE MODE", name.sql()),
        name,
    )
}

fn step(sql: String, relation: &Name) -> Step {
    Step {
        sql,
        params: Vec::new(),
        relation: relation.clone(),
    }
}

/// The statements of one swap, in order. The old table is dropped (`RESTRICT`: were anything
/// still bound to it, the drop fails and the transaction rolls back) before the copy gets its
/// constraints and indexes, whose names the old table's held.
pub(super) fn writes(f: &Facts, c: &Carried) -> Vec<Step> {
    let dest = f.dest.sql();
    let old = Name::new(&f.dest.schema, &c.old_name);
    let s = |sql: String| step(sql, &f.dest);
    let mut out = vec![
        s(format!(
            "ALTER TABLE {dest} RENAME TO {}",
            quoted(&c.old_name)
        )),
        s(format!(
            "ALTER TABLE {} SET SCHEMA {}",
            f.staged.sql(),
            quoted(&f.dest.schema)
        )),
    ];
    if c.owner != c.staged_owner {
        out.push(s(format!(
            "ALTER TABLE {dest} OWNER TO {}",
            quoted(&c.owner)
        )));
    }
    for (column, sequence) in &f.sequences {
        out.push(s(format!(
            "ALTER SEQUENCE {} OWNED BY {dest}.{}",
            sequence.sql(),
            quoted(column)
        )));
    }
    for v in &c.views {
        let options = match v.options.is_empty() {
            true => String::new(),
            false => format!(" WITH ({})", options(&v.options)),
        };
        out.push(step(
            format!(
                "CREATE OR REPLACE VIEW {}{options} AS {}",
                v.name.sql(),
                v.definition.trim().trim_end_matches(';')
            ),
            &v.name,
        ));
    }
    out.push(s(format!("DROP TABLE {} RESTRICT", old.sql())));
    for column in c.staged_not_null.iter().filter(|n| !c.not_null.contains(n)) {
        out.push(s(format!(
            "ALTER TABLE {dest} ALTER COLUMN {} DROP NOT NULL",
            quoted(column)
        )));
    }
    for column in c.not_null.iter().filter(|n| !c.staged_not_null.contains(n)) {
        out.push(s(format!(
            "ALTER TABLE {dest} ALTER COLUMN {} SET NOT NULL",
            quoted(column)
        )));
    }
    for (column, expr) in &c.defaults {
        out.push(s(format!(
            "ALTER TABLE {dest} ALTER COLUMN {} SET DEFAULT {expr}",
            quoted(column)
        )));
    }
    for (name, definition) in &c.constraints {
        out.push(s(format!(
            "ALTER TABLE {dest} ADD CONSTRAINT {} {definition}",
            quoted(name)
        )));
    }
    out.extend(c.indexes.iter().map(|i| s(i.clone())));
    if let Some(index) = &c.clustered {
        out.push(s(format!(
            "ALTER TABLE {dest} CLUSTER ON {}",
            quoted(index)
        )));
    }
    for (name, definition, enabled) in &c.triggers {
        out.push(s(definition.clone()));
        let state = match enabled {
            'D' => "DISABLE",
            'A' => "ENABLE ALWAYS",
            'R' => "ENABLE REPLICA",
            _ => continue,
        };
        out.push(s(format!(
            "ALTER TABLE {dest} {state} TRIGGER {}",
            quoted(name)
        )));
    }
    out.extend(grants(&dest, c).into_iter().map(s));
    out.extend(comments(f, c).into_iter().map(s));
    out
}

/// `check_option=local` → `"check_option" = 'local'`.
fn options(options: &[String]) -> String {
    options
        .iter()
        .map(|o| match o.split_once('=') {
            Some((k, v)) => format!("{} = {}", quoted(k), literal(v)),
            None => quoted(o),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A string literal that reads the same whatever `standard_conforming_strings` says.
fn literal(text: &str) -> String {
    format!("E'{}'", text.replace('\\', "\\\\").replace('\'', "''"))
}

fn grantee(role: &str) -> String {
    match role {
        "PUBLIC" => "PUBLIC".to_string(),
        _ => quoted(role),
    }
}

/// The staged copy's privileges revoked, then the destination's granted, the owner's own
/// included (the acl is then spelled out, which `pg_dump` reads as the default it equals).
fn grants(dest: &str, c: &Carried) -> Vec<String> {
    let mut out = Vec::new();
    if !c.staged_grantees.is_empty() {
        let from: Vec<String> = c.staged_grantees.iter().map(|g| grantee(g)).collect();
        out.push(format!(
            "REVOKE ALL ON TABLE {dest} FROM {}",
            from.join(", ")
        ));
    }
    for g in &c.grants {
        let privilege = match &g.column {
            Some(column) => format!("{} ({})", g.privilege, quoted(column)),
            None => g.privilege.clone(),
        };
        let option = match g.grantable {
            true => " WITH GRANT OPTION",
            false => "",
        };
        out.push(format!(
            "GRANT {privilege} ON TABLE {dest} TO {}{option}",
            grantee(&g.grantee)
        ));
    }
    out
}

fn comment_target(dest: &str, on: &Commented) -> String {
    match on {
        Commented::Table => format!("TABLE {dest}"),
        Commented::Column(c) => format!("COLUMN {dest}.{}", quoted(c)),
        Commented::Constraint(c) => format!("CONSTRAINT {} ON {dest}", quoted(c)),
        Commented::Index(i) => format!("INDEX {}", i.sql()),
        Commented::Trigger(t) => format!("TRIGGER {} ON {dest}", quoted(t)),
    }
}

/// The destination's comments set again, and the staged copy's own ones it lacks removed.
fn comments(f: &Facts, c: &Carried) -> Vec<String> {
    let dest = f.dest.sql();
    let mut out: Vec<String> = c
        .staged_comments
        .iter()
        .filter(|on| !c.comments.iter().any(|k| &k.on == *on))
        .map(|on| format!("COMMENT ON {} IS NULL", comment_target(&dest, on)))
        .collect();
    out.extend(c.comments.iter().map(|k| {
        format!(
            "COMMENT ON {} IS {}",
            comment_target(&dest, &k.on),
            literal(&k.text)
        )
    }));
    out
}
