//! The drift history's records, as the history store (`warehouse::history`) writes and reads
//! them and `report::drift` summarizes them: one run with its findings, and a period's summary.
//! Plain data, shared by both without either re-exporting the other.
//!
//! Two commands write runs: `contract diff` (the catalog against the declarations) and `sqb
//! audit` (the declared audits against the data). A finding is open while the last run of the
//! command that found it still has it; a run of the other command says nothing about it.

/// The command of a run of `contract diff --history`.
pub const DIFF: &str = "contract diff";
/// The command of a run of `audit --history`.
pub const AUDIT: &str = "audit";

/// One run, as it is stored.
pub struct RunRecord {
    /// [`DIFF`] or [`AUDIT`].
    pub command: &'static str,
    /// `YYYY-MM-DD HH:MM:SS[.ffffff]`, UTC.
    pub run_at: String,
    pub target: String,
    pub engine: String,
    pub database: String,
    pub schema: String,
    pub sqb_version: String,
    pub git_commit: Option<String>,
    pub resources: usize,
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
    pub by_kind: Vec<(String, usize)>,
    pub findings: Vec<FindingRecord>,
}

/// One finding of a run; in `drift report --format json`, flattened into each open or resolved
/// finding.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FindingRecord {
    pub fingerprint: String,
    pub resource_type: String,
    pub resource_name: String,
    pub relation: String,
    pub kind: String,
    pub column: Option<String>,
    pub severity: String,
    pub message: String,
    /// The audit that failed (or could not run), for an audit's finding.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audit: Option<String>,
}

/// One run of a period: its time (`YYYY-MM-DD HH:MM:SS`, UTC), target and command.
#[derive(Debug, Clone)]
pub struct RunStamp {
    pub at: String,
    pub target: String,
    pub command: String,
}

/// A period of a history, summarized by the store (in SQL, where the rows are).
#[derive(Debug, Default)]
pub struct Summary {
    /// The period's runs, oldest first.
    pub runs: Vec<RunStamp>,
    /// Each fingerprint seen, with its latest fields.
    pub tracks: Vec<Track>,
    /// Per day (of its last run of each command), the count of findings of each severity and
    /// kind.
    pub days: Vec<DayCount>,
}

/// What one fingerprint did over the runs: the first and last runs that had it (indexes into
/// `Summary::runs`), how many did, and the command whose runs found it.
#[derive(Debug)]
pub struct Track {
    pub finding: FindingRecord,
    pub command: String,
    pub first: usize,
    pub last: usize,
    pub runs: usize,
}

#[derive(Debug)]
pub struct DayCount {
    pub date: String,
    /// `None` for a day whose last run found nothing.
    pub severity: Option<String>,
    pub kind: Option<String>,
    pub count: usize,
}

impl FindingRecord {
    /// The order findings are listed in within a date: resource, kind, column.
    pub fn key(&self) -> (&str, &str, &str, Option<&str>, &str) {
        (
            &self.resource_type,
            &self.resource_name,
            &self.kind,
            self.column.as_deref(),
            &self.fingerprint,
        )
    }

    /// `model orders: type_mismatch on amount`, `model orders: audit_failed (unique) on id`.
    pub fn describe(&self) -> String {
        let column = self
            .column
            .as_ref()
            .map_or_else(String::new, |c| format!(" on {c}"));
        let audit = self
            .audit
            .as_ref()
            .map_or_else(String::new, |a| format!(" ({a})"));
        format!(
            "{} {}: {}{audit}{column}",
            self.resource_type, self.resource_name, self.kind
        )
    }
}
