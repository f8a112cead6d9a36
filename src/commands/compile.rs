//! `sqb compile`: validate the project offline and print its diagnostics.

use crate::cli::{CompileArgs, CompileFormat, GlobalArgs};
use crate::commands::{note, project_root, stdout};
use crate::diagnostics;
use crate::exit::ExitStatus;
use crate::ops::compile::{compile, CompileOptions, CompiledProject};
use crate::report::{self, plural};

pub fn run(global: &GlobalArgs, args: &CompileArgs) -> anyhow::Result<ExitStatus> {
    let root = project_root(global)?;
    let options = CompileOptions {
        sql_analysis: !args.no_sql_analysis,
        use_cache: !global.no_cache,
    };
    let compiled = compile(&root, &options)?;
    let (project, diags) = (&compiled.project, &compiled.diagnostics);
    match args.format {
        CompileFormat::Text => {
            stdout(|w| report::compile::emit_text(project, diags, global.quiet, w))?;
            note(global, &summary(&compiled));
        }
        CompileFormat::Json => stdout(|w| report::compile::emit_json(project, diags, w))?,
        CompileFormat::Sarif => {
            let prefix = crate::commands::github_prefix(&root)?;
            stdout(|w| report::sarif::emit_compile(project, diags, &prefix, w))?
        }
    }
    let status = match compiled.has_errors() {
        true => ExitStatus::Failure,
        false => ExitStatus::Success,
    };
    crate::memory::leave_to_exit(compiled);
    Ok(status)
}

/// "compiled 3 models, 1 source: valid, 1 warning"
fn summary(compiled: &CompiledProject) -> String {
    let project = &compiled.project;
    let counts = diagnostics::count(&compiled.diagnostics);
    let (models, sources) = (project.models.len(), project.source_tables.len());
    let subject = format!(
        "{models} {}, {sources} {}",
        plural(models, "model", "models"),
        plural(sources, "source", "sources")
    );
    let verdict = match (counts.errors, counts.warnings) {
        (0, 0) => "valid".to_string(),
        (0, w) => format!("valid, {w} {}", plural(w, "warning", "warnings")),
        (e, 0) => format!("invalid, {e} {}", plural(e, "error", "errors")),
        (e, w) => format!(
            "invalid, {e} {}, {w} {}",
            plural(e, "error", "errors"),
            plural(w, "warning", "warnings")
        ),
    };
    format!("compiled {subject}: {verdict}")
}
