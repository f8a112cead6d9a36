//! GitHub Actions workflow commands: one annotation per error or warning, at the declaration.

use std::io::{self, Write};

use super::DiffReport;
use crate::diagnostics::Severity;

/// `prefix` is the project root relative to the repository root (empty when they are the same),
/// so that annotations land on the right file.
pub fn emit(report: &DiffReport, prefix: &str, w: &mut dyn Write) -> io::Result<()> {
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
            writeln!(
                w,
                "::{command} file={},line={line},col={col},title={}::{}",
                property(&format!("{prefix}{file}")),
                property(&format!(
                    "sqb {}{} {}",
                    if f.is_new() { "new " } else { "" },
                    f.kind.as_str(),
                    resource.resource_name
                )),
                data(&f.message)
            )?;
        }
    }
    writeln!(w, "{}", report.verdict())?;
    match report.baseline_summary() {
        Some(summary) => writeln!(w, "{summary}"),
        None => Ok(()),
    }
}

pub(crate) fn data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

pub(crate) fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}
