//! What a publish asks of the session's rights, checked against the catalog's [`Rights`] when
//! the plan is made, before anything is written: so `--dry-run` refuses what the publish itself
//! could not do, instead of planning it. Postgres checks table privileges on reads and writes,
//! and the owner's rights on `ALTER TABLE … TRIGGER`, `REFRESH MATERIALIZED VIEW` and `ALTER
//! SEQUENCE`; a lock stronger than `ROW EXCLUSIVE` takes `UPDATE`, `DELETE` or `TRUNCATE`. What
//! a swap needs is the swap catalog's to say ([`super::Swap::No`]).

use std::collections::HashSet;

use super::{copied, Facts, Refusal};

/// What publishing `f` needs of the session's rights on it and its staged copy, and lacks.
pub(super) fn refusals(f: &Facts, swapped: bool) -> Vec<Refusal> {
    let refuse = |why: String| Refusal {
        relation: f.dest.shown(),
        why,
    };
    let mut out = Vec::new();
    let staged = &f.staged_rights;
    let mut lacking = Vec::new();
    if !staged.select {
        lacking.push("SELECT");
    }
    // Held (SHARE) from before the checks until the commit, so that what was checked is
    // what is published.
    if !(staged.update || staged.delete || staged.truncate) {
        lacking.push("one of UPDATE, DELETE or TRUNCATE");
    }
    if !lacking.is_empty() {
        out.push(refuse(format!(
            "this session lacks {} on the staged copy `{}`, which the publish reads and holds locked while it is checked",
            and(&lacking),
            f.staged.shown()
        )));
    }
    if f.kind.is_none() {
        if !f.may_create {
            out.push(refuse(format!(
                "this session may not create in schema `{}`, where the publish creates it",
                f.dest.schema
            )));
        }
        return out;
    }
    if swapped {
        return out;
    }
    let lacking = lacking_for_copy(f);
    if !lacking.is_empty() {
        out.push(refuse(format!(
            "this session lacks {} on it, which a copy in place needs",
            and(&lacking)
        )));
    }
    if let (false, Some(trigger)) = (f.rights.owns, f.triggers.first()) {
        out.push(refuse(format!(
            "this session cannot act as its owner {}, as disabling its trigger `{}` while the rows are copied needs",
            f.rights.owner, trigger.name
        )));
    }
    out
}

/// The privileges on the destination that a copy in place uses and the session lacks: it
/// inserts, deletes what vanished (by key, reading the key) and, by key, updates what changed.
fn lacking_for_copy(f: &Facts) -> Vec<&'static str> {
    let r = &f.rights;
    let by_key = !f.key.is_empty();
    let updates = by_key
        && copied(f)
            .iter()
            .any(|c| !f.key.contains(&c.name) && !c.identity_always);
    [
        ("SELECT", r.select || !by_key),
        ("INSERT", r.insert),
        ("UPDATE", r.update || !updates),
        ("DELETE", r.delete),
    ]
    .into_iter()
    .filter(|(_, held)| !held)
    .map(|(privilege, _)| privilege)
    .collect()
}

/// Each populated materialized view over the published relations that the session cannot
/// refresh, once.
pub(super) fn refreshes(facts: &[Facts]) -> Vec<Refusal> {
    let mut seen = HashSet::new();
    facts
        .iter()
        .flat_map(|f| &f.dependents)
        .filter(|d| d.populated && !d.rights.owns && seen.insert(&d.name))
        .map(|d| Refusal {
            relation: d.name.shown(),
            why: format!(
                "this session cannot act as its owner {}, as refreshing it after the publish needs",
                d.rights.owner
            ),
        })
        .collect()
}

/// `a`, `a and b`, `a, b and c`.
fn and(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}
