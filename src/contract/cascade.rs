//! `contract generate --write --cascade`: a write that retypes a declaration (a source's
//! column, say) can make a model computed from it fail E052, its own declaration now
//! disagreeing with what its SQL produces. Instead of a bare rollback, the cascade retypes each
//! such model column to the type its SQL now produces, in its own sidecar, in the same
//! transaction; round after round until no new E052 is left. Pure: it turns the recompiled
//! project's errors into proposals.

use crate::compile::contract_shape::proven_type;
use crate::contract::cause::declared_column;
use crate::contract::plan::{Action, Proposal};
use crate::diagnostics::Diagnostic;
use crate::project::{Home, Project};

/// The retypes that clear `errors`' E052s, one per declared column (only columns declared in
/// a model's own sidecar: a shared schema is never changed from one model's evidence), and
/// the E052s that no retype can clear.
pub fn downstream_retypes<'d>(
    project: &Project,
    errors: &'d [Diagnostic],
) -> (Vec<Proposal>, Vec<&'d Diagnostic>) {
    let mut retypes: Vec<Proposal> = Vec::new();
    let mut stuck = Vec::new();
    for error in errors {
        match retype(project, error) {
            Some(p)
                if !retypes
                    .iter()
                    .any(|r| r.file == p.file && r.column == p.column) =>
            {
                retypes.push(p)
            }
            Some(_) => {}
            None => stuck.push(error),
        }
    }
    (retypes, stuck)
}

fn retype(project: &Project, error: &Diagnostic) -> Option<Proposal> {
    let proven = proven_type(error)?;
    let (model, column) = declared_column(project, error)?;
    let sidecar = model.sidecar.filter(|f| *f == column.file)?;
    Some(Proposal {
        file: project.sources.get(sidecar).rel_path.clone(),
        creates_file: false,
        resource_type: "model",
        resource: model.name.clone(),
        column: column.name.value.clone(),
        action: Action::ReplaceType,
        old: column.type_text.as_ref().map(|t| t.value.to_string()),
        new: Some(proven.to_string()),
        not_null: false,
        schema: None,
        table: None,
        home: Home::Root,
    })
}
