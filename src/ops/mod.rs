//! The work of each command, on plain option structs: nothing here knows clap, and nothing here
//! prints. Each op returns data (a report, a plan, a verdict) for a command to hand to a printer
//! in [`crate::report`], or a typed error.
//!
//! `root` finds the project (recovering an interrupted write); `compile`, `lineage`,
//! `publish` and `import` (a dbt project as a new sqb project) are offline; `inspect` is what `diff` and `generate` share: the warehouse session started before
//! the project loads, the compile, the selection, and the catalog read matched to it.

pub mod assert;
pub mod compile;
pub mod diff;
pub mod drift;
pub mod generate;
pub mod import;
pub mod imports;
pub mod inspect;
pub mod lineage;
pub mod publish;
pub mod query;
pub mod root;
pub mod semantic;
pub mod verify;

use crate::diagnostics::{render_errors, Diagnostic};
use crate::error::UserError;
use crate::project::Project;

/// A project with errors fails the command: its errors, rendered, explain why.
fn ensure_compiles(project: &Project, diags: &[Diagnostic]) -> Result<(), UserError> {
    let errors = render_errors(diags, &project.sources);
    if errors.is_empty() {
        return Ok(());
    }
    Err(UserError::new(format!(
        "the project does not compile ({})",
        crate::report::count(errors.len(), "error", "errors")
    ))
    .with_hint("fix the errors above; `sqb compile` lists them")
    .with_diagnostics(errors.join("\n\n")))
}
