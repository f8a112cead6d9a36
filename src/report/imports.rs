//! Printers of `sqb imports diff` (text, JSON, Markdown, GitHub annotations) and `sqb imports
//! reads` (text; its JSON is the reads file itself), and of the consumers' impact that `sqb
//! publish --consumers` prints.

use std::io::{self, Write};

use anstyle::{AnsiColor, Style};
use serde::Serialize;

use super::diff::github::{data, property};
use crate::imports::impact::{describe_reader, Impact, ImportDiff, Verdict};
use crate::imports::reads::ReadsFile;

const BREAKS: Style = AnsiColor::Red.on_default().bold();
const WARNS: Style = AnsiColor::Yellow.on_default().bold();
const DIM: Style = Style::new().dimmed();

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

/// "no changes", "3 changes, 1 breaks a model".
pub fn summary(changes: &[Impact]) -> String {
    let breaking = changes
        .iter()
        .filter(|c| c.verdict == Verdict::Breaks)
        .count();
    let n = super::count(changes.len(), "change", "changes");
    match (changes.len(), breaking) {
        (0, _) => "no changes".to_string(),
        (_, 0) => format!("{n}, none breaks a model"),
        (_, 1) => format!("{n}, 1 breaks a model"),
        (_, b) => format!("{n}, {b} break a model"),
    }
}

#[derive(Serialize)]
struct DiffJson<'a> {
    schema_version: u32,
    /// `breaks` when a change breaks a model, else `clean`.
    verdict: &'static str,
    imports: Vec<ImportJson<'a>>,
}

#[derive(Serialize)]
struct ImportJson<'a> {
    import: &'a str,
    producer: &'a str,
    baseline: &'a str,
    snapshot: &'a str,
    changes: &'a [Impact],
}

pub fn diff_json(diffs: &[ImportDiff], w: &mut dyn Write) -> io::Result<()> {
    let report = DiffJson {
        schema_version: 1,
        verdict: match diffs.iter().any(ImportDiff::breaks) {
            true => "breaks",
            false => "clean",
        },
        imports: diffs
            .iter()
            .map(|d| ImportJson {
                import: &d.name,
                producer: &d.producer,
                baseline: &d.baseline,
                snapshot: &d.snapshot,
                changes: &d.changes,
            })
            .collect(),
    };
    serde_json::to_writer_pretty(&mut *w, &report)?;
    writeln!(w)
}

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

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

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
            super::count(n, "import", "imports")
        ),
    }
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

/// `imports diff` as JUnit XML: a test suite per import, a test case per change, a failure for
/// each change that breaks a model.
pub fn diff_junit(diffs: &[ImportDiff], out: &mut dyn Write) -> io::Result<()> {
    use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
    let mut w = quick_xml::Writer::new_with_indent(&mut *out, b' ', 2);
    let count = |f: &dyn Fn(&Impact) -> bool| {
        diffs
            .iter()
            .map(|d| d.changes.iter().filter(|c| f(c)).count())
            .sum::<usize>()
            .to_string()
    };
    let (tests, failures) = (count(&|_| true), count(&|c| c.verdict == Verdict::Breaks));
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    w.write_event(Event::Start(BytesStart::new("testsuites").with_attributes(
        [
            ("name", "sqb imports diff"),
            ("tests", tests.as_str()),
            ("failures", failures.as_str()),
        ],
    )))?;
    for d in diffs {
        let tests = d.changes.len().to_string();
        let failures = d
            .changes
            .iter()
            .filter(|c| c.verdict == Verdict::Breaks)
            .count()
            .to_string();
        let name = format!("import {}", d.name);
        w.write_event(Event::Start(BytesStart::new("testsuite").with_attributes(
            [
                ("name", name.as_str()),
                ("tests", tests.as_str()),
                ("failures", failures.as_str()),
                ("errors", "0"),
            ],
        )))?;
        for c in &d.changes {
            let describe = c.entry.describe();
            let classname = format!("import.{}.{}", d.name, c.entry.model);
            let case = BytesStart::new("testcase").with_attributes([
                ("name", describe.as_str()),
                ("classname", classname.as_str()),
                ("file", d.at.0.as_str()),
            ]);
            if c.verdict != Verdict::Breaks {
                w.write_event(Event::Empty(case))?;
                continue;
            }
            w.write_event(Event::Start(case))?;
            let readers: Vec<String> = c.readers.iter().map(describe_reader).collect();
            let message = format!("{describe}: breaks {}", readers.join(", "));
            w.write_event(Event::Start(BytesStart::new("failure").with_attributes([
                ("type", c.code.unwrap_or("")),
                ("message", message.as_str()),
            ])))?;
            let body = format!("{message}\nat: {}:{}:{}", d.at.0, d.at.1, d.at.2);
            w.write_event(Event::Text(BytesText::new(&body)))?;
            w.write_event(Event::End(BytesEnd::new("failure")))?;
            w.write_event(Event::End(BytesEnd::new("testcase")))?;
        }
        w.write_event(Event::End(BytesEnd::new("testsuite")))?;
    }
    w.write_event(Event::End(BytesEnd::new("testsuites")))?;
    out.write_all(b"\n")
}
