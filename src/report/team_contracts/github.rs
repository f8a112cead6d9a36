//! `imports diff` and the consumers' impact as GitHub workflow annotations, each at the
//! import's declaration.

#[allow(clippy::wildcard_imports)]
use super::*;

/// One annotation per change that breaks or warns, at the import's declaration; `prefix` is
/// the project root relative to the repository root.
pub fn diff_github(diffs: &[ImportDiff], prefix: &str, w: &mut dyn Write) -> io::Result<()> {
    for d in diffs {
        let (file, line, col) = &d.at;
        for c in &d.changes {
            let command = match c.verdict {
                Verdict::Breaks => "error",
                Verdict::Warns => "warning",
                Verdict::Waived | Verdict::NoReader => continue,
            };
            let readers: Vec<String> = c.readers.iter().map(describe_reader).collect();
            writeln!(
                w,
                "::{command} file={},line={line},col={col},title={}::{}",
                property(&format!("{prefix}{file}")),
                property(&format!("sqb imports {} {}", c.code.unwrap_or(""), d.name)),
                data(&format!(
                    "{} ({}: {})",
                    c.entry.describe(),
                    c.verdict.as_str(),
                    readers.join(", ")
                ))
            )?;
        }
    }
    let breaking = diffs.iter().filter(|d| d.breaks()).count();
    match breaking {
        0 => writeln!(w, "no import change breaks a model"),
        n => writeln!(
            w,
            "{} with changes that break models",
            crate::report::count(n, "import", "imports")
        ),
    }
}

/// One annotation per change that breaks or warns a consumer, at the producer's declaration of
/// what changed (none for a model it no longer has); `prefix` is the project root relative to
/// the repository root.
pub fn consumers_github(
    report: &ConsumersReport,
    published: &Published,
    prefix: &str,
    w: &mut dyn Write,
) -> io::Result<()> {
    for consumer in &report.consumers {
        for c in &consumer.changes {
            let command = match c.verdict {
                Verdict::Breaks => "error",
                Verdict::Warns => "warning",
                Verdict::Waived | Verdict::NoReader => continue,
            };
            let at = match published.at(&c.entry.model, c.entry.column.as_deref()) {
                Some((file, line, col)) => format!(
                    " file={},line={line},col={col}",
                    property(&format!("{prefix}{file}"))
                ),
                None => String::new(),
            };
            let readers: Vec<String> = c.readers.iter().map(describe_reader).collect();
            writeln!(
                w,
                "::{command}{at},title={}::{}",
                property(&format!(
                    "sqb publish {} {}",
                    c.code.unwrap_or(""),
                    consumer.consumer
                )),
                data(&format!(
                    "{} ({} consumer `{}`: {})",
                    c.entry.describe(),
                    c.verdict.as_str(),
                    consumer.consumer,
                    readers.join(", ")
                ))
            )?;
        }
    }
    let breaking = report.consumers.iter().filter(|c| c.breaks()).count();
    match breaking {
        0 => writeln!(w, "no change breaks a consumer"),
        1 => writeln!(w, "1 consumer breaks on this change"),
        n => writeln!(w, "{n} consumers break on this change"),
    }
}
