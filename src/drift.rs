//! The drift history's records, as the history store (`warehouse::history`) writes and reads
//! them and `report::drift` summarizes them: one run with its findings, and a period's summary.
//! Plain data, shared by both without either re-exporting the other.

/// One run, as it is stored.
pub struct RunRecord {
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
}

/// A period of a history, summarized by the store (in SQL, where the rows are).
#[derive(Debug, Default)]
pub struct Summary {
    /// Each run's time (`YYYY-MM-DD HH:MM:SS`, UTC) and target, oldest first.
    pub runs: Vec<(String, String)>,
    /// Each fingerprint seen, with its latest fields.
    pub tracks: Vec<Track>,
    /// Per day (of its last run), the count of findings of each severity and kind.
    pub days: Vec<DayCount>,
}

/// What one fingerprint did over the runs: the first and last runs that had it (indexes into
/// `Summary::runs`) and how many did.
#[derive(Debug)]
pub struct Track {
    pub finding: FindingRecord,
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

    /// `model orders: type_mismatch on amount`.
    pub fn describe(&self) -> String {
        let column = self
            .column
            .as_ref()
            .map_or_else(String::new, |c| format!(" on {c}"));
        format!(
            "{} {}: {}{column}",
            self.resource_type, self.resource_name, self.kind
        )
    }
}
