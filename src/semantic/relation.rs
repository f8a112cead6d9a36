//! The relations the semantic checks see — each model and source with its effective columns
//! and semantic declarations — and resolving their columns and checking their types, shared
//! by every check.

use std::collections::HashMap;

use crate::diagnostics::{did_you_mean, Code, Diagnostic};
use crate::project::semantic::Semantic;
use crate::project::{Column, Project};
use crate::source::{Loc, Spanned};
use crate::types::DataType;

/// A model or source with its semantic declarations, as the checks see it.
pub(super) struct Relation<'p> {
    pub kind: &'static str,
    pub name: &'p str,
    pub columns: Vec<&'p Column>,
    pub semantic: Option<&'p Semantic>,
    /// Where the relation is declared, for labels that point at it.
    pub loc: Loc,
}

impl<'p> Relation<'p> {
    pub fn describe(&self) -> String {
        format!("{} `{}`", self.kind, self.name)
    }

    pub fn column(&self, name: &str) -> Option<&'p Column> {
        self.columns
            .iter()
            .copied()
            .find(|c| c.name.value.eq_ignore_ascii_case(name))
    }
}

/// Every model and source, with an index by name (built once: the checks look relations up
/// for every reference they resolve).
pub(super) struct Relations<'p> {
    all: Vec<Relation<'p>>,
    by_name: HashMap<&'p str, usize>,
}

impl<'p> Relations<'p> {
    /// The model or source of that name (a model wins, as a clash of the two is E040).
    pub fn get(&self, name: &str) -> Option<&Relation<'p>> {
        self.by_name.get(name).map(|&i| &self.all[i])
    }
}

impl<'p> std::ops::Deref for Relations<'p> {
    type Target = [Relation<'p>];

    fn deref(&self) -> &Self::Target {
        &self.all
    }
}

pub(super) fn relations(project: &Project) -> Relations<'_> {
    let all = all_relations(project);
    let mut by_name = HashMap::with_capacity(all.len());
    for (i, r) in all.iter().enumerate() {
        by_name.entry(r.name).or_insert(i);
    }
    Relations { all, by_name }
}

fn all_relations(project: &Project) -> Vec<Relation<'_>> {
    let models = project.models.iter().map(|m| Relation {
        kind: "model",
        name: &m.name,
        columns: project.effective_columns(m),
        semantic: m.semantic.as_deref(),
        loc: Loc::file_start(m.sidecar.unwrap_or(m.sql_file)),
    });
    let sources = project.source_tables.iter().map(|s| Relation {
        kind: "source",
        name: &s.name.value,
        columns: s.columns.iter().collect(),
        semantic: s.semantic.as_deref(),
        loc: s.name.loc.clone(),
    });
    models.chain(sources).collect()
}

/// What a use of a column needs of its type.
pub(super) struct Need {
    /// What uses the column, and whose it is: "measure `x` (sum) of model `orders`".
    pub what: String,
    pub expected: &'static str,
    pub fits: fn(&DataType) -> bool,
    pub hint: &'static str,
}

/// `column` must have a type `fits` accepts: an error when its declared type does not, a
/// warning when it declares none (the check cannot run).
pub(super) fn needs(
    column: &Column,
    at: &Spanned<String>,
    need: &Need,
    diags: &mut Vec<Diagnostic>,
) {
    let Need {
        what,
        expected,
        fits,
        hint,
    } = need;
    match (&column.ty, &column.type_text) {
        (Some(ty), Some(text)) if !fits(ty) => diags.push(
            Diagnostic::error(
                Code::SemanticWrongType,
                format!(
                    "{what} needs {expected}, but column `{}` is {}",
                    column.name.value, text.value
                ),
            )
            .at(at.loc.clone(), format!("needs {expected}"))
            .related(
                text.loc.clone(),
                format!("`{}` is declared {} here", column.name.value, text.value),
            )
            .hint(*hint),
        ),
        (None, None) => diags.push(
            Diagnostic::warning(
                Code::SemanticTypeUnknown,
                format!(
                    "{what} needs {expected}, but column `{}` declares no type",
                    column.name.value
                ),
            )
            .at(at.loc.clone(), format!("needs {expected}"))
            .related(column.name.loc.clone(), "declared here without a type")
            .hint("declare the column's type so that sqb can check it"),
        ),
        _ => {}
    }
}

/// The declared column of `relation` that `name` names, or an error at `name`.
pub(super) fn resolve_on<'p>(
    relation: &Relation<'p>,
    name: &Spanned<String>,
    what: &str,
    diags: &mut Vec<Diagnostic>,
) -> Option<&'p Column> {
    if let Some(column) = relation.column(&name.value) {
        return Some(column);
    }
    let mut diag = Diagnostic::error(
        Code::SemanticUnknownColumn,
        format!(
            "{what} names column `{}`, which {} does not declare",
            name.value,
            relation.describe()
        ),
    )
    .at(name.loc.clone(), "no such declared column")
    .related(
        relation.loc.clone(),
        format!("the columns of {}", relation.describe()),
    );
    diag = match did_you_mean(
        &name.value,
        relation.columns.iter().map(|c| c.name.value.as_str()),
    ) {
        Some(close) => diag.hint(format!("did you mean `{close}`?")),
        None => diag.hint(format!(
            "declare the column under [columns.{}] of {}",
            name.value,
            relation.describe()
        )),
    };
    diags.push(diag);
    None
}

pub(super) fn is_numeric(ty: &DataType) -> bool {
    use DataType::*;
    matches!(
        ty,
        TinyInt
            | SmallInt
            | Integer
            | BigInt
            | HugeInt
            | UTinyInt
            | USmallInt
            | UInteger
            | UBigInt
            | UHugeInt
            | Numeric(_)
            | Real
            | Double
    )
}

pub(super) fn is_temporal(ty: &DataType) -> bool {
    matches!(ty, DataType::Date | DataType::Timestamp { .. })
}

/// The project's time spine: the relation that declares `[time_spine]`, and its table (the
/// first, when several do: `sqb compile` reports the others).
pub(super) fn time_spine<'a, 'p>(
    relations: &'a Relations<'p>,
) -> Option<(&'a Relation<'p>, &'p crate::project::semantic::TimeSpine)> {
    relations
        .iter()
        .find_map(|r| Some((r, r.semantic?.time_spine.as_ref()?)))
}
