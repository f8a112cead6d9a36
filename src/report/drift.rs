//! `sqb drift report`: what a drift history says over a period — each open finding with when it
//! was first and last seen and in how many runs, the findings resolved in the period and when,
//! the counts per day by severity and kind, and the resources with the most open drift — and
//! its printers (text, JSON, Markdown).

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};

use serde::Serialize;

/// The version of the JSON format; bumped only on incompatible changes.
pub const SCHEMA_VERSION: u32 = 1;

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

#[derive(Debug, Clone, PartialEq)]
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

/// A stored run, read back.
#[derive(Debug, Clone)]
pub struct StoredRun {
    pub run_id: i64,
    /// `YYYY-MM-DD HH:MM:SS`, UTC.
    pub run_at: String,
    pub target: String,
    pub findings: Vec<FindingRecord>,
}

#[derive(Debug, Serialize)]
pub struct DriftReport {
    pub schema_version: u32,
    pub target: String,
    /// The period's start as asked (`YYYY-MM-DD HH:MM:SS`, UTC), if any.
    pub since: Option<String>,
    pub runs: usize,
    pub first_run: Option<String>,
    pub last_run: Option<String>,
    /// The findings of the last run, longest open first.
    pub open: Vec<OpenFinding>,
    /// Findings seen in the period and absent from the last run, most recently resolved first.
    pub resolved: Vec<ResolvedDrift>,
    /// Per day (of the day's last run): findings by severity and by kind.
    pub days: Vec<Day>,
    /// The resources with the most open findings (at most ten).
    pub top_resources: Vec<TopResource>,
}

#[derive(Debug, Serialize)]
pub struct OpenFinding {
    #[serde(flatten)]
    pub finding: Finding,
    pub first_seen: String,
    pub last_seen: String,
    /// The runs of the period that had it.
    pub runs_open: usize,
}

#[derive(Debug, Serialize)]
pub struct ResolvedDrift {
    #[serde(flatten)]
    pub finding: Finding,
    pub first_seen: String,
    pub last_seen: String,
    /// The first run without it.
    pub resolved_at: String,
}

#[derive(Debug, Serialize, Clone)]
pub struct Finding {
    pub fingerprint: String,
    pub resource_type: String,
    pub resource_name: String,
    pub relation: String,
    pub kind: String,
    pub column: Option<String>,
    pub severity: String,
    pub message: String,
}

impl From<&FindingRecord> for Finding {
    fn from(f: &FindingRecord) -> Self {
        Finding {
            fingerprint: f.fingerprint.clone(),
            resource_type: f.resource_type.clone(),
            resource_name: f.resource_name.clone(),
            relation: f.relation.clone(),
            kind: f.kind.clone(),
            column: f.column.clone(),
            severity: f.severity.clone(),
            message: f.message.clone(),
        }
    }
}

impl Finding {
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

#[derive(Debug, Serialize)]
pub struct Day {
    pub date: String,
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
    pub by_kind: BTreeMap<String, usize>,
}

#[derive(Debug, Serialize)]
pub struct TopResource {
    pub resource_type: String,
    pub resource_name: String,
    pub relation: String,
    pub open: usize,
}

/// What one fingerprint did over the runs.
struct Track {
    finding: Finding,
    first: usize,
    last: usize,
    runs: usize,
}

/// The report of `runs` (one target's, oldest first).
pub fn build(target: String, since: Option<String>, runs: &[StoredRun]) -> DriftReport {
    let mut tracks: HashMap<&str, Track> = HashMap::new();
    let mut order: Vec<&str> = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        for f in &run.findings {
            let track = tracks.entry(&f.fingerprint).or_insert_with(|| {
                order.push(&f.fingerprint);
                Track {
                    finding: Finding::from(f),
                    first: i,
                    last: i,
                    runs: 0,
                }
            });
            // The latest wording and severity are the ones shown.
            track.finding = Finding::from(f);
            track.last = i;
            track.runs += 1;
        }
    }
    let last = runs.len().checked_sub(1);
    let mut open = Vec::new();
    let mut resolved = Vec::new();
    for print in order {
        let t = &tracks[print];
        let (first_seen, last_seen) = (runs[t.first].run_at.clone(), runs[t.last].run_at.clone());
        if Some(t.last) == last {
            open.push(OpenFinding {
                finding: t.finding.clone(),
                first_seen,
                last_seen,
                runs_open: t.runs,
            });
        } else {
            resolved.push(ResolvedDrift {
                finding: t.finding.clone(),
                first_seen,
                last_seen,
                resolved_at: runs[t.last + 1].run_at.clone(),
            });
        }
    }
    open.sort_by(|a, b| {
        (&a.first_seen, &a.finding.fingerprint).cmp(&(&b.first_seen, &b.finding.fingerprint))
    });
    resolved.sort_by(|a, b| {
        (&b.resolved_at, &a.finding.fingerprint).cmp(&(&a.resolved_at, &b.finding.fingerprint))
    });
    DriftReport {
        schema_version: SCHEMA_VERSION,
        target,
        since,
        runs: runs.len(),
        first_run: runs.first().map(|r| r.run_at.clone()),
        last_run: runs.last().map(|r| r.run_at.clone()),
        top_resources: top(&open),
        open,
        resolved,
        days: days(runs),
    }
}

/// Each day's last run, counted.
fn days(runs: &[StoredRun]) -> Vec<Day> {
    let mut last_of_day: BTreeMap<&str, &StoredRun> = BTreeMap::new();
    for run in runs {
        last_of_day.insert(run.run_at.get(..10).unwrap_or(&run.run_at), run);
    }
    last_of_day
        .into_iter()
        .map(|(date, run)| {
            let mut day = Day {
                date: date.to_string(),
                errors: 0,
                warnings: 0,
                infos: 0,
                by_kind: BTreeMap::new(),
            };
            for f in &run.findings {
                match f.severity.as_str() {
                    "error" => day.errors += 1,
                    "warning" => day.warnings += 1,
                    _ => day.infos += 1,
                }
                *day.by_kind.entry(f.kind.clone()).or_default() += 1;
            }
            day
        })
        .collect()
}

fn top(open: &[OpenFinding]) -> Vec<TopResource> {
    let mut counts: BTreeMap<(&str, &str), (usize, &str)> = BTreeMap::new();
    for o in open {
        let f = &o.finding;
        let entry = counts
            .entry((&f.resource_type, &f.resource_name))
            .or_insert((0, &f.relation));
        entry.0 += 1;
    }
    let mut top: Vec<TopResource> = counts
        .into_iter()
        .map(|((t, n), (count, relation))| TopResource {
            resource_type: t.to_string(),
            resource_name: n.to_string(),
            relation: relation.to_string(),
            open: count,
        })
        .collect();
    top.sort_by_key(|t| std::cmp::Reverse(t.open));
    top.truncate(10);
    top
}

pub fn emit_json(report: &DriftReport, w: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *w, report)?;
    writeln!(w)
}

fn period(report: &DriftReport) -> String {
    match (&report.first_run, &report.last_run) {
        (Some(first), Some(last)) => format!(
            "{} from {first} to {last} (UTC)",
            crate::report::count(report.runs, "run", "runs")
        ),
        _ => "no runs".to_string(),
    }
}

pub fn emit_text(report: &DriftReport, w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "drift of `{}`: {}", report.target, period(report))?;
    writeln!(
        w,
        "{} open, {} resolved in the period",
        report.open.len(),
        report.resolved.len()
    )?;
    if !report.open.is_empty() {
        writeln!(w, "\nopen (first seen, runs open):")?;
        for o in &report.open {
            writeln!(
                w,
                "  {}  {:>4}  {} [{}]",
                o.first_seen,
                o.runs_open,
                o.finding.describe(),
                o.finding.severity
            )?;
        }
    }
    if !report.resolved.is_empty() {
        writeln!(w, "\nresolved (when, first seen):")?;
        for r in &report.resolved {
            writeln!(
                w,
                "  {}  {}  {}",
                r.resolved_at,
                r.first_seen,
                r.finding.describe()
            )?;
        }
    }
    if !report.top_resources.is_empty() {
        writeln!(w, "\nmost open drift:")?;
        for t in &report.top_resources {
            writeln!(
                w,
                "  {:>4}  {} {} ({})",
                t.open, t.resource_type, t.resource_name, t.relation
            )?;
        }
    }
    if !report.days.is_empty() {
        writeln!(w, "\nper day (errors, warnings, notes):")?;
        for d in &report.days {
            writeln!(
                w,
                "  {}  {:>4} {:>4} {:>4}",
                d.date, d.errors, d.warnings, d.infos
            )?;
        }
    }
    Ok(())
}

/// GitHub's limit for a comment is 65,536 characters; the tables stop well before it, with a
/// count of what they leave out.
const MARKDOWN_ROWS: usize = 100;

pub fn emit_markdown(report: &DriftReport, w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "## sqb drift report: `{}`\n", report.target)?;
    writeln!(
        w,
        "{}: **{} open**, {} resolved in the period.\n",
        period(report),
        report.open.len(),
        report.resolved.len()
    )?;
    let cell = |t: &str| t.replace('|', "\\|").replace('\n', " ");
    if !report.open.is_empty() {
        writeln!(
            w,
            "### Open\n\n| finding | severity | first seen | runs open |\n|---|---|---|---|"
        )?;
        for o in report.open.iter().take(MARKDOWN_ROWS) {
            writeln!(
                w,
                "| {} | {} | {} | {} |",
                cell(&o.finding.describe()),
                o.finding.severity,
                o.first_seen,
                o.runs_open
            )?;
        }
        more(w, report.open.len())?;
    }
    if !report.resolved.is_empty() {
        writeln!(
            w,
            "### Resolved\n\n| finding | resolved | first seen |\n|---|---|---|"
        )?;
        for r in report.resolved.iter().take(MARKDOWN_ROWS) {
            writeln!(
                w,
                "| {} | {} | {} |",
                cell(&r.finding.describe()),
                r.resolved_at,
                r.first_seen
            )?;
        }
        more(w, report.resolved.len())?;
    }
    if !report.days.is_empty() {
        writeln!(
            w,
            "### Per day\n\n| day | errors | warnings | notes |\n|---|---|---|---|"
        )?;
        // The latest days, when there are more than fit.
        let skip = report.days.len().saturating_sub(MARKDOWN_ROWS);
        for d in report.days.iter().skip(skip) {
            writeln!(
                w,
                "| {} | {} | {} | {} |",
                d.date, d.errors, d.warnings, d.infos
            )?;
        }
        if skip > 0 {
            writeln!(
                w,
                "\n…and {skip} earlier days (`--format json` has them all).\n"
            )?;
        } else {
            writeln!(w)?;
        }
    }
    Ok(())
}

fn more(w: &mut dyn Write, total: usize) -> io::Result<()> {
    match total.checked_sub(MARKDOWN_ROWS) {
        Some(left) if left > 0 => {
            writeln!(w, "\n…and {left} more (`--format json` has them all).\n")
        }
        _ => writeln!(w),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(print: &str) -> FindingRecord {
        FindingRecord {
            fingerprint: print.into(),
            resource_type: "model".into(),
            resource_name: "orders".into(),
            relation: "w.a.orders".into(),
            kind: "type_mismatch".into(),
            column: Some(print.into()),
            severity: "error".into(),
            message: "m".into(),
        }
    }

    fn run(id: i64, at: &str, prints: &[&str]) -> StoredRun {
        StoredRun {
            run_id: id,
            run_at: at.into(),
            target: "prod".into(),
            findings: prints.iter().map(|p| finding(p)).collect(),
        }
    }

    #[test]
    fn open_resolved_and_days() {
        let runs = [
            run(1, "2026-11-01 02:00:00", &["a", "b"]),
            run(2, "2026-11-02 02:00:00", &["a", "b", "c"]),
            run(3, "2026-11-02 14:00:00", &["a", "c"]),
            run(4, "2026-11-03 02:00:00", &["a", "c"]),
        ];
        let report = build("prod".into(), None, &runs);
        let open: Vec<(&str, &str, usize)> = report
            .open
            .iter()
            .map(|o| {
                (
                    o.finding.fingerprint.as_str(),
                    o.first_seen.as_str(),
                    o.runs_open,
                )
            })
            .collect();
        assert_eq!(
            open,
            [
                ("a", "2026-11-01 02:00:00", 4),
                ("c", "2026-11-02 02:00:00", 3)
            ]
        );
        assert_eq!(report.resolved.len(), 1);
        assert_eq!(report.resolved[0].finding.fingerprint, "b");
        assert_eq!(report.resolved[0].resolved_at, "2026-11-02 14:00:00");
        let days: Vec<(&str, usize)> = report
            .days
            .iter()
            .map(|d| (d.date.as_str(), d.errors))
            .collect();
        assert_eq!(
            days,
            [("2026-11-01", 2), ("2026-11-02", 2), ("2026-11-03", 2)]
        );
        assert_eq!(report.top_resources[0].open, 2);
    }
}
