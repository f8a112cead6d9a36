//! `sqb compile`'s output: annotated diagnostics, or the JSON document of docs/diagnostics.md.

use std::io::{self, Write};

use serde::Serialize;

use crate::diagnostics::{self, Counts, Diagnostic, JsonDiagnostic, Severity};
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

/// Each diagnostic as an annotated source snippet; with `errors_only`, errors alone.
pub fn emit_text(
    project: &Project,
    diags: &[Diagnostic],
    errors_only: bool,
    w: &mut dyn Write,
) -> io::Result<()> {
    for d in diags {
        if errors_only && d.severity != Severity::Error {
            continue;
        }
        write!(w, "{}\n\n", diagnostics::render_text(d, &project.sources))?;
    }
    Ok(())
}

pub fn emit_json(project: &Project, diags: &[Diagnostic], w: &mut dyn Write) -> io::Result<()> {
    let counts = diagnostics::count(diags);
    let report = CompileReport {
        schema_version: 1,
        valid: counts.errors == 0,
        summary: summary(project, counts),
        diagnostics: diags
            .iter()
            .map(|d| diagnostics::to_json(d, &project.sources))
            .collect(),
    };
    serde_json::to_writer_pretty(&mut *w, &report)?;
    w.write_all(b"\n")
}

fn summary(project: &Project, counts: Counts) -> Summary {
    Summary {
        models: project.models.len(),
        sources: project.source_tables.len(),
        errors: counts.errors,
        warnings: counts.warnings,
        infos: counts.infos,
    }
}
