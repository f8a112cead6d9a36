//! `sqb contract migrate`: the other direction of `generate`. The target is read as `contract
//! diff` reads it, every finding a DDL statement resolves becomes one, the statements whose
//! safety depends on the data are checked against it read-only first, and the migration is
//! returned as SQL in one transaction for review. sqb never runs it.

use std::path::Path;

use super::inspect::{inspect, InspectOptions, ReadTarget, Texts};
use crate::contract::diff::{diff as diff_resource, Declared};
use crate::contract::matching::namespace_of;
use crate::contract::migrate::{self, Plan, Refusal, Relation, Step};
use crate::engine::Engine;
use crate::ident::quoted;
use crate::project::{Project, Resource};
use crate::rows::{Cell, Statement};
use crate::warehouse::session;

pub struct MigrateOptions {
    pub inspect: InspectOptions,
    /// Drop the columns the warehouse has and no declaration names.
    pub allow_drop: bool,
    pub workers: usize,
}

/// The migration: its statements in order, what it refused, and where it reads.
pub struct Migration {
    pub target: String,
    pub engine: Engine,
    pub steps: Vec<Step>,
    pub refused: Vec<Refusal>,
    /// How many relations were compared.
    pub relations: usize,
    /// Where each step's and refusal's declaration is, as `file:line`.
    pub places: Vec<Option<String>>,
    pub refused_places: Vec<Option<String>>,
}

pub fn migrate(root: &Path, options: &MigrateOptions) -> anyhow::Result<Migration> {
    let (project, (plan, relations)) = inspect(root, &options.inspect, Texts::Keep, |read| {
        Ok(plan(read, options.allow_drop))
    })?;
    let Plan { steps, mut refused } = plan;
    let steps = checked(&project, steps, &mut refused, options)?;
    let place = |loc: &Option<crate::source::Loc>| {
        loc.as_ref().map(|l| {
            let file = project.sources.get(l.file);
            format!("{}:{}", file.rel_path, file.line_col(l.span().start).0)
        })
    };
    Ok(Migration {
        target: options.inspect.from.clone(),
        engine: project.engine(),
        places: steps.iter().map(|s| place(&s.loc)).collect(),
        refused_places: refused.iter().map(|r| place(&r.loc)).collect(),
        steps,
        refused,
        relations,
    })
}

/// Every selected relation's steps and refusals, from its findings.
fn plan(read: ReadTarget<'_>, allow_drop: bool) -> (Plan, usize) {
    let ReadTarget {
        project,
        target,
        inspection,
        ..
    } = read;
    let engine = project.engine();
    let mut plan = Plan::default();
    for item in &inspection.items {
        if matches!(item.resource, Resource::Model(m) if m.unreadable) {
            continue;
        }
        let findings = diff_resource(
            &Declared::of(project, &item.resource),
            item.physical.as_ref(),
            &item.relation,
            item.case_only.as_deref(),
        );
        let namespace = namespace_of(&item.resource, target);
        let name = item.physical.as_ref().map_or_else(
            || item.resource.relation_name().to_string(),
            |p| p.name.clone(),
        );
        let elsewhere = namespace
            .database
            .as_ref()
            .filter(|db| **db != inspection.database);
        let relation = Relation {
            quoted: match elsewhere {
                Some(db) => format!(
                    "{}.{}.{}",
                    quoted(db),
                    quoted(&namespace.schema),
                    quoted(&name)
                ),
                None => format!("{}.{}", quoted(&namespace.schema), quoted(&name)),
            },
            shown: format!("{}.{name}", namespace.schema),
            schema: namespace.schema.clone(),
            name: name.clone(),
            kind: item.physical.as_ref().map(|p| p.kind),
            findings: &findings,
        };
        if elsewhere.is_some() && !engine.queries_name_the_database() {
            for f in &findings {
                plan.refused.push(Refusal {
                    relation: relation.shown.clone(),
                    column: f.column.clone(),
                    kind: f.kind,
                    why: "the relation is in another database than the connection's".into(),
                    loc: f.loc.clone(),
                });
            }
            continue;
        }
        migrate::plan(engine, &relation, allow_drop, &mut plan);
    }
    (plan, inspection.items.len())
}

/// The steps whose data check finds no failing row and whose column no view reads; the others
/// refused with the count or the views.
fn checked(
    project: &Project,
    steps: Vec<Step>,
    refused: &mut Vec<Refusal>,
    options: &MigrateOptions,
) -> anyhow::Result<Vec<Step>> {
    let statements: Vec<Statement> = steps
        .iter()
        .flat_map(|s| {
            let check = s.check.clone().map(|sql| Statement {
                sql,
                params: Vec::new(),
            });
            check.into_iter().chain(s.readers.clone())
        })
        .collect();
    if statements.is_empty() {
        return Ok(steps);
    }
    let connect = super::connection(&project.config, &project.root, options.inspect.timeouts)?;
    let mut answers = session::run(connect, None, statements, options.workers)?
        .answers
        .into_iter();
    let mut next = |step: &Step| {
        answers
            .next()
            .expect("one answer a statement")
            .map_err(|e| {
                anyhow::anyhow!("could not check `{}` against the warehouse: {e}", step.sql)
            })
    };
    let mut kept = Vec::with_capacity(steps.len());
    for step in steps {
        let failing = match step.check {
            Some(_) => Some(first_int(&next(&step)?)),
            None => None,
        };
        let readers: Vec<String> = match step.readers {
            Some(_) => next(&step)?
                .rows
                .iter()
                .filter_map(|r| match r.first() {
                    Some(Cell::Text(t)) => Some(t.clone()),
                    _ => None,
                })
                .collect(),
            None => Vec::new(),
        };
        let why = match failing {
            Some(0) | None if readers.is_empty() => {
                kept.push(step);
                continue;
            }
            Some(n) if n != 0 => match n {
                1 => "1 row would not hold".to_string(),
                n if n < 0 => "the rows that would not hold could not be counted".into(),
                n => format!("{n} rows would not hold"),
            },
            _ => format!(
                "{} the column, which the change would break or retype under {}: change them together by hand",
                match readers.len() {
                    1 => format!("the view `{}` reads", readers[0]),
                    _ => format!(
                        "the views {} read",
                        readers
                            .iter()
                            .map(|r| format!("`{r}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                },
                if readers.len() == 1 { "it" } else { "them" }
            ),
        };
        refused.push(Refusal {
            why: format!("{why} ({}): {}", step.why, step.sql),
            relation: step.relation,
            column: Some(step.column),
            kind: step.kind,
            loc: step.loc,
        });
    }
    Ok(kept)
}

/// The first cell of the first row as a number; -1 when it is none.
fn first_int(rows: &crate::rows::Rows) -> i128 {
    match rows.rows.first().and_then(|r| r.first()) {
        Some(Cell::Int(n)) => *n,
        Some(Cell::Text(t) | Cell::Decimal(t)) => t.parse().unwrap_or(-1),
        _ => -1,
    }
}

impl Migration {
    /// The migration as SQL: one transaction, a comment on each statement naming the
    /// declaration it comes from, and what was refused as comments at the end.
    pub fn sql(&self) -> String {
        let mut out = format!(
            "-- sqb contract migrate --from {}: {} for {} ({})\n-- Review it, then run it yourself: sqb never does.\n",
            one_line(&self.target),
            crate::report::count(self.steps.len(), "statement", "statements"),
            crate::report::count(self.relations, "relation", "relations"),
            self.engine.as_str(),
        );
        if !self.steps.is_empty() {
            out.push_str("BEGIN;\n");
            for (step, place) in self.steps.iter().zip(&self.places) {
                let comment = format!(
                    "{}: {}.{}: {}",
                    place.as_deref().unwrap_or("(no declaration)"),
                    step.relation,
                    step.column,
                    step.why
                );
                out.push_str(&format!("\n-- {}\n{};\n", one_line(&comment), step.sql));
            }
            out.push_str("\nCOMMIT;\n");
        }
        for (r, place) in self.refused.iter().zip(&self.refused_places) {
            let place = place
                .as_deref()
                .map(|p| format!("{p}: "))
                .unwrap_or_default();
            let column = r
                .column
                .as_deref()
                .map(|c| format!(".{c}"))
                .unwrap_or_default();
            let comment = format!("not migrated: {place}{}{column}: {}", r.relation, r.why);
            out.push_str(&format!("\n-- {}", one_line(&comment)));
        }
        if !self.refused.is_empty() {
            out.push('\n');
        }
        out
    }
}

/// Keeps a comment on one line whatever the text holds: a name with a line break in it must
/// not end the comment and start a statement of its own.
fn one_line(text: &str) -> String {
    text.chars()
        .map(
            |c| match c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') {
                true => ' ',
                false => c,
            },
        )
        .collect()
}
