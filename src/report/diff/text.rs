//! The terminal report: a table per differing resource, then a one-line summary.

use std::io::{self, Write};

use anstyle::{AnsiColor, Style};
use comfy_table::{presets, ContentArrangement, Table};

use super::{DiffReport, FindingReport, Status};
use crate::diagnostics::Severity;

const BOLD: Style = Style::new().bold();

/// The finding cell. Table cells stay unstyled so that column widths are right on any stream.
fn severity_label(severity: Severity, kind: &str) -> String {
    match severity {
        Severity::Error => kind.to_string(),
        Severity::Warning => format!("{kind} (warning)"),
        Severity::Info => format!("{kind} (note)"),
    }
}

fn verdict_style(differs: bool) -> Style {
    if differs {
        AnsiColor::Red.on_default().bold()
    } else {
        AnsiColor::Green.on_default().bold()
    }
}

/// Writes the report. Styles are ANSI codes that the output strips when colour is off.
pub fn emit(report: &DiffReport, w: &mut dyn Write) -> io::Result<()> {
    for resource in report.differing() {
        writeln!(
            w,
            "{BOLD}{} {}{BOLD:#} → {} ({})",
            resource.resource_type, resource.resource_name, resource.relation, resource.file
        )?;
        writeln!(
            w,
            "{}",
            table(&resource.findings, report.baseline.is_some())
        )?;
        semantic_uses(&resource.findings, w)?;
        located_messages(&resource.findings, w)?;
        writeln!(w)?;
    }
    let style = verdict_style(report.has_differences());
    writeln!(w, "{style}{}{style:#}", report.verdict())?;
    proof(report, w)?;
    if let (Some(summary), Some(comparison)) = (report.baseline_summary(), &report.baseline) {
        writeln!(w, "{summary}")?;
        for f in &comparison.resolved_findings {
            writeln!(w, "  resolved: {}", f.describe())?;
        }
    }
    let hidden: usize = report
        .resources
        .iter()
        .filter(|r| r.status == Status::Agrees)
        .map(|r| r.findings.len())
        .sum();
    if hidden > 0 {
        writeln!(w,
            "{} on agreeing resources not shown (undeclared columns of open contracts and the like); --format json lists them",
            crate::report::count(hidden, "note", "notes")
        )?;
    }
    Ok(())
}

/// The engine's refusals and the analysis' disagreements, which the table cannot say: each
/// message at its location.
fn located_messages(findings: &[FindingReport], w: &mut dyn Write) -> io::Result<()> {
    for f in findings.iter().filter(|f| f.kind.checks_sql()) {
        match &f.location {
            Some(l) => writeln!(w, "{}:{}:{}: {}", l.file, l.line, l.column, f.message)?,
            None => writeln!(w, "{}", f.message)?,
        }
    }
    Ok(())
}

/// `contract check`: how many described columns sqb's analysis proved offline.
fn proof(report: &DiffReport, w: &mut dyn Write) -> io::Result<()> {
    let proofs: Vec<&super::Proof> = report
        .resources
        .iter()
        .filter_map(|r| r.proof.as_ref())
        .collect();
    if proofs.is_empty() {
        return Ok(());
    }
    let sum = |f: fn(&super::Proof) -> usize| proofs.iter().map(|p| f(p)).sum::<usize>();
    let offline = sum(|p| p.offline.len());
    let warehouse = sum(|p| p.warehouse_only.len());
    let disagreeing = sum(|p| p.disagreeing.len());
    let total = offline + warehouse + disagreeing;
    write!(
        w,
        "sqb's offline analysis proved {offline} of {} the warehouse described",
        crate::report::count(total, "column", "columns")
    )?;
    if disagreeing > 0 {
        write!(w, ", and disagrees on {disagreeing}")?;
    }
    writeln!(w)
}

/// For each finding whose column the semantic contracts use: what uses it, and where.
fn semantic_uses(findings: &[FindingReport], w: &mut dyn Write) -> io::Result<()> {
    for f in findings.iter().filter(|f| !f.semantic_uses.is_empty()) {
        let column = f.column.as_deref().unwrap_or("-");
        writeln!(w, "`{column}` is used by:")?;
        for u in &f.semantic_uses {
            let what = u.label.as_deref().unwrap_or("a semantic contract");
            writeln!(w, "  {what} ({}:{}:{})", u.file, u.line, u.column)?;
        }
    }
    Ok(())
}

/// The findings of one resource; with a baseline, a last column says which are new.
fn table(findings: &[FindingReport], compared: bool) -> String {
    let mut table = Table::new();
    let mut header = vec!["column", "declared", "physical", "finding"];
    if compared {
        header.push("baseline");
    }
    table
        .load_style(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header);
    for f in findings {
        let column = match (&f.column, &f.physical_column) {
            (Some(c), Some(p)) => format!("{c} / {p}"),
            (Some(c), None) => c.clone(),
            _ => "-".to_string(),
        };
        let null = |nullable: bool| match nullable {
            true => " NULL",
            false => " NOT NULL",
        };
        let (declared_null, physical_null) = match f.nullable {
            Some((declared, physical)) => (null(declared), null(physical)),
            None => ("", ""),
        };
        let mut row = vec![
            column,
            f.declared_type.clone().unwrap_or_else(|| "-".into()) + declared_null,
            f.physical_type.clone().unwrap_or_else(|| "-".into()) + physical_null,
            severity_label(f.severity, f.kind.as_str()),
        ];
        if compared {
            row.push(if f.is_new() { "new" } else { "known" }.to_string());
        }
        table.add_row(row);
    }
    table.to_string()
}
