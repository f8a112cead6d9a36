//! The Markdown report, for pull-request comments and chat.

use super::{DiffReport, Status};
use crate::diagnostics::Severity;

pub fn render(report: &DiffReport) -> String {
    let mut out = format!("## sqb contract diff: `{}`\n\n", report.target);
    let icon = if report.has_differences() {
        "❌"
    } else {
        "✅"
    };
    out.push_str(&format!("{icon} {}\n", escape(&report.verdict())));
    for resource in report
        .resources
        .iter()
        .filter(|r| r.status == Status::Differs)
    {
        out.push_str(&format!(
            "\n### {} `{}`\n\n`{}` · `{}`\n\n| column | declared | physical | finding | severity |\n|---|---|---|---|---|\n",
            resource.resource_type, resource.resource_name, resource.relation, resource.file
        ));
        for f in &resource.findings {
            let severity = match f.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Info => "note",
            };
            out.push_str(&format!(
                "| {} | {} | {} | {} | {severity} |\n",
                code(f.column.as_deref()),
                code(f.declared_type.as_deref()),
                code(f.physical_type.as_deref()),
                f.kind.as_str()
            ));
        }
    }
    out
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
