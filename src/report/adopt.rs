//! `sqb import dbt`'s report: what was imported, and each dbt resource not carried over (or
//! only in part), by the file that declares it. Text or JSON.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::PathBuf;

use serde::Serialize;

use crate::adopt::dbt::{Carried, NotCarried, Report};
use crate::report::count;

/// What the import wrote and found.
pub struct ImportOutcome {
    pub report: Report,
    pub out: PathBuf,
    pub files: Vec<String>,
    /// Errors and warnings `sqb compile` reports on the new project.
    pub errors: usize,
    pub warnings: usize,
}

pub fn emit_text(outcome: &ImportOutcome, w: &mut dyn Write) -> io::Result<()> {
    let r = &outcome.report;
    writeln!(
        w,
        "imported the dbt project `{}` (dbt-core {}, manifest schema v{}) into {} for {}: {}, {}, {}",
        r.project,
        r.dbt_version.as_deref().unwrap_or("unknown"),
        r.manifest_schema,
        outcome.out.display(),
        r.engine,
        count(r.models, "model", "models"),
        count(r.sources, "source", "sources"),
        count(r.audits, "audit", "audits"),
    )?;
    if r.not_carried_over.is_empty() {
        return writeln!(w, "\neverything was carried over");
    }
    writeln!(
        w,
        "\nnot carried over, or only in part ({}):",
        r.not_carried_over.len()
    )?;
    let mut by_file: BTreeMap<&str, Vec<&NotCarried>> = BTreeMap::new();
    for entry in &r.not_carried_over {
        by_file.entry(&entry.file).or_default().push(entry);
    }
    for (file, entries) in by_file {
        writeln!(w, "\n{}", if file.is_empty() { "(no file)" } else { file })?;
        for e in entries {
            let carried = match e.carried {
                Carried::Partly => "partly",
                Carried::Not => "not",
            };
            writeln!(w, "  {carried:<6}  {}  {}: {}", e.kind, e.node, e.what)?;
        }
    }
    Ok(())
}

#[derive(Serialize)]
struct Json<'a> {
    #[serde(flatten)]
    report: &'a Report,
    out: String,
    files: &'a [String],
    compile: Compile,
}

#[derive(Serialize)]
struct Compile {
    errors: usize,
    warnings: usize,
}

pub fn emit_json(outcome: &ImportOutcome, w: &mut dyn Write) -> io::Result<()> {
    let json = Json {
        report: &outcome.report,
        out: outcome.out.display().to_string(),
        files: &outcome.files,
        compile: Compile {
            errors: outcome.errors,
            warnings: outcome.warnings,
        },
    };
    serde_json::to_writer_pretty(&mut *w, &json)?;
    writeln!(w)
}
