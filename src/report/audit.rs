//! `sqb audit`'s output: a listing by relation in text, or the JSON document of
//! docs/audits.md.

use std::io::{self, Write};

use serde::Serialize;

use crate::audit::spec::AuditSeverity;
use crate::report::diff::NamespaceInfo;

/// Every audit's result, in the order the relations and their columns declare them.
#[derive(Debug, Serialize)]
pub struct AuditReport {
    pub schema_version: u32,
    pub target: String,
    /// Where the audits ran: the engine, database and schema. Never connection details.
    pub namespace: NamespaceInfo,
    pub summary: Summary,
    pub results: Vec<AuditResult>,
    /// Statements sent: one scan per relation, one sample per failed check.
    #[serde(skip)]
    pub queries: usize,
}

#[derive(Debug, Default, Serialize)]
pub struct Summary {
    pub audits: usize,
    pub pass: usize,
    pub fail: usize,
    pub warn: usize,
    pub error: usize,
    pub relations: usize,
    pub queries: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pass,
    /// An error-severity audit found failing rows.
    Fail,
    /// A warn-severity audit found failing rows.
    Warn,
    /// The audit could not run (its relation could not be read): never a pass.
    Error,
}

impl Status {
    pub fn failed(self) -> bool {
        matches!(self, Status::Fail | Status::Warn)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct AuditResult {
    pub resource_type: &'static str,
    pub resource: String,
    pub relation: String,
    /// `null` for an audit of the whole relation.
    pub column: Option<String>,
    pub audit: String,
    /// For an audit no `audits` list declares: the declaration that implies it
    /// (`nullable = false`, `its enum type`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub implied_by: Option<&'static str>,
    pub severity: AuditSeverity,
    pub status: Status,
    /// Failing rows (distinct values for `unique` and `accepted_values`, as dbt counts them);
    /// `null` when the audit could not run.
    pub failing: Option<u64>,
    /// Rows of the relation.
    pub rows: Option<u64>,
    /// Up to five failing rows (or values with their row counts), `pii` columns redacted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sample: Vec<Vec<(String, String)>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub file: String,
    pub line: usize,
    #[serde(rename = "column_number")]
    pub column_number: usize,
    /// Stable across runs and edits elsewhere in the file: the target, the relation, the
    /// column, and what the audit checks.
    pub fingerprint: String,
}

impl AuditReport {
    pub fn new(target: String, namespace: NamespaceInfo) -> Self {
        Self {
            schema_version: 1,
            target,
            namespace,
            summary: Summary::default(),
            results: Vec::new(),
            queries: 0,
        }
    }

    /// Counts the results into the summary.
    pub fn summarize(&mut self) {
        let mut s = Summary {
            audits: self.results.len(),
            queries: self.queries,
            ..Summary::default()
        };
        let mut relations: Vec<&str> = self.results.iter().map(|r| r.relation.as_str()).collect();
        relations.sort_unstable();
        relations.dedup();
        s.relations = relations.len();
        for r in &self.results {
            match r.status {
                Status::Pass => s.pass += 1,
                Status::Fail => s.fail += 1,
                Status::Warn => s.warn += 1,
                Status::Error => s.error += 1,
            }
        }
        self.summary = s;
    }
}

pub fn emit_json(report: &AuditReport, w: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *w, report)?;
    writeln!(w)
}

pub fn emit_text(report: &AuditReport, w: &mut dyn Write) -> io::Result<()> {
    body(report, w)?;
    if report.results.iter().any(|r| r.implied_by.is_some()) {
        writeln!(
            w,
            "* implied by the column's declaration (`nullable = false`, an enum type)"
        )?;
    }
    Ok(())
}

fn body(report: &AuditReport, w: &mut dyn Write) -> io::Result<()> {
    let column_width = report
        .results
        .iter()
        .map(|r| r.column.as_deref().unwrap_or("(relation)").chars().count())
        .max()
        .unwrap_or(0);
    let audit_width = report
        .results
        .iter()
        .map(|r| r.audit.len() + usize::from(r.implied_by.is_some()))
        .max()
        .unwrap_or(0);
    let mut last = None;
    for r in &report.results {
        if last != Some(&r.relation) {
            writeln!(w, "{} {} ({})", r.resource_type, r.resource, r.relation)?;
            last = Some(&r.relation);
        }
        let verdict = match (r.status, r.failing) {
            (Status::Pass, _) => "pass".to_string(),
            (Status::Error, _) => format!(
                "could not run: {}",
                r.error.as_deref().unwrap_or("unknown error")
            ),
            (status, Some(n)) => format!(
                "{}: {}",
                if status == Status::Fail {
                    "FAIL"
                } else {
                    "warn"
                },
                failures(&r.audit, n)
            ),
            (_, None) => "no count".to_string(),
        };
        let audit = match r.implied_by {
            Some(_) => format!("{}*", r.audit),
            None => r.audit.to_string(),
        };
        let column = r.column.as_deref().unwrap_or("(relation)");
        writeln!(
            w,
            "  {column:<column_width$}  {audit:<audit_width$}  {verdict}"
        )?;
        for row in &r.sample {
            let shown: Vec<String> = row.iter().map(|(k, v)| format!("{k}={v}")).collect();
            writeln!(w, "      {}", shown.join("  "))?;
        }
    }
    Ok(())
}

/// What an audit's failures count, said.
pub(crate) fn failures(audit: &str, n: u64) -> String {
    match audit {
        "unique" => crate::report::count(
            n as usize,
            "value held by several rows",
            "values held by several rows",
        ),
        "accepted_values" => {
            crate::report::count(n as usize, "value not accepted", "values not accepted")
        }
        "not_constant" => "the column holds one value only".to_string(),
        "at_least_one" => "the column holds no value".to_string(),
        "recency" => "its newest row is older than the interval".to_string(),
        "unique_combination_of_columns" => crate::report::count(
            n as usize,
            "combination held by several rows",
            "combinations held by several rows",
        ),
        _ => crate::report::count(n as usize, "failing row", "failing rows"),
    }
}
