//! `sqb drift report`: what a drift history says over a period — each open finding with when it
//! was first and last seen and in how many runs, the findings resolved in the period and when,
//! the counts per day by severity and kind, and the resources with the most open drift. One
//! printer per format: `text`, `json`, `markdown`, `html`.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::drift::{DayCount, FindingRecord, Summary};

mod html;
mod json;
mod markdown;
mod text;

pub use html::emit_html;
pub use json::emit_json;
pub use markdown::emit_markdown;
pub use text::emit_text;

/// The version of the JSON format; bumped only on incompatible changes.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Serialize)]
pub struct DriftReport {
    pub schema_version: u32,
    pub target: String,
    /// The period's start as asked (`YYYY-MM-DD HH:MM:SS`, UTC), if any.
    pub since: Option<String>,
    pub runs: usize,
    /// The runs of each command (`contract diff`, `audit`).
    pub runs_by_command: BTreeMap<String, usize>,
    pub first_run: Option<String>,
    pub last_run: Option<String>,
    /// The findings of the last run of their command, longest open first.
    pub open: Vec<OpenFinding>,
    /// Findings seen in the period and absent from a later run of their command, most recently
    /// resolved first.
    pub resolved: Vec<ResolvedDrift>,
    /// Per day (of the day's last run of each command): findings by severity and by kind.
    pub days: Vec<Day>,
    /// The resources with the most open findings (at most ten).
    pub top_resources: Vec<TopResource>,
}

#[derive(Debug, Serialize)]
pub struct OpenFinding {
    #[serde(flatten)]
    pub finding: FindingRecord,
    /// The command whose runs found it.
    pub command: String,
    pub first_seen: String,
    pub last_seen: String,
    /// The runs of the period that had it.
    pub runs_open: usize,
}

#[derive(Debug, Serialize)]
pub struct ResolvedDrift {
    #[serde(flatten)]
    pub finding: FindingRecord,
    pub command: String,
    pub first_seen: String,
    pub last_seen: String,
    /// The first run without it.
    pub resolved_at: String,
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

/// The report of one target's period. A finding is open while the last run of its command has
/// it, and resolved by the next run of that command without it.
pub fn build(target: String, since: Option<String>, summary: &Summary) -> DriftReport {
    let runs = &summary.runs;
    let at = |i: usize| runs.get(i).map_or_else(String::new, |r| r.at.clone());
    let mut open = Vec::new();
    let mut resolved = Vec::new();
    for t in &summary.tracks {
        let finding = t.finding.clone();
        let (first_seen, last_seen) = (at(t.first), at(t.last));
        let next = (t.last + 1..runs.len()).find(|&i| runs[i].command == t.command);
        match next {
            None => open.push(OpenFinding {
                finding,
                command: t.command.clone(),
                first_seen,
                last_seen,
                runs_open: t.runs,
            }),
            Some(next) => resolved.push(ResolvedDrift {
                finding,
                command: t.command.clone(),
                first_seen,
                last_seen,
                resolved_at: at(next),
            }),
        }
    }
    let mut commands: BTreeMap<String, usize> = BTreeMap::new();
    for r in runs {
        *commands.entry(r.command.clone()).or_default() += 1;
    }
    // Longest open first, most recently resolved first; then by what they are about.
    open.sort_by(|a, b| (&a.first_seen, a.finding.key()).cmp(&(&b.first_seen, b.finding.key())));
    resolved
        .sort_by(|a, b| (&b.resolved_at, a.finding.key()).cmp(&(&a.resolved_at, b.finding.key())));
    DriftReport {
        schema_version: SCHEMA_VERSION,
        target,
        since,
        runs: runs.len(),
        runs_by_command: commands,
        first_run: runs.first().map(|r| r.at.clone()),
        last_run: runs.last().map(|r| r.at.clone()),
        top_resources: top(&open),
        open,
        resolved,
        days: days(&summary.days),
    }
}

fn days(counts: &[DayCount]) -> Vec<Day> {
    let mut days: BTreeMap<&str, Day> = BTreeMap::new();
    for c in counts {
        let day = days.entry(&c.date).or_insert_with(|| Day {
            date: c.date.clone(),
            errors: 0,
            warnings: 0,
            infos: 0,
            by_kind: BTreeMap::new(),
        });
        let (Some(severity), Some(kind)) = (&c.severity, &c.kind) else {
            continue;
        };
        match severity.as_str() {
            "error" => day.errors += c.count,
            "warning" => day.warnings += c.count,
            _ => day.infos += c.count,
        }
        *day.by_kind.entry(kind.clone()).or_default() += c.count;
    }
    days.into_values().collect()
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

/// `2 runs from … to … (UTC)`, `3 runs (2 contract diff, 1 audit) from …`, or `no runs`.
fn period(report: &DriftReport) -> String {
    let commands = match report.runs_by_command.len() {
        0 | 1 => String::new(),
        _ => {
            let each: Vec<String> = report
                .runs_by_command
                .iter()
                .rev()
                .map(|(command, n)| format!("{n} {command}"))
                .collect();
            format!(" ({})", each.join(", "))
        }
    };
    match (&report.first_run, &report.last_run) {
        (Some(first), Some(last)) => format!(
            "{}{commands} from {first} to {last} (UTC)",
            crate::report::count(report.runs, "run", "runs")
        ),
        _ => "no runs".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drift::{RunStamp, Track};

    /// A year of daily runs with a thousand findings still fits a GitHub comment (65,536
    /// characters), and says how much it leaves out.
    #[test]
    fn markdown_of_a_year_fits_a_comment() {
        let runs: Vec<RunStamp> = (0..365)
            .map(|d| RunStamp {
                at: crate::clock::timestamp(1_735_696_800 + d * 86_400),
                target: "prod".into(),
                command: crate::drift::DIFF.into(),
            })
            .collect();
        let tracks = (0..1_000)
            .map(|i| Track {
                finding: FindingRecord {
                    fingerprint: format!("{i:032x}"),
                    resource_type: "model".into(),
                    resource_name: format!("a_rather_long_model_name_{:04}", i / 25),
                    relation: "warehouse.analytics.x".into(),
                    kind: "undeclared_physical_column".into(),
                    column: Some(format!("column_with_a_long_name_{i:04}")),
                    severity: "error".into(),
                    message: "m".repeat(80),
                    audit: None,
                },
                command: crate::drift::DIFF.into(),
                first: i % 365,
                last: if i % 3 == 0 { 200 } else { 364 },
                runs: 100,
            })
            .collect();
        let days = runs
            .iter()
            .map(|run| DayCount {
                date: run.at[..10].to_string(),
                severity: Some("error".into()),
                kind: Some("undeclared_physical_column".into()),
                count: 1_000,
            })
            .collect();
        let summary = Summary { runs, tracks, days };
        let report = build("prod".into(), None, &summary);
        assert_eq!(report.open.len() + report.resolved.len(), 1_000);
        let mut out = Vec::new();
        emit_markdown(&report, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.len() < 65_536, "{} characters", text.len());
        assert!(text.contains("…and 566 more"), "{text}");
        assert!(text.contains("…and 265 earlier days"), "{text}");
        assert_eq!(
            report.resolved[0].resolved_at,
            report.days[201].date.clone() + " 02:00:00"
        );
    }
}
