//! `sqb compile`: load and validate the project offline, print its diagnostics.

use serde::Serialize;

use crate::cli::{CompileArgs, CompileFormat, GlobalArgs};
use crate::commands::{data, note, project_root};
use crate::compile::{compile_cached, Options};
use crate::diagnostics::{self, Counts, Diagnostic, JsonDiagnostic, Severity};
use crate::exit::ExitStatus;
use crate::project::Project;

/// The JSON document `sqb compile --format json` prints (docs/diagnostics.md).
#[derive(Serialize)]
struct CompileReport {
    schema_version: u32,
    valid: bool,
    summary: Summary,
    diagnostics: Vec<JsonDiagnostic>,
}

#[derive(Serialize)]
struct Summary {
    models: usize,
    sources: usize,
    errors: usize,
    warnings: usize,
    infos: usize,
}

pub fn run(global: &GlobalArgs, args: &CompileArgs) -> anyhow::Result<ExitStatus> {
    let root = project_root(global)?;
    let project = Project::load(&root)?;
    let (diags, _) = compile_cached(
        &project,
        Options {
            sql_analysis: !args.no_sql_analysis,
        },
        !global.no_cache,
    );
    let counts = diagnostics::count(&diags);
    match args.format {
        CompileFormat::Text => print_text(global, &project, &diags, counts),
        CompileFormat::Json => print_json(&project, &diags, counts)?,
    }
    // The process ends here: freeing a large project piece by piece is wasted work.
    std::mem::forget(project);
    Ok(if counts.errors > 0 {
        ExitStatus::Failure
    } else {
        ExitStatus::Success
    })
}

fn print_text(global: &GlobalArgs, project: &Project, diags: &[Diagnostic], counts: Counts) {
    for d in diags {
        if global.quiet && d.severity != Severity::Error {
            continue;
        }
        data(&format!(
            "{}\n",
            diagnostics::render_text(d, &project.sources)
        ));
    }
    let subject = format!(
        "{} {}, {} {}",
        project.models.len(),
        plural(project.models.len(), "model", "models"),
        project.source_tables.len(),
        plural(project.source_tables.len(), "source", "sources")
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
    note(global, &format!("compiled {subject}: {verdict}"));
}

fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 {
        one
    } else {
        many
    }
}

fn print_json(project: &Project, diags: &[Diagnostic], counts: Counts) -> anyhow::Result<()> {
    let report = CompileReport {
        schema_version: 1,
        valid: counts.errors == 0,
        summary: Summary {
            models: project.models.len(),
            sources: project.source_tables.len(),
            errors: counts.errors,
            warnings: counts.warnings,
            infos: counts.infos,
        },
        diagnostics: diags
            .iter()
            .map(|d| diagnostics::to_json(d, &project.sources))
            .collect(),
    };
    data(&serde_json::to_string_pretty(&report)?);
    Ok(())
}
