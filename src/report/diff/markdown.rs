//! The Markdown report, for pull-request comments and chat.

use std::io::{self, Write};

use super::DiffReport;
use crate::report::markdown_cell;

pub fn emit(report: &DiffReport, w: &mut dyn Write) -> io::Result<()> {
    write!(w, "## sqb contract diff: `{}`\n\n", report.target)?;
    let icon = if report.has_differences() {
        "❌"
    } else {
        "✅"
    };
    writeln!(w, "{icon} {}", markdown_cell(&report.verdict()))?;
    if let Some(summary) = report.baseline_summary() {
        writeln!(w, "\n{}", markdown_cell(&summary))?;
    }
    let compared = report.baseline.is_some();
    let (extra, rule) = match compared {
        true => (" baseline |", "---|"),
        false => ("", ""),
    };
    for resource in report.differing() {
        writeln!(w,
            "\n### {} `{}`\n\n`{}` · `{}`\n\n| column | declared | physical | finding | severity |{extra}\n|---|---|---|---|---|{rule}",
            resource.resource_type, resource.resource_name, resource.relation, resource.file
        )?;
        for f in &resource.findings {
            let severity = f.severity.word();
            let mark = match (compared, f.is_new()) {
                (false, _) => "",
                (true, true) => " **new** |",
                (true, false) => " known |",
            };
            writeln!(
                w,
                "| {} | {} | {} | {} | {severity} |{mark}",
                code(f.column.as_deref()),
                code(f.declared_type.as_deref()),
                code(f.physical_type.as_deref()),
                f.kind.as_str()
            )?;
        }
    }
    if let Some(c) = report.baseline.as_ref().filter(|c| c.resolved > 0) {
        writeln!(w, "\n### Resolved since the baseline\n")?;
        for f in &c.resolved_findings {
            writeln!(w, "- {}", markdown_cell(&f.describe()))?;
        }
    }
    Ok(())
}

fn code(text: Option<&str>) -> String {
    match text {
        Some(t) => format!("`{}`", t.replace('|', "\\|").replace('`', "'")),
        None => "–".to_string(),
    }
}
