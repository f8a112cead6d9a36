//! GitHub Actions workflow commands: one annotation per error or warning, at the declaration.

use super::DiffReport;
use crate::diagnostics::Severity;

/// `prefix` is the project root relative to the repository root (empty when they are the same),
/// so that annotations land on the right file.
pub fn render(report: &DiffReport, prefix: &str) -> String {
    let mut out = String::new();
    for resource in &report.resources {
        for f in resource.findings.iter().filter(|f| f.is_difference()) {
            let command = if f.severity == Severity::Error {
                "error"
            } else {
                "warning"
            };
            let (file, line, col) = match &f.location {
                Some(l) => (l.file.as_str(), l.line, l.column),
                None => (resource.file.as_str(), 1, 1),
            };
            out.push_str(&format!(
                "::{command} file={},line={line},col={col},title={}::{}\n",
                property(&format!("{prefix}{file}")),
                property(&format!(
                    "sqb {} {}",
                    f.kind.as_str(),
                    resource.resource_name
                )),
                data(&f.message)
            ));
        }
    }
    out.push_str(&format!("{}\n", report.verdict()));
    out
}

fn data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}
