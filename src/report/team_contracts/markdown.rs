//! `imports diff` and the consumers' impact as Markdown, for a pull-request comment.

#[allow(clippy::wildcard_imports)]
use super::*;

pub fn diff_markdown(diffs: &[ImportDiff], w: &mut dyn Write) -> io::Result<()> {
    for d in diffs {
        writeln!(w, "### Import `{}` (producer `{}`)\n", d.name, d.producer)?;
        if d.changes.is_empty() {
            writeln!(w, "No changes: the baseline is the snapshot.\n")?;
            continue;
        }
        impacts_markdown(&d.changes, w)?;
    }
    Ok(())
}

pub fn impacts_markdown(changes: &[Impact], w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "| change | verdict | readers |\n|---|---|---|")?;
    for c in changes {
        let verdict = match (c.verdict, c.code) {
            (Verdict::Breaks, Some(code)) => format!("**breaks** ({code})"),
            (v, Some(code)) => format!("{} ({code})", v.as_str()),
            (v, None) => v.as_str().to_string(),
        };
        let readers: Vec<String> = c.readers.iter().map(describe_reader).collect();
        writeln!(
            w,
            "| {} | {verdict} | {} |",
            cell(&c.entry.describe()),
            cell(&readers.join(", "))
        )?;
    }
    writeln!(w)
}

pub fn consumers_markdown(report: &ConsumersReport, w: &mut dyn Write) -> io::Result<()> {
    for c in &report.consumers {
        writeln!(
            w,
            "### Consumer `{}` ({})\n",
            c.consumer,
            summary(&c.changes)
        )?;
        if c.changes.is_empty() {
            writeln!(w, "No changes: the snapshot is the previous one.\n")?;
            continue;
        }
        impacts_markdown(&c.changes, w)?;
    }
    Ok(())
}
