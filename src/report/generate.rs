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
    if let Some(text) = (!styled).then(|| new_file_diff(change)).flatten() {
        return text;
    }
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

/// A new file's unified diff, written out directly: every line added. The diff the `similar`
/// crate gives for it, without diffing against nothing (most of the preview's time for
/// thousands of new sidecars). `None` for a file that is not new, whose last line has no
/// newline (the diff says so in a line of its own), or with a carriage return (a line ending
/// to the diff crate, not to the preview's printing).
fn new_file_diff(change: &FileChange) -> Option<String> {
    let content = change.content.as_str();
    if change.expected_prior.is_some() || !content.ends_with('\n') || content.contains('\r') {
        return None;
    }
    let lines = content.lines().count();
    let mut out = String::with_capacity(content.len() + lines + change.rel_path.len() + 48);
    out.push_str("--- /dev/null\n+++ b/");
    out.push_str(&change.rel_path);
    match lines {
        1 => out.push_str("\n@@ -0,0 +1 @@\n"),
        n => out.push_str(&format!("\n@@ -0,0 +1,{n} @@\n")),
    }
    // As `preview` prints each line of the diff: its own line ending dropped, `\n` added.
    for line in content.lines() {
        out.push('+');
        out.push_str(line);
        out.push('\n');
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(prior: Option<&str>, content: &str) -> FileChange {
        FileChange {
            rel_path: "models/a b/m.toml".into(),
            expected_prior: prior.map(str::to_string),
            content: content.into(),
        }
    }

    /// What `preview` gives without the shortcut: the `similar` crate's diff.
    fn by_similar(change: &FileChange) -> String {
        let diff = similar::TextDiff::from_lines("", change.content.as_str());
        let text = diff
            .unified_diff()
            .context_radius(3)
            .header("/dev/null", &format!("b/{}", change.rel_path))
            .to_string();
        text.lines().map(|l| format!("{l}\n")).collect()
    }

    #[test]
    fn a_new_file_is_previewed_as_the_diff_crate_previews_it() {
        for content in [
            "# header\n\n[columns.id]\ntype = \"INTEGER\"\nnullable = false\n",
            "\n",
            "one\n\n\ntwo\n",
            "a\r\nb\n",
        ] {
            let c = change(None, content);
            assert_eq!(preview(&c, false), by_similar(&c), "{content:?}");
        }
    }

    #[test]
    fn only_a_new_file_ending_in_a_newline_is_written_out_directly() {
        assert!(new_file_diff(&change(None, "no newline")).is_none());
        assert!(new_file_diff(&change(Some("old\n"), "new\n")).is_none());
        assert!(new_file_diff(&change(None, "")).is_none());
        assert!(new_file_diff(&change(None, "a\r\nb\n")).is_none());
    }

    proptest::proptest! {
        #[test]
        fn any_new_file_is_previewed_as_the_diff_crate_previews_it(
            lines in proptest::collection::vec("[ -~\r]{0,20}|\\PC{0,8}", 1..12)
        ) {
            let c = change(None, &format!("{}\n", lines.join("\n")));
            proptest::prop_assert_eq!(preview(&c, false), by_similar(&c));
        }
    }
}
