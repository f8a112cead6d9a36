//! `drift report --format markdown`: the report as a pull-request comment, its tables cut to fit
//! GitHub's limit with a count of what they leave out.

use std::io::{self, Write};

use super::{period, DriftReport};
use crate::report::markdown_cell as cell;

/// GitHub's limit for a comment is 65,536 characters; the tables stop well before it, with a
/// count of what they leave out.
const MARKDOWN_ROWS: usize = 100;

pub fn emit_markdown(report: &DriftReport, w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "## sqb drift report: `{}`\n", report.target)?;
    writeln!(
        w,
        "{}: **{} open**, {} resolved in the period.\n",
        period(report),
        report.open.len(),
        report.resolved.len()
    )?;
    if !report.open.is_empty() {
        writeln!(
            w,
            "### Open\n\n| finding | severity | first seen | runs open |\n|---|---|---|---|"
        )?;
        for o in report.open.iter().take(MARKDOWN_ROWS) {
            writeln!(
                w,
                "| {} | {} | {} | {} |",
                cell(&o.finding.describe()),
                o.finding.severity,
                o.first_seen,
                o.runs_open
            )?;
        }
        more(w, report.open.len())?;
    }
    if !report.resolved.is_empty() {
        writeln!(
            w,
            "### Resolved\n\n| finding | resolved | first seen |\n|---|---|---|"
        )?;
        for r in report.resolved.iter().take(MARKDOWN_ROWS) {
            writeln!(
                w,
                "| {} | {} | {} |",
                cell(&r.finding.describe()),
                r.resolved_at,
                r.first_seen
            )?;
        }
        more(w, report.resolved.len())?;
    }
    if !report.days.is_empty() {
        writeln!(
            w,
            "### Per day\n\n| day | errors | warnings | notes |\n|---|---|---|---|"
        )?;
        // The latest days, when there are more than fit.
        let skip = report.days.len().saturating_sub(MARKDOWN_ROWS);
        for d in report.days.iter().skip(skip) {
            writeln!(
                w,
                "| {} | {} | {} | {} |",
                d.date, d.errors, d.warnings, d.infos
            )?;
        }
        if skip > 0 {
            writeln!(
                w,
                "\n…and {skip} earlier days (`--format json` has them all).\n"
            )?;
        } else {
            writeln!(w)?;
        }
    }
    Ok(())
}

fn more(w: &mut dyn Write, total: usize) -> io::Result<()> {
    match total.checked_sub(MARKDOWN_ROWS) {
        Some(left) if left > 0 => {
            writeln!(w, "\n…and {left} more (`--format json` has them all).\n")
        }
        _ => writeln!(w),
    }
}
