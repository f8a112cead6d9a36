//! Printers of `sqb imports diff` (text, JSON, Markdown, GitHub annotations) and `sqb imports
//! reads` (text; its JSON is the reads file itself), `sqb imports update`, and the consumers'
//! impact that `sqb publish --consumers` prints (in the formats of `imports diff`).

use std::io::{self, Write};

use anstyle::{AnsiColor, Style};
use serde::Serialize;

use super::diff::github::{data, property};
use super::markdown_cell as cell;
use crate::team_contracts::impact::{
    describe_reader, ChangelogEntry, ConsumersReport, Impact, ImportDiff, ImportState, Verdict,
};
use crate::team_contracts::reads::ReadsFile;
use crate::team_contracts::snapshot::Published;

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
    let suites: Vec<Suite> = diffs
        .iter()
        .map(|d| Suite {
            name: format!("import {}", d.name),
            class: format!("import.{}", d.name),
            at: Box::new(|_| Some(d.at.clone())),
            changes: &d.changes,
        })
        .collect();
    junit("sqb imports diff", &suites, out)
}

/// One test suite: its name, the class prefix of its cases, where each change points.
struct Suite<'a> {
    name: String,
    class: String,
    at: Locate<'a>,
    changes: &'a [Impact],
}

/// A file, line and column.
type At = (String, usize, usize);

/// Where a change points, if anywhere.
type Locate<'a> = Box<dyn Fn(&Impact) -> Option<At> + 'a>;

/// Changes as JUnit XML: a test case per change, a failure for each that breaks a model.
fn junit(title: &str, suites: &[Suite], out: &mut dyn Write) -> io::Result<()> {
    use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
    let mut w = quick_xml::Writer::new_with_indent(&mut *out, b' ', 2);
    let breaking = |changes: &[Impact]| {
        changes
            .iter()
            .filter(|c| c.verdict == Verdict::Breaks)
            .count()
    };
    let tests = suites.iter().map(|s| s.changes.len()).sum::<usize>();
    let failures = suites.iter().map(|s| breaking(s.changes)).sum::<usize>();
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    w.write_event(Event::Start(BytesStart::new("testsuites").with_attributes(
        [
            ("name", title),
            ("tests", tests.to_string().as_str()),
            ("failures", failures.to_string().as_str()),
        ],
    )))?;
    for suite in suites {
        let tests = suite.changes.len().to_string();
        let failures = breaking(suite.changes).to_string();
        w.write_event(Event::Start(BytesStart::new("testsuite").with_attributes(
            [
                ("name", suite.name.as_str()),
                ("tests", tests.as_str()),
                ("failures", failures.as_str()),
                ("errors", "0"),
            ],
        )))?;
        for c in suite.changes {
            let describe = c.entry.describe();
            let classname = format!("{}.{}", suite.class, c.entry.model);
            let at = (suite.at)(c);
            let mut case = BytesStart::new("testcase").with_attributes([
                ("name", describe.as_str()),
                ("classname", classname.as_str()),
            ]);
            if let Some((file, ..)) = &at {
                case.push_attribute(("file", file.as_str()));
            }
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
            let body = match &at {
                Some((file, line, col)) => format!("{message}\nat: {file}:{line}:{col}"),
                None => message.clone(),
            };
            w.write_event(Event::Text(BytesText::new(&body)))?;
            w.write_event(Event::End(BytesEnd::new("failure")))?;
            w.write_event(Event::End(BytesEnd::new("testcase")))?;
        }
        w.write_event(Event::End(BytesEnd::new("testsuite")))?;
    }
    w.write_event(Event::End(BytesEnd::new("testsuites")))?;
    out.write_all(b"\n")
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

#[derive(Serialize)]
struct ConsumersJson<'a> {
    schema_version: u32,
    /// `breaks` when a change breaks a consumer's model, else `clean`.
    verdict: &'static str,
    producer: &'a str,
    /// The previous snapshot's content hash, and the one published now.
    before: &'a str,
    after: &'a str,
    consumers: Vec<ConsumerJson<'a>>,
}

#[derive(Serialize)]
struct ConsumerJson<'a> {
    consumer: &'a str,
    /// The reads file, as found in the consumers' directory.
    file: String,
    /// The snapshot the consumer computed its reads against.
    read_against: &'a str,
    /// That is not `before`: what the consumer reads since is not in its file.
    stale: bool,
    verdict: &'static str,
    changes: &'a [Impact],
}

pub fn consumers_json(report: &ConsumersReport, w: &mut dyn Write) -> io::Result<()> {
    let verdict = |breaks: bool| match breaks {
        true => "breaks",
        false => "clean",
    };
    let json = ConsumersJson {
        schema_version: 1,
        verdict: verdict(report.breaks()),
        producer: &report.producer,
        before: &report.before,
        after: &report.after,
        consumers: report
            .consumers
            .iter()
            .map(|c| ConsumerJson {
                consumer: &c.consumer,
                file: c.file.to_string_lossy().replace('\\', "/"),
                read_against: &c.read_against,
                stale: c.stale,
                verdict: verdict(c.breaks()),
                changes: &c.changes,
            })
            .collect(),
    };
    serde_json::to_writer_pretty(&mut *w, &json)?;
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

/// `publish --consumers` as JUnit XML: a test suite per consumer, a failure per change that
/// breaks one of its models.
pub fn consumers_junit(
    report: &ConsumersReport,
    published: &Published,
    out: &mut dyn Write,
) -> io::Result<()> {
    let suites: Vec<Suite> = report
        .consumers
        .iter()
        .map(|c| Suite {
            name: format!("consumer {}", c.consumer),
            class: format!("consumer.{}", c.consumer),
            at: Box::new(|c: &Impact| {
                published
                    .at(&c.entry.model, c.entry.column.as_deref())
                    .cloned()
            }),
            changes: &c.changes,
        })
        .collect();
    junit("sqb publish --consumers", &suites, out)
}

/// What `imports update` did (or, with --check or --dry-run, would do).
#[derive(Clone, Copy)]
pub enum UpdateMode {
    Update,
    Check,
    DryRun,
}

impl UpdateMode {
    fn verdict(self, state: &ImportState) -> &'static str {
        match (state.behind, self, state.written) {
            (false, ..) => "current",
            (true, UpdateMode::Check, _) => "behind",
            (true, UpdateMode::DryRun, _) => "would_accept",
            (true, UpdateMode::Update, true) => "accepted",
            (true, UpdateMode::Update, false) => "behind",
        }
    }
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
        if state.behind {
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

#[derive(Serialize)]
struct UpdateJson<'a> {
    schema_version: u32,
    /// `update`, `check` or `dry_run`.
    mode: &'static str,
    imports: Vec<UpdateImportJson<'a>>,
}

#[derive(Serialize)]
struct UpdateImportJson<'a> {
    import: &'a str,
    producer: &'a str,
    /// `current`, `behind`, `would_accept` or `accepted`.
    verdict: &'static str,
    baseline: &'a str,
    snapshot: &'a str,
    /// The baseline file was rewritten to the snapshot.
    written: bool,
    /// A concrete pin that is not the snapshot's hash.
    stale_pin: Option<&'a str>,
    changes: &'a [ChangelogEntry],
}

pub fn update_json(states: &[ImportState], mode: UpdateMode, w: &mut dyn Write) -> io::Result<()> {
    let json = UpdateJson {
        schema_version: 1,
        mode: match mode {
            UpdateMode::Update => "update",
            UpdateMode::Check => "check",
            UpdateMode::DryRun => "dry_run",
        },
        imports: states
            .iter()
            .map(|s| UpdateImportJson {
                import: &s.name,
                producer: &s.producer,
                verdict: mode.verdict(s),
                baseline: &s.baseline,
                snapshot: &s.snapshot,
                written: s.written,
                stale_pin: s.stale_pin.as_deref(),
                changes: match s.behind {
                    true => &s.changes,
                    false => &[],
                },
            })
            .collect(),
    };
    serde_json::to_writer_pretty(&mut *w, &json)?;
    writeln!(w)
}
