//! Compile errors that the warehouse explains. A source declared with a type the warehouse
//! does not have (`INTEGER` for a Postgres `oid`) makes every model reading that column fail
//! E052 against its own, correct, declaration. When `contract diff` finds the source's
//! `type_mismatch`, each such E052 is marked as following from it, so that the one finding that
//! matters is fixed first. Pure: it works on the diagnostics, the findings and the lineage.

use std::collections::HashMap;

use crate::compile::sql::ColumnRef;
use crate::compile::Analysis;
use crate::diagnostics::{Code, Diagnostic};
use crate::project::{Column, Model, Project};
use crate::source::Loc;

/// A source column whose declared type the warehouse contradicts: where it is declared, and
/// what the warehouse has.
pub struct WrongSource {
    pub declared: String,
    pub physical: String,
    pub loc: Option<Loc>,
}

/// Source columns proven wrong, by (source, column).
pub type WrongSources = HashMap<(String, String), WrongSource>;

/// Adds to each E052 of `errors` the source columns proven wrong that its model column is
/// computed from (through other models too), with a hint to fix those first.
pub fn explain(
    project: &Project,
    analysis: &Analysis,
    wrong: &WrongSources,
    errors: &mut [Diagnostic],
) {
    for error in errors
        .iter_mut()
        .filter(|d| d.code == Code::ProvenTypeMismatch)
    {
        let Some((model, column)) = declared_at(project, error) else {
            continue;
        };
        let mut causes = Vec::new();
        let start = ColumnRef {
            resource_type: "model",
            resource: model,
            column,
        };
        sources_of(analysis, &start, wrong, &mut Vec::new(), &mut causes);
        if causes.is_empty() {
            continue;
        }
        for (source, column) in &causes {
            let w = &wrong[&(source.clone(), column.clone())];
            let text = format!(
                "source `{source}` declares `{column}` {}, but the warehouse has {}: this error follows from it",
                w.declared, w.physical
            );
            if let Some(loc) = &w.loc {
                error.related.push(crate::diagnostics::Label {
                    loc: loc.clone(),
                    text,
                });
            }
        }
        let named: Vec<String> = causes
            .iter()
            .map(|(s, c)| format!("`{c}` of source `{s}`"))
            .collect();
        error.hint = Some(format!(
            "declare {} as the warehouse has it (`sqb contract generate --write --overwrite` does), and this error goes with it",
            named.join(", ")
        ));
    }
}

/// The model and column whose declared type the E052 points at.
fn declared_at(project: &Project, error: &Diagnostic) -> Option<(String, String)> {
    declared_column(project, error).map(|(m, c)| (m.name.clone(), c.name.value.clone()))
}

/// The model and its declared column (in its sidecar or a shared schema) whose type a
/// diagnostic points at.
pub fn declared_column<'p>(
    project: &'p Project,
    error: &Diagnostic,
) -> Option<(&'p Model, &'p Column)> {
    let at = &error.primary.as_ref()?.loc;
    project.models.iter().find_map(|m| {
        project
            .effective_columns(m)
            .into_iter()
            .find(|c| c.type_text.as_ref().is_some_and(|t| &t.loc == at))
            .map(|c| (m, c))
    })
}

/// Follows `of`'s lineage upstream through models, collecting the wrong source columns it
/// reaches.
fn sources_of(
    analysis: &Analysis,
    of: &ColumnRef,
    wrong: &WrongSources,
    seen: &mut Vec<ColumnRef>,
    causes: &mut Vec<(String, String)>,
) {
    if seen.contains(of) {
        return;
    }
    seen.push(of.clone());
    let Some(shape) = analysis
        .models
        .get(&of.resource)
        .and_then(|a| a.shape.as_ref())
    else {
        return;
    };
    let Some(out) = shape.iter().find(|c| c.name == of.column) else {
        return;
    };
    for upstream in &out.lineage.columns {
        match upstream.resource_type {
            "source" => {
                let key = (upstream.resource.clone(), upstream.column.clone());
                if wrong.contains_key(&key) && !causes.contains(&key) {
                    causes.push(key);
                }
            }
            "model" => sources_of(analysis, upstream, wrong, seen, causes),
            _ => {}
        }
    }
}
