//! `sqb lineage`'s output: aligned text, or the JSON document of docs/lineage.md.

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::Serialize;

use crate::compile::sql::{ColumnRef, Unattributed};

/// One model's lineage (the JSON document).
#[derive(Debug, Serialize)]
pub struct LineageReport {
    pub schema_version: u32,
    pub model: String,
    pub file: String,
    pub columns: Vec<ColumnLineage>,
    /// With `--include-uses`: the columns used in each non-projection context.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub semantic_uses: Option<BTreeMap<&'static str, Vec<ColumnRef>>>,
}

#[derive(Debug, Serialize)]
pub struct ColumnLineage {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: Option<String>,
    pub nullable: Option<bool>,
    pub upstream: Vec<ColumnRef>,
    /// Columns read that more than one relation in scope may hold.
    pub unattributed: Vec<Unattributed>,
}

pub fn emit_json(report: &LineageReport, w: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *w, report)?;
    w.write_all(b"\n")
}

fn show(r: &ColumnRef) -> String {
    format!("{} {}.{}", r.resource_type, r.resource, r.column)
}

fn shown(refs: &[ColumnRef]) -> String {
    refs.iter().map(show).collect::<Vec<_>>().join(", ")
}

pub fn emit_text(report: &LineageReport, w: &mut dyn Write) -> io::Result<()> {
    write!(w, "{} ({})", report.model, report.file)?;
    let width = report
        .columns
        .iter()
        .map(|c| c.name.chars().count())
        .max()
        .unwrap_or(0);
    let type_width = report
        .columns
        .iter()
        .map(|c| c.ty.as_deref().unwrap_or("?").len())
        .max()
        .unwrap_or(1);
    for c in &report.columns {
        let mut parts: Vec<String> = c.upstream.iter().map(show).collect();
        parts.extend(
            c.unattributed
                .iter()
                .map(|u| format!("unknown {} (one of {})", u.column, u.candidates.join(", "))),
        );
        let upstream = match parts.is_empty() {
            true => "(no upstream column)".to_string(),
            false => parts.join(", "),
        };
        write!(
            w,
            "\n  {:width$}  {:type_width$}  ← {upstream}",
            c.name,
            c.ty.as_deref().unwrap_or("?")
        )?;
    }
    if let Some(uses) = &report.semantic_uses {
        write!(w, "\nsemantic uses:")?;
        if uses.is_empty() {
            write!(w, "\n  (none)")?;
        }
        for (context, refs) in uses {
            write!(w, "\n  {context}: {}", shown(refs))?;
        }
    }
    writeln!(w)
}
