//! Printers of `sqb imports diff` (text, JSON, Markdown, GitHub annotations) and `sqb imports
//! reads` (text; its JSON is the reads file itself), `sqb imports update`, and the consumers'
//! impact that `sqb publish --consumers` prints (in the formats of `imports diff`). One file per
//! format: `text`, `json`, `markdown`, `github`, `junit`.

mod github;
mod json;
mod junit;
mod markdown;
mod text;

pub use github::{consumers_github, diff_github};
pub use json::{consumers_json, diff_json, update_json};
pub use junit::{consumers_junit, diff_junit};
pub use markdown::{consumers_markdown, diff_markdown, impacts_markdown};
pub use text::{consumers_text, diff_text, impacts_text, reads_text, update_text};

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

/// A file, line and column.
type At = (String, usize, usize);

/// Where a change points, if anywhere.
type Locate<'a> = Box<dyn Fn(&Impact) -> Option<At> + 'a>;

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
