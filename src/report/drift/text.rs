//! `drift report` as text: the period, the open and resolved findings, the resources with the
//! most open drift, and the counts per day.

use std::io::{self, Write};

use super::{period, DriftReport};

pub fn emit_text(report: &DriftReport, w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "drift of `{}`: {}", report.target, period(report))?;
    writeln!(
        w,
        "{} open, {} resolved in the period",
        report.open.len(),
        report.resolved.len()
    )?;
    if !report.open.is_empty() {
        writeln!(w, "\nopen (first seen, runs open):")?;
        for o in &report.open {
            writeln!(
                w,
                "  {}  {:>4}  {} [{}]",
                o.first_seen,
                o.runs_open,
                o.finding.describe(),
                o.finding.severity
            )?;
        }
    }
    if !report.resolved.is_empty() {
        writeln!(w, "\nresolved (when, first seen):")?;
        for r in &report.resolved {
            writeln!(
                w,
                "  {}  {}  {}",
                r.resolved_at,
                r.first_seen,
                r.finding.describe()
            )?;
        }
    }
    if !report.top_resources.is_empty() {
        writeln!(w, "\nmost open drift:")?;
        for t in &report.top_resources {
            writeln!(
                w,
                "  {:>4}  {} {} ({})",
                t.open, t.resource_type, t.resource_name, t.relation
            )?;
        }
    }
    if !report.days.is_empty() {
        writeln!(w, "\nper day (errors, warnings, notes):")?;
        for d in &report.days {
            writeln!(
                w,
                "  {}  {:>4} {:>4} {:>4}",
                d.date, d.errors, d.warnings, d.infos
            )?;
        }
    }
    Ok(())
}
