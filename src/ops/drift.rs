//! The drift history's two ends: `contract diff --history` and `audit --history` append a run
//! (its findings and counts, the project's git commit when there is one), and `sqb drift
//! report` reads a period.

use std::path::Path;
use std::time::Duration;

use crate::drift::{FindingRecord, RunRecord};
use crate::error::UserError;
use crate::report::audit::{AuditReport, AuditResult, Status};
use crate::report::diff::{DiffReport, NamespaceInfo};
use crate::report::drift::{self, DriftReport};
use crate::warehouse::history;

/// `--history FILE`: where a run is appended.
pub struct HistoryOptions {
    pub path: std::path::PathBuf,
    /// How long to wait for another process that holds the file.
    pub timeout: Duration,
}

/// Appends `report`'s run to the history at `path`; returns the run's id.
pub fn record(
    path: &Path,
    report: &DiffReport,
    root: &Path,
    timeout: Duration,
) -> anyhow::Result<i64> {
    let findings = report
        .resources
        .iter()
        .flat_map(|r| {
            r.findings.iter().map(|f| FindingRecord {
                fingerprint: f.fingerprint.clone(),
                resource_type: r.resource_type.to_string(),
                resource_name: r.resource_name.clone(),
                relation: r.relation.clone(),
                kind: f.kind.as_str().to_string(),
                column: f.column.clone().or_else(|| f.physical_column.clone()),
                severity: f.severity.as_str().to_string(),
                message: f.message.clone(),
                audit: None,
            })
        })
        .collect();
    let s = &report.summary;
    let run = RunRecord {
        resources: s.resources,
        errors: s.errors,
        warnings: s.warnings,
        infos: s.infos,
        by_kind: s.by_kind.iter().map(|(k, n)| (k.to_string(), *n)).collect(),
        findings,
        ..stamped(crate::drift::DIFF, &report.target, &report.namespace, root)
    };
    Ok(history::append(path, &run, timeout)?)
}

/// Appends `report`'s audit run to the history at `path`: each audit that failed, warned or
/// could not run is a finding (`audit_failed`, `audit_not_run`) of its own fingerprint, so a
/// duplicate key is tracked from the night it appeared to the night it was fixed. Returns the
/// run's id.
pub fn record_audit(
    path: &Path,
    report: &AuditReport,
    root: &Path,
    timeout: Duration,
) -> anyhow::Result<i64> {
    let findings: Vec<FindingRecord> = report
        .results
        .iter()
        .filter(|r| r.status != Status::Pass)
        .map(audit_finding)
        .collect();
    let count = |severity: &str| findings.iter().filter(|f| f.severity == severity).count();
    let (errors, warnings) = (count("error"), count("warning"));
    let mut by_kind: Vec<(String, usize)> = Vec::new();
    for kind in [AUDIT_FAILED, AUDIT_NOT_RUN] {
        let n = findings.iter().filter(|f| f.kind == kind).count();
        if n > 0 {
            by_kind.push((kind.to_string(), n));
        }
    }
    let run = RunRecord {
        resources: report.summary.relations,
        errors,
        warnings,
        by_kind,
        findings,
        ..stamped(crate::drift::AUDIT, &report.target, &report.namespace, root)
    };
    Ok(history::append(path, &run, timeout)?)
}

/// The kind of an audit that found failing rows.
pub const AUDIT_FAILED: &str = "audit_failed";
/// The kind of an audit that could not run.
pub const AUDIT_NOT_RUN: &str = "audit_not_run";

/// One audit's result that did not pass, as a finding: failing and not running are two
/// findings, each with a fingerprint of its own.
fn audit_finding(r: &AuditResult) -> FindingRecord {
    let (kind, severity, message) = match (r.status, r.failing) {
        (Status::Error, _) => (
            AUDIT_NOT_RUN,
            "error",
            format!(
                "`{}` could not run: {}",
                r.audit,
                r.error.as_deref().unwrap_or("no reason given")
            ),
        ),
        (status, failing) => (
            AUDIT_FAILED,
            if status == Status::Warn {
                "warning"
            } else {
                "error"
            },
            format!(
                "`{}` failed: {}",
                r.audit,
                crate::report::audit::failures(&r.audit, failing.unwrap_or(0)),
            ),
        ),
    };
    FindingRecord {
        fingerprint: crate::report::sarif::digest(&[&r.fingerprint, kind]),
        resource_type: r.resource_type.to_string(),
        resource_name: r.resource.clone(),
        relation: r.relation.clone(),
        kind: kind.to_string(),
        column: r.column.clone(),
        severity: severity.to_string(),
        message,
        audit: Some(r.audit.clone()),
    }
}

/// A run of `command` on `target`'s `namespace`, made now by this sqb from the project at
/// `root`, with nothing counted yet.
fn stamped(
    command: &'static str,
    target: &str,
    namespace: &NamespaceInfo,
    root: &Path,
) -> RunRecord {
    RunRecord {
        command,
        run_at: crate::clock::now(),
        target: target.to_string(),
        engine: namespace.engine.to_string(),
        database: namespace.database.clone(),
        schema: namespace.schema.clone(),
        sqb_version: env!("CARGO_PKG_VERSION").to_string(),
        git_commit: git_commit(root),
        resources: 0,
        errors: 0,
        warnings: 0,
        infos: 0,
        by_kind: Vec::new(),
        findings: Vec::new(),
    }
}

/// The commit checked out at `root`, when it is in a git repository and git is installed.
fn git_commit(root: &Path) -> Option<String> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["rev-parse", "--verify", "--quiet", "HEAD"])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let commit = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && commit.len() >= 40).then_some(commit)
}

pub struct DriftOptions {
    pub target: Option<String>,
    /// `30d`, or a UTC date or time.
    pub since: Option<String>,
    pub timeout: Duration,
}

/// The report of the history at `path` over the period.
pub fn report(path: &Path, options: &DriftOptions) -> anyhow::Result<DriftReport> {
    let since = options.since.as_deref().map(since).transpose()?;
    let summary = history::summarize(
        path,
        options.target.as_deref(),
        since.as_deref(),
        options.timeout,
    )?;
    let mut targets: Vec<&str> = summary.runs.iter().map(|r| r.target.as_str()).collect();
    targets.sort_unstable();
    targets.dedup();
    let target = match (&options.target, targets.as_slice()) {
        (Some(t), _) => t.clone(),
        (None, []) => String::new(),
        (None, [one]) => one.to_string(),
        (None, many) => {
            return Err(UserError::new(format!(
                "{} holds runs of several targets: {}",
                path.display(),
                many.join(", ")
            ))
            .with_hint("pick one with --target NAME")
            .into())
        }
    };
    Ok(drift::build(target, since, &summary))
}

/// The period's start: a duration before now (`30d`, `1w`, `12h`), or a date or time as
/// given.
fn since(text: &str) -> Result<String, UserError> {
    let start = match crate::clock::duration_secs(text) {
        Some(secs) => crate::clock::now_secs().checked_sub(secs),
        None => crate::clock::parse(text),
    };
    start.map(crate::clock::timestamp).ok_or_else(|| {
        UserError::new(format!("--since {text:?} is neither a duration nor a date"))
            .with_hint("write it as 30d, 1w, 12h, 2026-11-01 or \"2026-11-01 02:00:00\" (UTC)")
    })
}
