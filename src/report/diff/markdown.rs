//! The Markdown report, for pull-request comments and chat.

use std::io::{self, Write};

use super::DiffReport;
use crate::diagnostics::Severity;

pub fn emit(report: &DiffReport, w: &mut dyn Write) -> io::Result<()> {
    write!(w, "## sqb contract diff: `{}`\n\n", report.target)?;
    let icon = if report.has_differences() {
        "❌"
    } else {
        "✅"
    };
    writeln!(w, "{icon} {}", escape(&report.verdict()))?;
    for resource in report.differing() {
        writeln!(w,
            "\n### {} `{}`\n\n`{}` · `{}`\n\n| column | declared | physical | finding | severity |\n|---|---|---|---|---|",
            resource.resource_type, resource.resource_name, resource.relation, resource.file
        )?;
        for f in &resource.findings {
            let severity = match f.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Info => "note",
            };
            writeln!(
                w,
                "| {} | {} | {} | {} | {severity} |",
                code(f.column.as_deref()),
                code(f.declared_type.as_deref()),
                code(f.physical_type.as_deref()),
                f.kind.as_str()
            )?;
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

fn escape(text: &str) -> String {
    text.replace('|', "\\|")
}
