//! The consumer's side of cross-team contracts: for each model that reads an imported model,
//! what the producer changed between the accepted baseline and the current snapshot in the
//! columns this model reads (its lineage and its uses, through CTEs, subqueries, aliases and
//! `USING`), each reported at the SQL that reads it (docs/imports.md). A change to a column no
//! model reads reports nothing. A model whose output cannot be inferred reads, for this check,
//! every column of the imports it names: the check fails closed.

use std::collections::BTreeSet;
use std::ops::ControlFlow;

use sqlparser::ast::{
    visit_expressions, Expr, Ident, SelectItem, Statement, TableFactor, Visit, Visitor,
};
use sqlparser::tokenizer::Span;

use super::sql::{same_column, OutColumn, Use};
use super::team_models::{Imported, Imports};
use crate::diagnostics::{Code, Diagnostic, Severity};
use crate::project::{Import, Model, Project};
use crate::source::Loc;
use crate::team_contracts::changes::{self, Change};
use crate::team_contracts::reads::{ReadSet, Reading};
use crate::team_contracts::snapshot::{PublishedColumn, PublishedModel};

/// Checks what `model` reads of its imports against what changed in them.
pub fn check(
    project: &Project,
    known: &Imports,
    model: &Model,
    statement: &Statement,
    (shape, uses): (Option<&[OutColumn]>, &[Use]),
    diags: &mut Vec<Diagnostic>,
) {
    let referenced = referenced(known, project.engine(), statement);
    if referenced.is_empty() {
        return;
    }
    if let Ok(mut used) = known.used.lock() {
        used.extend(referenced.iter().map(|n| n.imported.import.clone()));
    }
    let reads = reads(&referenced, shape, uses);
    if known.collect_reads {
        record(project, known, model, &referenced, &reads, (shape, uses));
    }
    let places = Places::of(statement);
    let starred = has_star(statement);
    let at = |span: Span| loc(project, model, span);
    for named in &referenced {
        let (imported, span) = (named.imported, &named.span);
        let Some(import) = project
            .imports
            .iter()
            .find(|i| i.decl.name == imported.import)
        else {
            continue;
        };
        let (Some(baseline), Some(snapshot)) = (&import.baseline, &import.snapshot) else {
            continue;
        };
        let before = baseline.model(&imported.model);
        let now = snapshot.model(&imported.model);
        let ctx = Context {
            imports: known,
            model,
            import,
            imported,
        };
        if before.is_some() && now.is_none() {
            diags.push(ctx.removed(at(*span)));
            continue;
        }
        // Most imported models do not change between two snapshots.
        let unchanged = before.zip(now).is_some_and(|(b, n)| b.columns == n.columns);
        let relies = NotNullReliance::of(project, model, shape, uses);
        for column in &imported.columns {
            if !reads.contains(&(imported.label.clone(), column.name.clone())) {
                continue;
            }
            let read_at = at(places
                .first(&column.name, &named.qualifiers, project)
                .unwrap_or(*span));
            let was = before.and_then(|m| find(m, &column.name));
            let is = now.and_then(|m| find(m, &column.name));
            if let Some(was) = was {
                let changes = match unchanged {
                    true => Vec::new(),
                    false => changes::column(was, is, project.engine()),
                };
                for change in changes {
                    let relied = relies.on(imported, &column.name);
                    if let Some(diag) = ctx.change(&column.name, &change, relied, read_at.clone()) {
                        diags.push(diag);
                    }
                }
            } else if starred && before.is_some() {
                diags.push(ctx.added(&column.name, at(*span)));
            }
            if let Some(reason) = is.and_then(|c| c.deprecated.clone()) {
                diags.push(ctx.deprecated(
                    &column.name,
                    &reason,
                    is.and_then(|c| c.deprecation_date.as_deref()),
                    read_at,
                ));
            }
        }
    }
}

/// Adds what `model` reads to the imports' read set.
fn record(
    project: &Project,
    known: &Imports,
    model: &Model,
    referenced: &[Named<'_>],
    reads: &BTreeSet<(String, String)>,
    (shape, uses): (Option<&[OutColumn]>, &[Use]),
) {
    let mut set = ReadSet::default();
    let relies = NotNullReliance::of(project, model, shape, uses);
    for named in referenced {
        let imported = named.imported;
        set.models
            .entry((imported.import.clone(), imported.model.clone()))
            .or_default()
            .insert(model.name.clone());
        for column in &imported.columns {
            if !reads.contains(&(imported.label.clone(), column.name.clone())) {
                continue;
            }
            let is_it = |r: &super::sql::ColumnRef| {
                r.resource_type == "import"
                    && r.resource == imported.label
                    && r.column == column.name
            };
            let reading = Reading {
                model: model.name.clone(),
                outputs: shape
                    .unwrap_or_default()
                    .iter()
                    .filter(|o| o.lineage.columns.iter().any(is_it))
                    .map(|o| o.name.clone())
                    .collect(),
                uses: uses
                    .iter()
                    .filter(|u| is_it(&u.column))
                    .map(|u| u.context.to_string())
                    .collect(),
                relies_not_null: relies.on(imported, &column.name),
            };
            set.columns
                .entry((
                    imported.import.clone(),
                    imported.model.clone(),
                    column.name.clone(),
                ))
                .or_default()
                .insert(model.name.clone(), reading);
        }
    }
    if let Ok(mut all) = known.reads.lock() {
        all.merge(set);
    }
}

fn find<'a>(model: &'a PublishedModel, column: &str) -> Option<&'a PublishedColumn> {
    model.columns.iter().find(|c| c.name == column)
}

fn loc(project: &Project, model: &Model, span: Span) -> Loc {
    if span.start.line == 0 {
        return Loc::file_start(model.sql_file);
    }
    let file = project.sources.get(model.sql_file);
    let start = file.offset_of(span.start.line as usize, span.start.column as usize);
    let end = match span.end.line {
        0 => start,
        _ => file.offset_of(span.end.line as usize, span.end.column as usize),
    };
    Loc::new(model.sql_file, start..end.max(start))
}

/// An imported model a statement names: where it first names it, and the names the statement
/// qualifies its columns with (its aliases, or its own name).
struct Named<'k> {
    imported: &'k Imported,
    span: Span,
    qualifiers: Vec<String>,
}

/// The imported models a statement names.
fn referenced<'k>(
    known: &'k Imports,
    engine: crate::engine::Engine,
    statement: &Statement,
) -> Vec<Named<'k>> {
    struct Tables<'k, 'a> {
        known: &'k Imports,
        engine: crate::engine::Engine,
        out: &'a mut Vec<Named<'k>>,
    }
    impl<'k> Visitor for Tables<'k, '_> {
        type Break = ();
        fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<()> {
            let TableFactor::Table { name, alias, .. } = factor else {
                return ControlFlow::Continue(());
            };
            let parts: Vec<Ident> = name
                .0
                .iter()
                .filter_map(|p| p.as_ident().cloned())
                .collect();
            let Some(imported) = self.known.find(&parts, self.engine) else {
                return ControlFlow::Continue(());
            };
            let qualifier = match alias {
                Some(a) => a.name.value.to_lowercase(),
                None => parts
                    .last()
                    .map_or(String::new(), |p| p.value.to_lowercase()),
            };
            match self
                .out
                .iter_mut()
                .find(|n| std::ptr::eq(n.imported, imported))
            {
                Some(named) => named.qualifiers.push(qualifier),
                None => {
                    let first = parts.first().map_or(Span::empty(), |p| p.span);
                    let last = parts.last().map_or(Span::empty(), |p| p.span);
                    self.out.push(Named {
                        imported,
                        span: first.union(&last),
                        qualifiers: vec![qualifier],
                    });
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut out = Vec::new();
    let _ = statement.visit(&mut Tables {
        known,
        engine,
        out: &mut out,
    });
    out
}

/// The `(import.model, column)` pairs a model reads: its output columns' lineage and its uses,
/// or, when its output cannot be inferred, every column of what it names.
fn reads(
    referenced: &[Named<'_>],
    shape: Option<&[OutColumn]>,
    uses: &[Use],
) -> BTreeSet<(String, String)> {
    let Some(shape) = shape else {
        return referenced
            .iter()
            .flat_map(|n| {
                n.imported
                    .columns
                    .iter()
                    .map(|c| (n.imported.label.clone(), c.name.clone()))
            })
            .collect();
    };
    let mut out = BTreeSet::new();
    let imported = |resource: &str| referenced.iter().any(|n| n.imported.label == resource);
    for column in shape {
        for r in &column.lineage.columns {
            if r.resource_type == "import" {
                out.insert((r.resource.clone(), r.column.clone()));
            }
        }
        // A column that may come from an import is read, for this check.
        for u in &column.lineage.unattributed {
            for c in u.candidates.iter().filter(|c| imported(c)) {
                out.insert((c.clone(), u.column.clone()));
            }
        }
    }
    for u in uses.iter().filter(|u| u.column.resource_type == "import") {
        out.insert((u.column.resource.clone(), u.column.column.clone()));
    }
    out
}

/// What a model relies on being NOT NULL: the columns it joins on, and the lineage of its own
/// `nullable = false` columns.
struct NotNullReliance<'a> {
    joined: Vec<&'a super::sql::ColumnRef>,
    feeds_not_null: Vec<&'a super::sql::ColumnRef>,
}

impl<'a> NotNullReliance<'a> {
    fn of(
        project: &Project,
        model: &Model,
        shape: Option<&'a [OutColumn]>,
        uses: &'a [Use],
    ) -> Self {
        let joined = uses
            .iter()
            .filter(|u| matches!(u.context, "join_on" | "join_using"))
            .map(|u| &u.column)
            .collect();
        let engine = project.engine();
        let not_null: Vec<String> = project
            .effective_columns(model)
            .iter()
            .filter(|c| !c.is_nullable())
            .map(|c| c.name.value.clone())
            .collect();
        let feeds_not_null = shape
            .unwrap_or_default()
            .iter()
            .filter(|o| not_null.iter().any(|n| same_column(&o.name, n, engine)))
            .flat_map(|o| o.lineage.columns.iter())
            .collect();
        NotNullReliance {
            joined,
            feeds_not_null,
        }
    }

    /// Whether the model relies on `imported.column` being NOT NULL.
    fn on(&self, imported: &Imported, column: &str) -> bool {
        let is_it = |r: &&super::sql::ColumnRef| {
            r.resource_type == "import" && r.resource == imported.label && r.column == column
        };
        self.joined.iter().any(is_it) || self.feeds_not_null.iter().any(is_it)
    }
}

/// Where each column name is mentioned in a statement, with its qualifier, in order.
struct Places(Vec<(Option<String>, String, Span)>);

impl Places {
    fn of(statement: &Statement) -> Self {
        let mut out = Vec::new();
        let _ = visit_expressions(statement, |expr| {
            match expr {
                Expr::Identifier(i) => out.push((None, i.value.clone(), i.span)),
                Expr::CompoundIdentifier(parts) if parts.len() >= 2 => {
                    let qualifier = parts[parts.len() - 2].value.to_lowercase();
                    let last = &parts[parts.len() - 1];
                    out.push((Some(qualifier), last.value.clone(), last.span))
                }
                _ => {}
            }
            ControlFlow::<()>::Continue(())
        });
        out.sort_by_key(|(_, _, s)| (s.start.line, s.start.column));
        Places(out)
    }

    /// The first mention of `column` qualified by one of `qualifiers`, else the first
    /// unqualified one, else any.
    fn first(&self, column: &str, qualifiers: &[String], project: &Project) -> Option<Span> {
        let named = |name: &str| {
            same_column(name, column, project.engine()) || name.eq_ignore_ascii_case(column)
        };
        let pick = |keep: &dyn Fn(&Option<String>) -> bool| {
            self.0
                .iter()
                .find(|(q, name, _)| named(name) && keep(q))
                .map(|(_, _, s)| *s)
        };
        pick(&|q| q.as_ref().is_some_and(|q| qualifiers.contains(q)))
            .or_else(|| pick(&|q| q.is_none()))
            .or_else(|| pick(&|_| true))
    }
}

fn has_star(statement: &Statement) -> bool {
    struct Stars(bool);
    impl Visitor for Stars {
        type Break = ();
        fn pre_visit_query(&mut self, query: &sqlparser::ast::Query) -> ControlFlow<()> {
            if let sqlparser::ast::SetExpr::Select(select) = query.body.as_ref() {
                self.0 |= select.projection.iter().any(|i| {
                    matches!(
                        i,
                        SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..)
                    )
                });
            }
            ControlFlow::Continue(())
        }
    }
    let mut stars = Stars(false);
    let _ = statement.visit(&mut stars);
    stars.0
}

struct Context<'a> {
    imports: &'a Imports,
    model: &'a Model,
    import: &'a Import,
    imported: &'a Imported,
}

impl Context<'_> {
    /// Adds the import's label, and applies the waiver of `subject` (`model.column`, or the
    /// model for E036) if one holds.
    fn finish(&self, diag: Diagnostic, subject: &str) -> Diagnostic {
        let diag = diag.related(
            self.import.decl.loc.clone(),
            format!("imported here, from {}", self.import.decl.path.value),
        );
        let today = today();
        let Some((i, waiver)) = self.import.decl.waivers.iter().enumerate().find(|(_, w)| {
            w.code.value == diag.code.as_str()
                && w.column.value == subject
                && w.expires.value >= today
        }) else {
            return diag;
        };
        if let Ok(mut waived) = self.imports.waived.lock() {
            waived.insert((self.import.decl.name.clone(), i));
        }
        let mut diag = diag.related(waiver.loc.clone(), "waived here");
        diag.severity = Severity::Info;
        diag.message = format!(
            "{} (waived until {}: {})",
            diag.message, waiver.expires.value, waiver.reason.value
        );
        diag
    }

    fn removed(&self, at: Loc) -> Diagnostic {
        self.finish(
            Diagnostic::error(
                Code::ImportedModelRemoved,
                format!(
                    "model `{}` reads `{}`, which import `{}` no longer publishes (removed or renamed)",
                    self.model.name, self.imported.model, self.import.decl.name
                ),
            )
            .at(at, "read here")
            .hint("stop reading it, or ask its producer to publish it again"),
            &self.imported.model,
        )
    }

    fn added(&self, column: &str, at: Loc) -> Diagnostic {
        self.finish(
            Diagnostic::info(
                Code::ImportedColumnAdded,
                format!(
                    "`{}` now publishes `{column}`, which `*` in model `{}` reads",
                    self.imported.label, self.model.name
                ),
            )
            .at(at, "read with *")
            .hint("name the columns the model needs, or accept the new one into its output"),
            &format!("{}.{column}", self.imported.model),
        )
    }

    fn deprecated(&self, column: &str, reason: &str, date: Option<&str>, at: Loc) -> Diagnostic {
        let past = date.is_some_and(|d| d < today().as_str());
        let when = date.map_or_else(String::new, |d| format!(" (from {d})"));
        let message = format!(
            "model `{}` reads `{}.{column}`, which its producer deprecates{when}: {reason}",
            self.model.name, self.imported.label
        );
        let diag = match past {
            true => Diagnostic::error(Code::ImportedColumnPastDeprecation, message),
            false => Diagnostic::warning(Code::ImportedColumnDeprecated, message),
        };
        self.finish(
            diag.at(at, "read here")
                .hint("read what the deprecation names instead, before the date"),
            &format!("{}.{column}", self.imported.model),
        )
    }

    fn change(&self, column: &str, change: &Change, relied: bool, at: Loc) -> Option<Diagnostic> {
        let name = format!("`{}.{column}`", self.imported.label);
        let reader = &self.model.name;
        let (diag, hint) = match change {
            Change::Dropped => (
                Diagnostic::error(Code::ImportedColumnDropped, format!("model `{reader}` reads {name}, which its producer dropped")),
                "stop reading it, or ask its producer to publish it again",
            ),
            Change::Narrowed { from, to } => (
                Diagnostic::error(Code::ImportedTypeNarrowed, format!("model `{reader}` reads {name}, whose type changed from {from} to {to}: values it held may no longer fit")),
                "check the model against the new type, then accept the snapshot as the baseline",
            ),
            Change::Widened { from, to } => (
                Diagnostic::warning(Code::ImportedTypeWidened, format!("model `{reader}` reads {name}, whose type widened from {from} to {to}")),
                "check that the model's own columns hold the wider values, then accept the snapshot as the baseline",
            ),
            Change::BecameNotNull => (
                Diagnostic::error(Code::ImportedColumnNotNull, format!("model `{reader}` reads {name}, which went from nullable to NOT NULL")),
                "review what the model does with its NULLs, then accept the snapshot as the baseline",
            ),
            Change::BecameNullable if relied => (
                Diagnostic::error(Code::ImportedColumnNullable, format!("model `{reader}` relies on {name} being NOT NULL (a NOT NULL column or a join key), and it is now nullable")),
                "handle its NULLs (coalesce, a filter), then accept the snapshot as the baseline",
            ),
            Change::BecameNullable => return None,
        };
        Some(self.finish(
            diag.at(at, "read here").hint(hint),
            &format!("{}.{column}", self.imported.model),
        ))
    }
}

/// Each waiver that has expired, or that holds but accepted no finding, is a warning.
pub fn check_waivers(project: &Project, imports: &Imports, diags: &mut Vec<Diagnostic>) {
    let waived = imports.waived.lock().map(|w| w.clone()).unwrap_or_default();
    let today = today();
    for import in &project.imports {
        // An unreadable import is reported once (E035); its waivers say nothing more.
        if import.snapshot.is_none() || import.baseline.is_none() {
            continue;
        }
        for (i, w) in import.decl.waivers.iter().enumerate() {
            let what = format!(
                "the waiver of {} on `{}` (import `{}`)",
                w.code.value, w.column.value, import.decl.name
            );
            if w.expires.value < today {
                diags.push(
                    Diagnostic::warning(
                        Code::ImportWaiverExpired,
                        format!("{what} expired on {}", w.expires.value),
                    )
                    .at(w.expires.loc.clone(), "expired")
                    .hint(
                        "fix what it waived and remove it, or extend `expires` after a new review",
                    ),
                );
            } else if !waived.contains(&(import.decl.name.clone(), i)) {
                diags.push(
                    Diagnostic::warning(Code::ImportWaiverUnused, format!("{what} accepts no finding"))
                        .at(w.loc.clone(), "waives nothing")
                        .hint("remove it: what it waived is fixed, or its code or column is not the finding's"),
                );
            }
        }
    }
}

pub use crate::clock::today;

#[cfg(test)]
mod tests {
    #[test]
    fn today_is_a_date() {
        let t = super::today();
        assert_eq!(t.len(), 10);
        assert!(t.as_str() > "2026-01-01", "{t}");
    }
}
