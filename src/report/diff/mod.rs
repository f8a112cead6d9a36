//! The `contract diff` report: one data model (the JSON wire format, docs/contract-diff.md) and
//! one emitter per output format.

pub mod baseline;
pub mod github;
pub mod junit;
pub mod markdown;
pub mod sarif;
pub mod text;

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::Serialize;

use crate::contract::diff::{Finding, FindingKind};
use crate::diagnostics::{JsonLocation, Severity};
use crate::engine::Engine;
use crate::report::count;
use crate::source::SourceMap;

/// The version of the JSON format; bumped only on incompatible changes.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Serialize)]
pub struct DiffReport {
    pub schema_version: u32,
    pub target: String,
    pub namespace: NamespaceInfo,
    pub summary: Summary,
    /// With `--baseline`: how the findings compare with it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<baseline::Comparison>,
    pub resources: Vec<ResourceReport>,
    /// The project's errors when it does not compile: the resources whose declarations loaded
    /// were compared all the same.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub compile_errors: Vec<crate::diagnostics::JsonDiagnostic>,
    /// The same errors rendered with their snippets, for stderr.
    #[serde(skip)]
    pub compile_errors_text: Vec<String>,
}

/// The target's namespace. Never connection details.
#[derive(Debug, Serialize)]
pub struct NamespaceInfo {
    pub engine: Engine,
    pub database: String,
    pub schema: String,
}

#[derive(Debug, Serialize, Default)]
pub struct Summary {
    pub resources: usize,
    pub agreeing: usize,
    pub differing: usize,
    pub findings: usize,
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
    pub by_kind: BTreeMap<&'static str, usize>,
    /// False under `settings.compare_type_size = false`: lengths, precisions and scales were
    /// not compared.
    pub type_sizes_compared: bool,
}

#[derive(Debug, Serialize)]
pub struct ResourceReport {
    pub resource_type: &'static str,
    pub resource_name: String,
    pub relation: String,
    pub file: String,
    pub policy: &'static str,
    pub status: Status,
    pub findings: Vec<FindingReport>,
    /// `contract check`: which columns sqb's offline analysis proved, and which only the
    /// warehouse did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proof: Option<Proof>,
}

/// How a model's columns were proven by `contract check`.
#[derive(Debug, Serialize, Default)]
pub struct Proof {
    /// Columns whose type sqb's offline analysis proved, and the warehouse confirmed.
    pub offline: Vec<String>,
    /// Columns only the warehouse's description proved.
    pub warehouse_only: Vec<String>,
    /// Columns whose proven type the warehouse contradicts (each also an
    /// `analysis_disagreement` finding).
    pub disagreeing: Vec<String>,
}

#[derive(Debug, Serialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Agrees,
    Differs,
}

#[derive(Debug, Serialize)]
pub struct FindingReport {
    pub kind: FindingKind,
    pub column: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub physical_column: Option<String>,
    pub declared_type: Option<String>,
    pub physical_type: Option<String>,
    pub severity: Severity,
    pub message: String,
    pub location: Option<JsonLocation>,
    /// Stable across runs and edits: engine, namespace, resource, column and kind.
    pub fingerprint: String,
    /// With `--baseline`: `new` or `known`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<baseline::Mark>,
    /// For a dropped, retyped or renamed column: the semantic contracts that use it, each at
    /// its declaration, its `label` saying what it is (docs/semantic-contracts.md).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub semantic_uses: Vec<JsonLocation>,
    /// For `nullability_mismatch`: whether the declaration and the catalog say nullable (the
    /// text table shows it; JSON has it in the message).
    #[serde(skip)]
    pub nullable: Option<(bool, bool)>,
}

impl FindingReport {
    pub fn from_finding(f: Finding, sources: &SourceMap) -> Self {
        Self {
            kind: f.kind,
            column: f.column,
            physical_column: f.physical_column,
            declared_type: f.declared_type,
            physical_type: f.physical_type,
            severity: f.severity,
            message: f.message,
            location: f.loc.map(|l| JsonLocation::from_loc(&l, sources, None)),
            fingerprint: String::new(),
            baseline: None,
            semantic_uses: Vec::new(),
            nullable: f.nullable,
        }
    }

    /// Errors and warnings are differences; infos are not.
    pub fn is_difference(&self) -> bool {
        self.severity != Severity::Info
    }
}

impl ResourceReport {
    pub fn new(
        resource_type: &'static str,
        resource_name: String,
        relation: String,
        file: String,
        policy: &'static str,
        findings: Vec<FindingReport>,
    ) -> Self {
        let status = if findings.iter().any(FindingReport::is_difference) {
            Status::Differs
        } else {
            Status::Agrees
        };
        Self {
            resource_type,
            resource_name,
            relation,
            file,
            policy,
            status,
            findings,
            proof: None,
        }
    }
}

impl DiffReport {
    pub fn new(
        target: String,
        namespace: NamespaceInfo,
        mut resources: Vec<ResourceReport>,
    ) -> Self {
        let engine = namespace.engine.as_str();
        crate::parallel::for_each_mut(&mut resources, |r| {
            for f in &mut r.findings {
                f.fingerprint = baseline::fingerprint(&baseline::Identity {
                    engine,
                    database: &namespace.database,
                    schema: &namespace.schema,
                    resource_type: r.resource_type,
                    resource_name: &r.resource_name,
                    column: f.column.as_deref(),
                    physical_column: f.physical_column.as_deref(),
                    kind: f.kind.as_str(),
                });
            }
        });
        let mut summary = Summary {
            resources: resources.len(),
            type_sizes_compared: true,
            ..Summary::default()
        };
        // `contract check`'s own kinds are counted in its reports only (see `counts_checks`).
        for kind in <FindingKind as strum::IntoEnumIterator>::iter().filter(|k| !k.checks_sql()) {
            summary.by_kind.insert(kind.as_str(), 0);
        }
        for r in &resources {
            match r.status {
                Status::Agrees => summary.agreeing += 1,
                Status::Differs => summary.differing += 1,
            }
            for f in &r.findings {
                summary.findings += 1;
                *summary.by_kind.entry(f.kind.as_str()).or_default() += 1;
                match f.severity {
                    Severity::Error => summary.errors += 1,
                    Severity::Warning => summary.warnings += 1,
                    Severity::Info => summary.infos += 1,
                }
            }
        }
        Self {
            schema_version: SCHEMA_VERSION,
            target,
            namespace,
            summary,
            baseline: None,
            resources,
            compile_errors: Vec::new(),
            compile_errors_text: Vec::new(),
        }
    }

    /// The resources that differ, in report order.
    pub fn differing(&self) -> impl Iterator<Item = &ResourceReport> {
        self.resources
            .iter()
            .filter(|r| r.status == Status::Differs)
    }

    /// Counts `contract check`'s own finding kinds in `by_kind`, zero when there are none.
    pub fn counts_checks(&mut self) {
        for kind in <FindingKind as strum::IntoEnumIterator>::iter().filter(|k| k.checks_sql()) {
            self.summary.by_kind.entry(kind.as_str()).or_insert(0);
        }
    }

    pub fn has_differences(&self) -> bool {
        self.summary.differing > 0
    }

    /// The JSON wire format (docs/contract-diff.md), pretty-printed, with a final newline.
    pub fn emit_json(&self, w: &mut dyn Write) -> io::Result<()> {
        serde_json::to_writer_pretty(&mut *w, self)?;
        w.write_all(b"\n")
    }

    /// "dev (duckdb warehouse.dev)"
    pub fn describe_target(&self) -> String {
        format!(
            "{} ({} {}.{})",
            self.target, self.namespace.engine, self.namespace.database, self.namespace.schema
        )
    }

    /// The one-line verdict shared by the text and markdown renderers.
    pub fn verdict(&self) -> String {
        let s = &self.summary;
        let mut parts = Vec::new();
        if s.errors > 0 {
            parts.push(count(s.errors, "error", "errors"));
        }
        if s.warnings > 0 {
            parts.push(count(s.warnings, "warning", "warnings"));
        }
        if s.infos > 0 {
            parts.push(count(s.infos, "note", "notes"));
        }
        let mut detail = if parts.is_empty() {
            String::new()
        } else {
            format!(": {}", parts.join(", "))
        };
        if !s.type_sizes_compared {
            detail.push_str(" (type sizes not compared: settings.compare_type_size = false)");
        }
        if s.differing == 0 {
            format!(
                "{} agree with {}{detail}",
                count(s.resources, "resource", "resources"),
                self.describe_target()
            )
        } else {
            format!(
                "{} of {} differ from {}{detail}",
                s.differing,
                count(s.resources, "resource", "resources"),
                self.describe_target()
            )
        }
    }
}

/// The output formats of `contract diff`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffPrinter {
    Text,
    Json,
    Markdown,
    Junit,
    /// GitHub Actions annotations; file paths get the prefix (the project root relative to the
    /// repository root).
    Github {
        prefix: String,
    },
    /// SARIF 2.1.0; paths get the prefix as for GitHub.
    Sarif {
        prefix: String,
    },
}

/// Writes `report` in `format`.
pub fn emit(report: &DiffReport, format: &DiffPrinter, w: &mut dyn Write) -> io::Result<()> {
    match format {
        DiffPrinter::Text => text::emit(report, w),
        DiffPrinter::Json => report.emit_json(w),
        DiffPrinter::Markdown => markdown::emit(report, w),
        DiffPrinter::Junit => junit::emit(report, w),
        DiffPrinter::Github { prefix } => github::emit(report, prefix, w),
        DiffPrinter::Sarif { prefix } => sarif::emit(report, prefix, w),
    }
}
