//! `sqb contract generate`'s output: the proposed changes as unified diffs of each file, or a
//! JSON list of proposals.

use std::collections::BTreeMap;
use std::io::{self, Write};

use anstyle::{AnsiColor, Style};
use serde::Serialize;

use crate::contract::plan::{Plan, Proposal, Skipped};
use crate::edit::transaction::FileChange;

#[derive(Serialize)]
struct JsonOutput<'a> {
    schema_version: u32,
    target: &'a str,
    write: bool,
    overwrite: bool,
    summary: JsonSummary,
    proposals: &'a [Proposal],
    skipped: &'a [Skipped],
}

#[derive(Serialize)]
struct JsonSummary {
    proposals: usize,
    files_changed: usize,
    files_created: usize,
    skipped: usize,
    by_action: BTreeMap<&'static str, usize>,
}

/// What the JSON document says of the run besides the plan.
pub struct Run<'a> {
    pub target: &'a str,
    pub write: bool,
    pub overwrite: bool,
}

pub fn emit_json(
    run: &Run<'_>,
    plan: &Plan,
    changes: &[FileChange],
    w: &mut dyn Write,
) -> io::Result<()> {
    let mut by_action = BTreeMap::new();
    for p in &plan.proposals {
        *by_action.entry(p.action.as_str()).or_insert(0) += 1;
    }
    let created = created(changes);
    let output = JsonOutput {
        schema_version: 1,
        target: run.target,
        write: run.write,
        overwrite: run.overwrite,
        summary: JsonSummary {
            proposals: plan.proposals.len(),
            files_changed: changes.len() - created,
            files_created: created,
            skipped: plan.skipped.len(),
            by_action,
        },
        proposals: &plan.proposals,
        skipped: &plan.skipped,
    };
    serde_json::to_writer_pretty(&mut *w, &output)?;
    w.write_all(b"\n")
}

/// How many of `changes` create a file.
pub fn created(changes: &[FileChange]) -> usize {
    changes
        .iter()
        .filter(|c| c.expected_prior.is_none())
        .count()
}

const ADDED: Style = AnsiColor::Green.on_default();
const REMOVED: Style = AnsiColor::Red.on_default();
const HEADER: Style = Style::new().bold();

/// Every change as a unified diff of its file (`/dev/null` for a new one).
pub fn emit_preview(changes: &[FileChange], styled: bool, w: &mut dyn Write) -> io::Result<()> {
    // Each file's diff is rendered on its own, on every core; then written in order.
    for text in crate::parallel::map(changes, |c| preview(c, styled)) {
        w.write_all(text.as_bytes())?;
    }
    Ok(())
}

/// One file's unified diff, styled unless `styled` is false (a stdout that takes no colour: a
/// preview of thousands of new files would be styled only to be stripped again).
fn preview(change: &FileChange, styled: bool) -> String {
    use std::fmt::Write as _;
    let old = change.expected_prior.as_deref().unwrap_or("");
    let (from, to) = match change.expected_prior {
        Some(_) => (
            format!("a/{}", change.rel_path),
            format!("b/{}", change.rel_path),
        ),
        None => ("/dev/null".to_string(), format!("b/{}", change.rel_path)),
    };
    let diff = similar::TextDiff::from_lines(old, change.content.as_str());
    let mut out = String::new();
    for line in diff
        .unified_diff()
        .context_radius(3)
        .header(&from, &to)
        .to_string()
        .lines()
    {
        let style = match line.as_bytes().first() {
            Some(b'+') if !line.starts_with("+++") => ADDED,
            Some(b'-') if !line.starts_with("---") => REMOVED,
            Some(b'@') | Some(b'+') | Some(b'-') => HEADER,
            _ => Style::new(),
        };
        match styled {
            true => {
                let _ = writeln!(out, "{style}{line}{style:#}");
            }
            false => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}
