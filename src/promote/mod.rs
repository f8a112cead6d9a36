//! `sqb promote`'s publish plan, pure: from what the catalog says about each destination table
//! and its staged copy, the read-only checks that must count no row, then the statements that
//! publish it, chosen per relation (docs/promote.md):
//! - a **copy in place**: the staged rows go into the destination, which keeps its identity,
//!   so every view, typed function, foreign key, trigger, index, constraint, default, grant,
//!   comment and owner bound to it stays bound to it;
//! - a **swap** ([`swap`]) where only views read the destination: the staged copy is renamed
//!   into its place, and the destination's identity is made again on it.
//!
//! No I/O: the warehouse room reads the [`Facts`] and runs the [`Plan`] in one transaction.

use std::collections::BTreeMap;

use crate::engine::Engine;
use crate::engine_rules::{self, EngineRules, SequenceCatchUp};
use crate::ident::quoted;
pub use crate::table_facts::{
    Carried, Column, Comment, Commented, Dependent, Facts, Grant, Name, Parent, Reference, Rights,
    Step, Swap, Trigger, View,
};

mod rights;
mod swap;

/// How the destinations are published.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strategy {
    /// A swap where the catalog allows one, a copy in place elsewhere.
    #[default]
    Auto,
    /// A copy in place, always.
    Copy,
    /// A swap, always: a relation that cannot be swapped is refused.
    Swap,
}

/// A read-only count that must be 0 for the publish to go on, and what it means when it is not.
#[derive(Debug, Clone)]
pub struct Check {
    pub step: Step,
    /// "rows of `public.payment` reference" — completed with the count by the caller.
    pub what: String,
}

/// The publish of every selected relation, in order, for one transaction.
#[derive(Debug, Default)]
pub struct Plan {
    /// The locks the publish needs, taken first under the lock timeout.
    pub locks: Vec<Step>,
    pub checks: Vec<Check>,
    pub writes: Vec<Step>,
    /// Postgres's sequences that the published keys overtake: each probe returns the value to
    /// restart at (no row when none is needed), and [`restart`] makes the statement. `setval`
    /// is not transactional; `ALTER SEQUENCE ... RESTART` is, so a publish that does not commit
    /// leaves the sequence as it was.
    pub restarts: Vec<Restart>,
    /// What the publish leaves as it is, said in the report (a materialized view never
    /// populated).
    pub notes: Vec<String>,
    /// How each destination is published, and why: `prod.film: swap`.
    pub strategies: Vec<(Name, String)>,
}

/// A sequence to restart once the published keys are known.
#[derive(Debug, Clone)]
pub struct Restart {
    pub probe: Step,
    pub sequence: Name,
    /// The sequence's owner (its table's) when this session cannot act as it: a restart the
    /// probe asks for is then refused.
    pub not_owned: Option<String>,
}

impl Restart {
    /// Why the restart the probe asked for cannot be made by this session, if it cannot.
    pub fn refusal(&self) -> Option<Refusal> {
        let owner = self.not_owned.as_ref()?;
        Some(Refusal {
            relation: self.probe.relation.shown(),
            why: format!(
                "this session cannot act as its owner {owner}, as restarting its sequence `{}` past the published keys needs",
                self.sequence.shown()
            ),
        })
    }
}

/// `ALTER SEQUENCE ... RESTART WITH value`, about `relation`.
pub fn restart(r: &Restart, value: i64) -> Step {
    Step {
        sql: format!("ALTER SEQUENCE {} RESTART WITH {value}", r.sequence.sql()),
        params: Vec::new(),
        relation: r.probe.relation.clone(),
    }
}

/// A relation that cannot be published, and why; nothing is written when there is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub relation: String,
    pub why: String,
}

/// The locks that keep the staged copies as they were checked: taken before the checks run.
pub fn staged_locks(engine: Engine, staged: &[Name]) -> Vec<Step> {
    let rules = engine_rules::of(engine);
    sorted(staged)
        .into_iter()
        .filter_map(|n| Some(step(rules.publish_lock(&n.sql(), false)?, &n)))
        .collect()
}

/// What a swap of `f` carries, when `strategy` and the catalog make it one.
fn swapped(f: &Facts, strategy: Strategy) -> Option<&Carried> {
    match (&f.swap, strategy, &f.kind) {
        (Swap::Yes(carried), Strategy::Auto | Strategy::Swap, Some(_)) => Some(carried),
        _ => None,
    }
}

/// The plan for `facts`, or every reason it cannot be made.
pub fn plan(engine: Engine, facts: &[Facts], strategy: Strategy) -> Result<Plan, Vec<Refusal>> {
    let mut refusals: Vec<Refusal> = facts.iter().flat_map(|f| refusals(f, strategy)).collect();
    if refusals.is_empty() {
        refusals = facts
            .iter()
            .flat_map(|f| rights::refusals(f, swapped(f, strategy).is_some()))
            .chain(rights::refreshes(facts))
            .collect();
    }
    if !refusals.is_empty() {
        return Err(refusals);
    }
    let selected: BTreeMap<&Name, &Facts> = facts.iter().map(|f| (&f.dest, f)).collect();
    let order = parents_first(facts);
    let rules = engine_rules::of(engine);
    let mut plan = Plan {
        locks: locks(rules, facts, strategy),
        ..Plan::default()
    };
    for f in &order {
        plan.checks.extend(checks(f, &selected));
        plan.strategies.push((f.dest.clone(), chosen(f, strategy)));
    }
    let copied: Vec<&Facts> = order
        .iter()
        .copied()
        .filter(|f| swapped(f, strategy).is_none())
        .collect();
    for f in copied.iter().filter(|f| f.kind.is_none()) {
        plan.writes.extend(create(f));
    }
    for f in &copied {
        plan.writes.extend(triggers(f, false));
    }
    for f in &copied {
        plan.writes.extend(copy(rules, f));
    }
    // After the inserts of the tables they may reference, before the deletes.
    for f in &order {
        if let Some(carried) = swapped(f, strategy) {
            plan.writes.extend(swap::writes(f, carried));
        }
    }
    for f in copied.iter().rev() {
        if let Some(delete) = delete(f) {
            plan.writes.push(delete);
        }
    }
    for f in &order {
        sequences(rules, f, &mut plan);
    }
    for f in &copied {
        plan.writes.extend(triggers(f, true));
    }
    refreshes(facts, &mut plan);
    Ok(plan)
}

/// The views that a swap makes again first, then every destination, then the staged copies
/// that a swap renames: each set in name order.
fn locks(rules: &dyn EngineRules, facts: &[Facts], strategy: Strategy) -> Vec<Step> {
    let mut views = Vec::new();
    let mut dests = Vec::new();
    let mut staged = Vec::new();
    for f in facts.iter().filter(|f| f.kind.is_some()) {
        match swapped(f, strategy) {
            Some(carried) => {
                views.extend(swap::view_locks(carried));
                dests.push((f.dest.clone(), true));
                staged.push(f.staged.clone());
            }
            None => dests.push((f.dest.clone(), false)),
        }
    }
    dests.sort();
    dests.dedup();
    let mut out: Vec<Step> = sorted(&views).iter().map(swap::access_exclusive).collect();
    for (dest, swap) in dests {
        match swap {
            true => out.push(swap::access_exclusive(&dest)),
            false => out.extend(
                rules
                    .publish_lock(&dest.sql(), true)
                    .map(|l| step(l, &dest)),
            ),
        }
    }
    out.extend(sorted(&staged).iter().map(swap::access_exclusive));
    out
}

/// How `f` is published, as the report says it.
fn chosen(f: &Facts, strategy: Strategy) -> String {
    match (&f.kind, swapped(f, strategy), &f.swap) {
        (None, _, _) => "created, then copied".to_string(),
        (Some(_), Some(_), _) => "swap (only views read it)".to_string(),
        (Some(_), None, _) if strategy == Strategy::Copy => {
            "copy in place (--strategy copy)".to_string()
        }
        (Some(_), None, Swap::No(why)) => format!("copy in place ({why})"),
        (Some(_), None, Swap::Yes(_)) => "copy in place".to_string(),
    }
}

fn step(sql: String, relation: &Name) -> Step {
    Step {
        sql,
        params: Vec::new(),
        relation: relation.clone(),
    }
}

fn sorted(names: &[Name]) -> Vec<Name> {
    let mut names = names.to_vec();
    names.sort();
    names.dedup();
    names
}

/// Why `f` cannot be published, before anything is written.
fn refusals(f: &Facts, strategy: Strategy) -> Vec<Refusal> {
    let refuse = |why: String| Refusal {
        relation: f.dest.shown(),
        why,
    };
    if f.staged_kind.is_none() {
        return vec![refuse(format!(
            "the staged relation `{}` does not exist",
            f.staged.shown()
        ))];
    }
    match f.kind.as_deref() {
        None | Some("table" | "partitioned table") => {}
        Some(kind) => {
            return vec![refuse(format!(
                "it is a {kind}, which has no rows of its own to publish: deploy its definition instead"
            ))]
        }
    }
    if f.kind.is_none() {
        return Vec::new();
    }
    if let (Strategy::Swap, Swap::No(why)) = (strategy, &f.swap) {
        return vec![refuse(format!(
            "--strategy swap: it cannot be swapped: {why}"
        ))];
    }
    let mut out = Vec::new();
    let staged: Vec<&str> = f.staged_columns.iter().map(|c| c.name.as_str()).collect();
    let dest: Vec<&str> = f.columns.iter().map(|c| c.name.as_str()).collect();
    for c in f.columns.iter().filter(|c| !c.generated) {
        if !staged.contains(&c.name.as_str()) {
            out.push(refuse(format!(
                "the staged copy has no column `{}`, which the destination has",
                c.name
            )));
        }
    }
    for c in &f.staged_columns {
        if !dest.contains(&c.name.as_str()) {
            out.push(refuse(format!(
                "the destination has no column `{}`, which the staged copy has: `sqb contract migrate` writes the DDL that adds it",
                c.name
            )));
        }
    }
    if f.key.is_empty() && !f.references.is_empty() {
        out.push(refuse(format!(
            "foreign keys reference it ({}) but it has no primary key to publish by: its rows would have to be deleted and inserted again",
            f.references
                .iter()
                .map(|r| format!("`{}` of `{}`", r.constraint, r.from.shown()))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    out
}

/// Relations that others among `facts` reference come first; the rest keep their order.
fn parents_first(facts: &[Facts]) -> Vec<&Facts> {
    let mut left: Vec<&Facts> = facts.iter().collect();
    let mut out = Vec::with_capacity(facts.len());
    while !left.is_empty() {
        // A relation is ready when no relation still left is referenced by it.
        let ready = left
            .iter()
            .position(|f| {
                !left
                    .iter()
                    .any(|p| p.dest != f.dest && p.references.iter().any(|r| r.from == f.dest))
            })
            .unwrap_or(0);
        out.push(left.remove(ready));
    }
    out
}

/// The copy's columns: the destination's, without the generated ones.
fn copied(f: &Facts) -> Vec<&Column> {
    match f.kind {
        Some(_) => f.columns.iter().filter(|c| !c.generated).collect(),
        None => f.staged_columns.iter().filter(|c| !c.generated).collect(),
    }
}

fn list<'a>(names: impl IntoIterator<Item = &'a str>, prefix: &str) -> String {
    names
        .into_iter()
        .map(|n| format!("{prefix}{}", quoted(n)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The counts that must be 0: duplicate or missing keys and NULLs under NOT NULL in the staged
/// copy, and rows of every referencing table whose key the published rows would not have.
fn checks(f: &Facts, selected: &BTreeMap<&Name, &Facts>) -> Vec<Check> {
    let mut out = Vec::new();
    if f.kind.is_none() {
        return out;
    }
    let staged = f.staged.sql();
    if !f.key.is_empty() {
        out.push(Check {
            step: step(
                format!(
                    "SELECT count(*) FROM (SELECT 1 FROM {staged} GROUP BY {} HAVING count(*) > 1) AS duplicated",
                    list(f.key.iter().map(String::as_str), "")
                ),
                &f.dest,
            ),
            what: format!(
                "keys ({}) of the staged copy appear more than once",
                f.key.join(", ")
            ),
        });
    }
    let not_null: Vec<&str> = f
        .columns
        .iter()
        .filter(|c| c.not_null && !c.generated)
        .map(|c| c.name.as_str())
        .collect();
    if !not_null.is_empty() {
        out.push(Check {
            step: step(
                format!(
                    "SELECT count(*) FROM {staged} WHERE {}",
                    not_null
                        .iter()
                        .map(|c| format!("{} IS NULL", quoted(c)))
                        .collect::<Vec<_>>()
                        .join(" OR ")
                ),
                &f.dest,
            ),
            what: format!(
                "rows of the staged copy are NULL where the destination is NOT NULL ({})",
                not_null.join(", ")
            ),
        });
    }
    for p in &f.parents {
        // A referenced table published in the same run (or the table itself) is checked as it
        // will be: staged.
        let (to, whose) = match selected.get(&p.to) {
            Some(other) => (
                other.staged.sql(),
                format!("the staged copy of `{}`", p.to.shown()),
            ),
            None => (p.to.sql(), format!("`{}`", p.to.shown())),
        };
        out.push(Check {
            step: step(orphans(&staged, &to, &p.columns, &p.to_columns), &f.dest),
            what: format!(
                "rows of the staged copy reference keys {whose} does not have (foreign key `{}`)",
                p.constraint
            ),
        });
    }
    for r in &f.references {
        // A referencing table published in the same run is checked as it will be: staged.
        let from = match selected.get(&r.from) {
            Some(other) => other.staged.sql(),
            None => r.from.sql(),
        };
        out.push(Check {
            step: step(orphans(&from, &staged, &r.columns, &r.to_columns), &f.dest),
            what: format!(
                "rows of `{}` reference keys the staged copy does not have (foreign key `{}`)",
                r.from.shown(),
                r.constraint
            ),
        });
    }
    out
}

/// The count of rows of `child` whose key (`columns`, every one set) `parent` does not have
/// in `to_columns`: a foreign key's orphans.
fn orphans(child: &str, parent: &str, columns: &[String], to_columns: &[String]) -> String {
    let present = columns
        .iter()
        .map(|c| format!("r.{} IS NOT NULL", quoted(c)))
        .collect::<Vec<_>>()
        .join(" AND ");
    let matched = columns
        .iter()
        .zip(to_columns)
        .map(|(c, t)| format!("s.{} = r.{}", quoted(t), quoted(c)))
        .collect::<Vec<_>>()
        .join(" AND ");
    format!(
        "SELECT count(*) FROM {child} AS r WHERE {present} AND NOT EXISTS (SELECT 1 FROM {parent} AS s WHERE {matched})"
    )
}

/// A destination that does not exist yet: created empty from the staged copy's columns, NOT
/// NULL where its contract says `nullable = false`.
fn create(f: &Facts) -> Vec<Step> {
    let columns = list(copied(f).iter().map(|c| c.name.as_str()), "");
    let mut out = vec![step(
        format!(
            "CREATE TABLE {} AS SELECT {columns} FROM {} LIMIT 0",
            f.dest.sql(),
            f.staged.sql()
        ),
        &f.dest,
    )];
    for c in &f.not_null {
        out.push(step(
            format!(
                "ALTER TABLE {} ALTER COLUMN {} SET NOT NULL",
                f.dest.sql(),
                quoted(c)
            ),
            &f.dest,
        ));
    }
    out
}

/// Disables (or enables again, as each was) the destination's user triggers around the copy:
/// a BEFORE trigger must not rewrite the rows being published.
fn triggers(f: &Facts, enable: bool) -> Vec<Step> {
    f.triggers
        .iter()
        .map(|t| {
            let action = match (enable, t.enabled) {
                (false, _) => "DISABLE",
                (true, 'A') => "ENABLE ALWAYS",
                (true, 'R') => "ENABLE REPLICA",
                (true, _) => "ENABLE",
            };
            step(
                format!(
                    "ALTER TABLE {} {action} TRIGGER {}",
                    f.dest.sql(),
                    quoted(&t.name)
                ),
                &f.dest,
            )
        })
        .collect()
}

/// Every staged row into the destination: by primary key, rows that changed are updated and
/// new ones inserted; without one, all rows are replaced.
fn copy(rules: &dyn EngineRules, f: &Facts) -> Vec<Step> {
    let columns = copied(f);
    let names = list(columns.iter().map(|c| c.name.as_str()), "");
    let overriding = match columns.iter().any(|c| c.identity_always) {
        true => " OVERRIDING SYSTEM VALUE",
        false => "",
    };
    let insert = format!(
        "INSERT INTO {} ({names}){overriding} SELECT {names} FROM {}",
        f.dest.sql(),
        f.staged.sql()
    );
    if f.key.is_empty() || f.kind.is_none() {
        let mut out = Vec::new();
        if f.kind.is_some() {
            out.push(step(format!("DELETE FROM {}", f.dest.sql()), &f.dest));
        }
        out.push(step(insert, &f.dest));
        return out;
    }
    let key = list(f.key.iter().map(String::as_str), "");
    let set: Vec<&str> = columns
        .iter()
        .filter(|c| !f.key.contains(&c.name) && !c.identity_always)
        .map(|c| c.name.as_str())
        .collect();
    let sql = match set.is_empty() {
        true => format!("{insert} ON CONFLICT ({key}) DO NOTHING"),
        false => format!(
            "{insert} ON CONFLICT ({key}) DO UPDATE SET {}",
            rules.upsert_set(&f.dest.sql(), &set)
        ),
    };
    vec![step(sql, &f.dest)]
}

/// The rows whose key the staged copy no longer has. The checks have made sure no row of
/// another table references them, so no `ON DELETE` action fires.
fn delete(f: &Facts) -> Option<Step> {
    if f.key.is_empty() || f.kind.is_none() {
        return None;
    }
    let matched = f
        .key
        .iter()
        .map(|k| format!("s.{} = d.{}", quoted(k), quoted(k)))
        .collect::<Vec<_>>()
        .join(" AND ");
    Some(step(
        format!(
            "DELETE FROM {} AS d WHERE NOT EXISTS (SELECT 1 FROM {} AS s WHERE {matched})",
            f.dest.sql(),
            f.staged.sql()
        ),
        &f.dest,
    ))
}

/// Sequences moved past the largest published value, so that the next insert does not collide:
/// restarted (probed from the staged copy, which is what the destination will hold), or where
/// the engine cannot set one, drawn as many times as it lags behind.
fn sequences(rules: &dyn EngineRules, f: &Facts, plan: &mut Plan) {
    for (column, sequence) in &f.sequences {
        match rules.sequence_catch_up(column, &f.staged, &f.dest, sequence) {
            SequenceCatchUp::Restart(probe) => plan.restarts.push(Restart {
                probe: Step {
                    sql: probe.sql,
                    params: probe.params,
                    relation: f.dest.clone(),
                },
                sequence: sequence.clone(),
                // A sequence that a column owns has its table's owner.
                not_owned: (!f.rights.owns).then(|| f.rights.owner.clone()),
            }),
            SequenceCatchUp::Draw(draw) => plan.writes.push(Step {
                sql: draw.sql,
                params: draw.params,
                relation: f.dest.clone(),
            }),
        }
    }
}

/// Every populated materialized view over a published relation refreshed once, the ones
/// nearer the tables first; a never-populated one is left so, and said.
fn refreshes(facts: &[Facts], plan: &mut Plan) {
    let mut all: Vec<&Dependent> = facts.iter().flat_map(|f| &f.dependents).collect();
    all.sort_by(|a, b| a.depth.cmp(&b.depth).then_with(|| a.name.cmp(&b.name)));
    let mut seen = std::collections::HashSet::new();
    for d in all {
        if !seen.insert(&d.name) {
            continue;
        }
        match d.populated {
            true => plan.writes.push(step(
                format!("REFRESH MATERIALIZED VIEW {}", d.name.sql()),
                &d.name,
            )),
            false => plan.notes.push(format!(
                "materialized view `{}` was never populated (WITH NO DATA): left so",
                d.name.shown()
            )),
        }
    }
}

#[cfg(test)]
mod tests;
