//! Findings against a previous report (`contract diff --baseline FILE`): each finding's stable
//! fingerprint, whether it is new or known, and which of the baseline's findings are gone.
//!
//! A fingerprint names what a finding is about — engine, namespace, resource, column, kind —
//! and nothing that changes with edits (lines, messages, declared types, severity). The
//! baseline's own fingerprints are not trusted: they are computed again from its fields, so a
//! report written before fingerprints existed is a baseline too.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{DiffReport, FindingReport, SCHEMA_VERSION};
use crate::diagnostics::Severity;

/// What makes two findings the same finding.
pub struct Identity<'a> {
    pub engine: &'a str,
    pub database: &'a str,
    pub schema: &'a str,
    pub resource_type: &'a str,
    pub resource_name: &'a str,
    pub column: Option<&'a str>,
    pub physical_column: Option<&'a str>,
    pub kind: &'a str,
}

/// 32 hex digits: the first half of the SHA-256 of the identity as a JSON array (so that no
/// choice of names makes two identities' texts equal).
pub fn fingerprint(id: &Identity<'_>) -> String {
    let parts = (
        "sqb.finding/1",
        id.engine,
        id.database,
        id.schema,
        id.resource_type,
        id.resource_name,
        id.column,
        id.physical_column,
        id.kind,
    );
    let text = serde_json::to_vec(&parts).expect("strings serialize");
    let digest = Sha256::digest(&text);
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// A finding against the baseline.
#[derive(Debug, Serialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Mark {
    New,
    Known,
}

/// The comparison with the baseline, as the report carries it.
#[derive(Debug, Serialize, Default)]
pub struct Comparison {
    pub new: usize,
    pub known: usize,
    pub resolved: usize,
    /// New findings that are differences (errors and warnings): what `--fail-on new` fails on.
    pub new_differences: usize,
    /// The baseline's findings on resources this report checks that it no longer has.
    pub resolved_findings: Vec<ResolvedFinding>,
}

#[derive(Debug, Serialize, Deserialize, Clone)]
pub struct ResolvedFinding {
    pub resource_type: String,
    pub resource_name: String,
    pub relation: String,
    pub kind: String,
    pub column: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub physical_column: Option<String>,
    pub severity: Severity,
    pub message: String,
    pub fingerprint: String,
}

/// Why a file cannot be a baseline.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum BaselineError {
    #[error("not JSON: {0}")]
    NotJson(String),
    #[error("not a `sqb contract diff --format json` report: {0}")]
    NotAReport(String),
    #[error("written by a newer sqb (schema_version {0}; this sqb reads up to {SCHEMA_VERSION})")]
    TooNew(u32),
    #[error("it is a report of target `{baseline}`, and this diff reads `{current}`")]
    OtherTarget { baseline: String, current: String },
    #[error("it is a report of {baseline}, and this diff reads {current}")]
    OtherNamespace { baseline: String, current: String },
}

/// A previous report, as much of it as a baseline needs (fields added later are ignored).
#[derive(Debug, Deserialize)]
pub struct Baseline {
    pub target: String,
    namespace: BaselineNamespace,
    resources: Vec<BaselineResource>,
}

#[derive(Debug, Deserialize)]
struct BaselineNamespace {
    engine: String,
    database: String,
    schema: String,
}

#[derive(Debug, Deserialize)]
struct BaselineResource {
    resource_type: String,
    resource_name: String,
    relation: String,
    findings: Vec<BaselineFinding>,
}

#[derive(Debug, Deserialize)]
struct BaselineFinding {
    kind: String,
    column: Option<String>,
    #[serde(default)]
    physical_column: Option<String>,
    severity: Severity,
    message: String,
}

impl Baseline {
    /// Reads a JSON report; one from a newer sqb is refused before its shape is looked at.
    pub fn parse(bytes: &[u8]) -> Result<Self, BaselineError> {
        let value: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|e| BaselineError::NotJson(e.to_string()))?;
        let version = value
            .get("schema_version")
            .and_then(serde_json::Value::as_u64)
            .ok_or_else(|| BaselineError::NotAReport("it has no `schema_version`".into()))?;
        if version > u64::from(SCHEMA_VERSION) {
            return Err(BaselineError::TooNew(
                u32::try_from(version).unwrap_or(u32::MAX),
            ));
        }
        serde_json::from_value(value).map_err(|e| BaselineError::NotAReport(e.to_string()))
    }

    /// A baseline is a report of the same target as the diff (checked before the target is
    /// read, so that an unusable baseline costs no warehouse read).
    pub fn check_target(&self, current: &str) -> Result<(), BaselineError> {
        match self.target == current {
            true => Ok(()),
            false => Err(BaselineError::OtherTarget {
                baseline: self.target.clone(),
                current: current.to_string(),
            }),
        }
    }

    fn describe_namespace(&self) -> String {
        let n = &self.namespace;
        format!("{} {}.{}", n.engine, n.database, n.schema)
    }
}

impl DiffReport {
    /// Marks each finding new or known against `baseline`, and lists the baseline's findings
    /// that are gone from the resources this report checks (a resource outside this run's
    /// selection resolves nothing). The baseline's target was checked when it was read
    /// (`Baseline::check_target`); its namespace is checked here, now that the report's is known.
    pub fn compare(&mut self, baseline: &Baseline) -> Result<(), BaselineError> {
        let current = format!(
            "{} {}.{}",
            self.namespace.engine, self.namespace.database, self.namespace.schema
        );
        if baseline.describe_namespace() != current {
            return Err(BaselineError::OtherNamespace {
                baseline: baseline.describe_namespace(),
                current,
            });
        }
        let n = &baseline.namespace;
        let identity = |r: &BaselineResource, f: &BaselineFinding| {
            fingerprint(&Identity {
                engine: &n.engine,
                database: &n.database,
                schema: &n.schema,
                resource_type: &r.resource_type,
                resource_name: &r.resource_name,
                column: f.column.as_deref(),
                physical_column: f.physical_column.as_deref(),
                kind: &f.kind,
            })
        };
        let known: std::collections::HashSet<String> = baseline
            .resources
            .iter()
            .flat_map(|r| r.findings.iter().map(move |f| identity(r, f)))
            .collect();
        let mut comparison = Comparison::default();
        let mut now = std::collections::HashSet::new();
        let mut checked = std::collections::HashSet::new();
        for r in &mut self.resources {
            checked.insert((r.resource_type.to_string(), r.resource_name.clone()));
            for f in &mut r.findings {
                let mark = match known.contains(&f.fingerprint) {
                    true => Mark::Known,
                    false => Mark::New,
                };
                match mark {
                    Mark::Known => comparison.known += 1,
                    Mark::New if f.is_difference() => {
                        comparison.new += 1;
                        comparison.new_differences += 1;
                    }
                    Mark::New => comparison.new += 1,
                }
                f.baseline = Some(mark);
                now.insert(f.fingerprint.clone());
            }
        }
        for r in &baseline.resources {
            if !checked.contains(&(r.resource_type.clone(), r.resource_name.clone())) {
                continue;
            }
            for f in &r.findings {
                let print = identity(r, f);
                if now.contains(&print) {
                    continue;
                }
                comparison.resolved_findings.push(ResolvedFinding {
                    resource_type: r.resource_type.clone(),
                    resource_name: r.resource_name.clone(),
                    relation: r.relation.clone(),
                    kind: f.kind.clone(),
                    column: f.column.clone(),
                    physical_column: f.physical_column.clone(),
                    severity: f.severity,
                    message: f.message.clone(),
                    fingerprint: print,
                });
            }
        }
        comparison.resolved = comparison.resolved_findings.len();
        self.baseline = Some(comparison);
        Ok(())
    }

    /// "3 new, 47 known, 2 resolved", when compared with a baseline.
    pub fn baseline_summary(&self) -> Option<String> {
        self.baseline.as_ref().map(|c| {
            format!(
                "{} new, {} known, {} resolved since the baseline",
                c.new, c.known, c.resolved
            )
        })
    }
}

impl FindingReport {
    /// New since the baseline (false without one).
    pub fn is_new(&self) -> bool {
        self.baseline == Some(Mark::New)
    }
}

impl ResolvedFinding {
    /// `model orders (analytics.orders): type_mismatch on amount`.
    pub fn describe(&self) -> String {
        let column = match (&self.column, &self.physical_column) {
            (Some(c), Some(p)) if c != p => format!(" on {c} / {p}"),
            (Some(c), _) | (None, Some(c)) => format!(" on {c}"),
            (None, None) => String::new(),
        };
        format!(
            "{} {} ({}): {}{column}",
            self.resource_type, self.resource_name, self.relation, self.kind
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id<'a>(column: Option<&'a str>, kind: &'a str) -> Identity<'a> {
        Identity {
            engine: "duckdb",
            database: "w",
            schema: "analytics",
            resource_type: "model",
            resource_name: "orders",
            column,
            physical_column: None,
            kind,
        }
    }

    #[test]
    fn fingerprints_tell_identities_apart_and_stay_put() {
        let a = fingerprint(&id(Some("amount"), "type_mismatch"));
        assert_eq!(a.len(), 32);
        assert_eq!(a, fingerprint(&id(Some("amount"), "type_mismatch")));
        assert_ne!(a, fingerprint(&id(Some("amount"), "nullability_mismatch")));
        assert_ne!(a, fingerprint(&id(None, "type_mismatch")));
        // No separator to forge: "a,b" + "c" is not "a" + "b,c".
        let joined = Identity {
            resource_name: "orders,amount",
            ..id(None, "type_mismatch")
        };
        let split = Identity {
            resource_name: "orders",
            ..id(Some("amount"), "type_mismatch")
        };
        assert_ne!(fingerprint(&joined), fingerprint(&split));
    }

    #[test]
    fn refuses_what_is_not_a_baseline() {
        assert!(matches!(
            Baseline::parse(b"{nope"),
            Err(BaselineError::NotJson(_))
        ));
        assert!(matches!(
            Baseline::parse(b"{\"format\": \"sqb.snapshot\"}"),
            Err(BaselineError::NotAReport(_))
        ));
        assert_eq!(
            Baseline::parse(b"{\"schema_version\": 2, \"anything\": true}").unwrap_err(),
            BaselineError::TooNew(2)
        );
        assert!(matches!(
            Baseline::parse(b"{\"schema_version\": 1, \"target\": \"prod\"}"),
            Err(BaselineError::NotAReport(_))
        ));
    }
}
