//! The cross-team contract commands as text: `imports diff`, `imports reads`, `imports update`
//! and the consumers' impact of `publish --consumers`.

#[allow(clippy::wildcard_imports)]
use super::*;

/// `imports diff` as text: per import, each change and whom it reaches.
pub fn diff_text(diffs: &[ImportDiff], w: &mut dyn Write) -> io::Result<()> {
    for d in diffs {
        writeln!(
            w,
            "import `{}` (producer `{}`): {}",
            d.name,
            d.producer,
            summary(&d.changes)
        )?;
        impacts_text(&d.changes, w)?;
    }
    Ok(())
}

/// Each change, then its verdict and readers, indented.
pub fn impacts_text(changes: &[Impact], w: &mut dyn Write) -> io::Result<()> {
    for c in changes {
        writeln!(w, "  {}", c.entry.describe())?;
        let readers: Vec<String> = c.readers.iter().map(describe_reader).collect();
        let code = c.code.map_or_else(String::new, |c| format!(" [{c}]"));
        match c.verdict {
            Verdict::NoReader => writeln!(w, "    {DIM}no reader{DIM:#}")?,
            Verdict::Breaks => writeln!(
                w,
                "    {BREAKS}breaks{BREAKS:#}{code} {}",
                readers.join(", ")
            )?,
            Verdict::Waived => writeln!(w, "    waived{code} {}", readers.join(", "))?,
            Verdict::Warns => {
                writeln!(w, "    {WARNS}warns{WARNS:#}{code} {}", readers.join(", "))?
            }
        }
    }
    Ok(())
}

/// `imports reads` as text: per import and model, each column read and by whom.
pub fn reads_text(file: &ReadsFile, w: &mut dyn Write) -> io::Result<()> {
    for i in &file.imports {
        let short = i.snapshot.get(..12).unwrap_or(&i.snapshot);
        writeln!(
            w,
            "import `{}` (producer `{}`, snapshot {short})",
            i.import, i.producer
        )?;
        if i.models.is_empty() {
            writeln!(w, "  {DIM}no model reads it{DIM:#}")?;
        }
        for m in &i.models {
            let readers: Vec<&str> = m.readers.iter().map(String::as_str).collect();
            writeln!(w, "  {}: read by {}", m.model, readers.join(", "))?;
            let width = m.columns.iter().map(|c| c.column.len()).max().unwrap_or(0);
            for c in &m.columns {
                let readers: Vec<String> = c.readers.iter().map(describe_reader).collect();
                writeln!(w, "    {:width$}  {}", c.column, readers.join(", "))?;
            }
        }
    }
    Ok(())
}

/// `publish --consumers` as text: per consumer, each change and whom of it it reaches.
pub fn consumers_text(report: &ConsumersReport, w: &mut dyn Write) -> io::Result<()> {
    for c in &report.consumers {
        writeln!(
            w,
            "consumer `{}` ({}): {}",
            c.consumer,
            c.file.display(),
            summary(&c.changes)
        )?;
        impacts_text(&c.changes, w)?;
    }
    Ok(())
}

/// `imports update` as text: per import, its state and each change it accepts.
pub fn update_text(states: &[ImportState], mode: UpdateMode, w: &mut dyn Write) -> io::Result<()> {
    for state in states {
        let verdict = match mode.verdict(state) {
            "current" => "baseline is current",
            "behind" if matches!(mode, UpdateMode::Check) => "baseline is behind its snapshot",
            "would_accept" => "would accept",
            other => other,
        };
        writeln!(w, "{}: {verdict}", state.name)?;
        if state.first {
            writeln!(
                w,
                "  no baseline yet: the snapshot {} is the first, every published model as it is",
                state.snapshot
            )?;
        } else if state.behind {
            for change in &state.changes {
                writeln!(w, "  {}", change.describe())?;
            }
        }
        if let Some(pin) = &state.stale_pin {
            writeln!(w, "  pin {pin} is not the snapshot: update it in sqb.toml")?;
        }
    }
    Ok(())
}
