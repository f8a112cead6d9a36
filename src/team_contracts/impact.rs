//! The whole changelog between two snapshots, each change marked with the consumer models it
//! reaches: `sqb imports diff` (the consumer's own reads) and `sqb publish --consumers` (the
//! reads files consumers hand their producer) both print it.

use std::path::PathBuf;

use serde::Serialize;

use super::changes::{self, Change};
use super::reads::{ImportReads, Reading};
use super::snapshot::Snapshot;
use crate::diagnostics::Code;
use crate::engine::Engine;

/// One change from a baseline to a snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChangelogEntry {
    pub model: String,
    /// The column; none for a change of the whole model.
    pub column: Option<String>,
    /// `dropped`, `narrowed`, `widened`, `not_null`, `nullable`, `added`, `deprecated`,
    /// `model_removed`, `model_added`.
    pub change: &'static str,
    pub from: Option<String>,
    pub to: Option<String>,
    /// For `deprecated`: the date after which readers must not rely on it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deprecation_date: Option<String>,
}

impl ChangelogEntry {
    /// `fct_orders.amount: narrowed from NUMERIC(10,2) to NUMERIC(10,4)`.
    pub fn describe(&self) -> String {
        let subject = match &self.column {
            Some(c) => format!("{}.{c}", self.model),
            None => self.model.clone(),
        };
        let (from, to) = (
            self.from.as_deref().unwrap_or(""),
            self.to.as_deref().unwrap_or(""),
        );
        let what = match self.change {
            "dropped" => "dropped".to_string(),
            "narrowed" => format!("narrowed from {from} to {to}"),
            "widened" => format!("widened from {from} to {to}"),
            "not_null" => "now NOT NULL".to_string(),
            "nullable" => "now nullable".to_string(),
            "added" => "added".to_string(),
            "deprecated" => match &self.deprecation_date {
                Some(date) => format!("deprecated from {date}: {to}"),
                None => format!("deprecated: {to}"),
            },
            "model_removed" => "no longer published".to_string(),
            _ => "newly published".to_string(),
        };
        format!("{subject}: {what}")
    }

    /// The finding a reader of it gets in its compile on `today` (`YYYY-MM-DD`), if any.
    pub fn code(&self, today: &str) -> Option<Code> {
        Some(match self.change {
            "deprecated" if self.deprecation_date.as_deref().is_some_and(|d| d < today) => {
                Code::ImportedColumnPastDeprecation
            }
            "dropped" => Code::ImportedColumnDropped,
            "narrowed" => Code::ImportedTypeNarrowed,
            "widened" => Code::ImportedTypeWidened,
            "not_null" => Code::ImportedColumnNotNull,
            "nullable" => Code::ImportedColumnNullable,
            "deprecated" => Code::ImportedColumnDeprecated,
            "model_removed" => Code::ImportedModelRemoved,
            _ => return None,
        })
    }

    /// What a waiver of it names: `model.column`, or the model.
    pub fn subject(&self) -> String {
        match &self.column {
            Some(c) => format!("{}.{c}", self.model),
            None => self.model.clone(),
        }
    }
}

/// Every change from `baseline` to `snapshot`, in the baseline's order, then what is new.
pub fn changelog(baseline: &Snapshot, snapshot: &Snapshot, engine: Engine) -> Vec<ChangelogEntry> {
    let entry =
        |model: &str, column: Option<&str>, change, from: Option<&str>, to: Option<&str>| {
            ChangelogEntry {
                model: model.to_string(),
                column: column.map(str::to_string),
                change,
                from: from.map(str::to_string),
                to: to.map(str::to_string),
                deprecation_date: None,
            }
        };
    let mut out = Vec::new();
    for before in &baseline.models {
        let Some(now) = snapshot.model(&before.name) else {
            out.push(entry(&before.name, None, "model_removed", None, None));
            continue;
        };
        for column in &before.columns {
            let current = now.columns.iter().find(|c| c.name == column.name);
            let name = Some(column.name.as_str());
            for change in changes::column(column, current, engine) {
                out.push(match change {
                    Change::Dropped => entry(&before.name, name, "dropped", None, None),
                    Change::Narrowed { from, to } => {
                        entry(&before.name, name, "narrowed", Some(&from), Some(&to))
                    }
                    Change::Widened { from, to } => {
                        entry(&before.name, name, "widened", Some(&from), Some(&to))
                    }
                    Change::BecameNotNull => entry(&before.name, name, "not_null", None, None),
                    Change::BecameNullable => entry(&before.name, name, "nullable", None, None),
                });
            }
            if let Some(now) =
                current.filter(|c| c.deprecated.is_some() && column.deprecated.is_none())
            {
                out.push(ChangelogEntry {
                    deprecation_date: now.deprecation_date.clone(),
                    ..entry(
                        &before.name,
                        name,
                        "deprecated",
                        None,
                        now.deprecated.as_deref(),
                    )
                });
            }
        }
        for column in &now.columns {
            if !before.columns.iter().any(|c| c.name == column.name) {
                out.push(entry(&now.name, Some(&column.name), "added", None, None));
            }
        }
    }
    for now in &snapshot.models {
        if baseline.model(&now.name).is_none() {
            out.push(entry(&now.name, None, "model_added", None, None));
        }
    }
    out
}

/// How a change bears on the consumers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// A reader's compile fails on it.
    Breaks,
    /// A reader's compile fails on it, but a waiver accepts it for now.
    Waived,
    /// Readers are warned (a widened or deprecated column).
    Warns,
    /// No model reads what changed (or, for `nullable`, none relies on it being NOT NULL).
    NoReader,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Breaks => "breaks",
            Verdict::Waived => "waived",
            Verdict::Warns => "warns",
            Verdict::NoReader => "no reader",
        }
    }
}

/// One change, its readers, and what it does to them.
#[derive(Debug, Clone, Serialize)]
pub struct Impact {
    #[serde(flatten)]
    pub entry: ChangelogEntry,
    pub code: Option<&'static str>,
    pub verdict: Verdict,
    /// The consumer models it reaches (for a model removed, every one naming it).
    pub readers: Vec<Reading>,
}

/// Marks each change with its readers in `reads` on `today`; `waived` says whether a waiver
/// holds for a code on a subject (`model.column`).
pub fn assess(
    entries: Vec<ChangelogEntry>,
    reads: &ImportReads,
    today: &str,
    waived: &dyn Fn(Code, &str) -> bool,
) -> Vec<Impact> {
    entries
        .into_iter()
        .map(|entry| {
            let readers: Vec<Reading> = match (&entry.column, entry.change) {
                (None, "model_removed") => reads
                    .model_readers(&entry.model)
                    .into_iter()
                    .map(|m| Reading {
                        model: m.to_string(),
                        ..Reading::default()
                    })
                    .collect(),
                (Some(column), change) => reads
                    .readers(&entry.model, column)
                    .iter()
                    .filter(|r| change != "nullable" || r.relies_not_null)
                    .cloned()
                    .collect(),
                _ => Vec::new(),
            };
            let code = entry.code(today).filter(|_| !readers.is_empty());
            let verdict = match code {
                None => Verdict::NoReader,
                Some(c) if waived(c, &entry.subject()) => Verdict::Waived,
                Some(Code::ImportedTypeWidened | Code::ImportedColumnDeprecated) => Verdict::Warns,
                Some(_) => Verdict::Breaks,
            };
            Impact {
                code: code.map(Code::as_str),
                entry,
                verdict,
                readers,
            }
        })
        .collect()
}

/// A reader as a line shows it: `orders_report (as amount; in join_on, where)`.
pub fn describe_reader(r: &Reading) -> String {
    let list = |items: &std::collections::BTreeSet<String>| {
        items.iter().cloned().collect::<Vec<_>>().join(", ")
    };
    let mut how = Vec::new();
    if !r.outputs.is_empty() {
        how.push(format!("as {}", list(&r.outputs)));
    }
    if !r.uses.is_empty() {
        how.push(format!("in {}", list(&r.uses)));
    }
    match how.is_empty() {
        true => r.model.clone(),
        false => format!("{} ({})", r.model, how.join("; ")),
    }
}

/// One import's changelog, each change marked with what it does to the project's models.
pub struct ImportDiff {
    pub name: String,
    pub producer: String,
    pub baseline: String,
    pub snapshot: String,
    pub changes: Vec<Impact>,
    /// Where the import is declared: `sqb.toml`, line and column.
    pub at: (String, usize, usize),
}

impl ImportDiff {
    pub fn breaks(&self) -> bool {
        self.changes.iter().any(|c| c.verdict == Verdict::Breaks)
    }
}

/// What the change from the previous snapshot does to one consumer.
pub struct ConsumerImpact {
    /// The reads file, as given.
    pub file: PathBuf,
    pub consumer: String,
    /// The snapshot its reads were computed against.
    pub read_against: String,
    /// That is not the previous snapshot: the consumer has not vendored it, or not run
    /// `sqb imports reads` since.
    pub stale: bool,
    pub changes: Vec<Impact>,
}

impl ConsumerImpact {
    pub fn breaks(&self) -> bool {
        self.changes.iter().any(|c| c.verdict == Verdict::Breaks)
    }
}

/// What the change from the previous snapshot does to each consumer that reads the producer.
pub struct ConsumersReport {
    pub producer: String,
    /// The content hashes of the previous snapshot and of the one published now.
    pub before: String,
    pub after: String,
    pub consumers: Vec<ConsumerImpact>,
}

impl ConsumersReport {
    pub fn breaks(&self) -> bool {
        self.consumers.iter().any(ConsumerImpact::breaks)
    }
}

/// One import's state, and what updating it accepts.
pub struct ImportState {
    pub name: String,
    pub producer: String,
    /// The content hashes of the baseline (as it was) and of the snapshot.
    pub baseline: String,
    pub snapshot: String,
    /// Each change from the baseline to the snapshot (what an update accepts).
    pub changes: Vec<ChangelogEntry>,
    /// The baseline differs from the snapshot.
    pub behind: bool,
    /// A concrete pin that is not the snapshot's hash.
    pub stale_pin: Option<String>,
    /// The baseline was rewritten.
    pub written: bool,
    /// There was no baseline yet: the snapshot is accepted as the first one, and `baseline`
    /// is empty.
    pub first: bool,
}
