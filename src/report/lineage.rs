//! `sqb lineage`'s output: aligned text, or the JSON document of docs/lineage.md.

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::Serialize;

use crate::compile::sql::{ColumnRef, Unattributed};

/// What `sqb lineage` shows: a model's columns and what each reads, or a source's columns and
/// what reads each.
#[derive(Debug)]
pub enum Lineage {
    Model(LineageReport),
    Source(SourceLineage),
}

/// One source's lineage (the JSON document): the model columns computed from each column.
#[derive(Debug, Serialize)]
pub struct SourceLineage {
    pub schema_version: u32,
    pub source: String,
    /// `schema.table` as the source declares it.
    pub relation: String,
    pub file: String,
    pub columns: Vec<SourceColumnLineage>,
    /// With `--include-uses`: where models use its columns in non-projection contexts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub semantic_uses: Option<Vec<SourceUse>>,
}

#[derive(Debug, Serialize)]
pub struct SourceColumnLineage {
    pub name: String,
    /// The declared type as written, or `null` (undeclared, or declared without one).
    #[serde(rename = "type")]
    pub ty: Option<String>,
    pub nullable: Option<bool>,
    /// `false`: an open source's column that models read but the source does not declare.
    pub declared: bool,
    /// The model columns computed from it (directly: models reading those are one
    /// `sqb lineage` further).
    pub downstream: Vec<ColumnRef>,
}

/// A source column used by a model in a non-projection context.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct SourceUse {
    pub column: String,
    pub model: String,
    pub context: &'static str,
}

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

/// Explains `?` under a model's listing that shows one.
const UNPROVEN_TYPE: &str = "? type not proven offline: an enum, an upstream column without a type, or an expression sqb does not type";

/// Explains `?` under a source's listing that shows one.
const UNDECLARED_TYPE: &str = "? a column the source declares without a type, or not at all";

pub fn emit_json(lineage: &Lineage, w: &mut dyn Write) -> io::Result<()> {
    match lineage {
        Lineage::Model(report) => serde_json::to_writer_pretty(&mut *w, report)?,
        Lineage::Source(report) => serde_json::to_writer_pretty(&mut *w, report)?,
    }
    w.write_all(b"\n")
}

pub fn emit_text(lineage: &Lineage, w: &mut dyn Write) -> io::Result<()> {
    match lineage {
        Lineage::Model(report) => model_text(report, w),
        Lineage::Source(report) => source_text(report, w),
    }
}

fn type_width<'a>(types: impl Iterator<Item = Option<&'a str>>) -> usize {
    types.map(|t| t.unwrap_or("?").len()).max().unwrap_or(1)
}

fn source_text(report: &SourceLineage, w: &mut dyn Write) -> io::Result<()> {
    write!(
        w,
        "{} (source {}, {})",
        report.source, report.relation, report.file
    )?;
    let width = report
        .columns
        .iter()
        .map(|c| c.name.chars().count())
        .max()
        .unwrap_or(0);
    let type_width = type_width(report.columns.iter().map(|c| c.ty.as_deref()));
    for c in &report.columns {
        let downstream = match c.downstream.is_empty() {
            true => "(no model column reads it)".to_string(),
            false => shown(&c.downstream),
        };
        let undeclared = if c.declared { "" } else { "  (not declared)" };
        write!(
            w,
            "\n  {:width$}  {:type_width$}  → {downstream}{undeclared}",
            c.name,
            c.ty.as_deref().unwrap_or("?")
        )?;
    }
    if let Some(uses) = &report.semantic_uses {
        write!(w, "\nsemantic uses:")?;
        if uses.is_empty() {
            write!(w, "\n  (none)")?;
        }
        for u in uses {
            write!(w, "\n  {}: {} in model {}", u.context, u.column, u.model)?;
        }
    }
    writeln!(w)?;
    legend(
        report.columns.iter().any(|c| c.ty.is_none()),
        UNDECLARED_TYPE,
        w,
    )
}

fn legend(shown: bool, text: &str, w: &mut dyn Write) -> io::Result<()> {
    match shown {
        true => writeln!(w, "{text}"),
        false => Ok(()),
    }
}

fn show(r: &ColumnRef) -> String {
    format!("{} {}.{}", r.resource_type, r.resource, r.column)
}

fn shown(refs: &[ColumnRef]) -> String {
    refs.iter().map(show).collect::<Vec<_>>().join(", ")
}

fn model_text(report: &LineageReport, w: &mut dyn Write) -> io::Result<()> {
    write!(w, "{} ({})", report.model, report.file)?;
    let width = report
        .columns
        .iter()
        .map(|c| c.name.chars().count())
        .max()
        .unwrap_or(0);
    let type_width = type_width(report.columns.iter().map(|c| c.ty.as_deref()));
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
    writeln!(w)?;
    legend(
        report.columns.iter().any(|c| c.ty.is_none()),
        UNPROVEN_TYPE,
        w,
    )
}
