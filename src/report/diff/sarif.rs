//! `sqb contract diff --format sarif`: a rule per finding kind, a result per finding at its
//! declaration, fingerprinted (the log's model is `report::sarif`).

use std::collections::BTreeMap;
use std::io::{self, Write};

use super::baseline::Mark;
use super::DiffReport;
use crate::contract::diff::FindingKind;
use crate::diagnostics::JsonLocation;
use crate::report::sarif::{
    driver, kind_help, location, log, rule, AutomationDetails, Message, Run, SarifResult,
};

/// `sqb contract diff --format sarif`: a rule per finding kind, a result per error or warning
/// (notes too, as `note`) at its declaration; with `--baseline`, each result's `baselineState`
/// is `new` or `unchanged`.
pub fn emit(report: &DiffReport, prefix: &str, w: &mut dyn Write) -> io::Result<()> {
    let kinds: Vec<FindingKind> = <FindingKind as strum::IntoEnumIterator>::iter().collect();
    let rules = kinds
        .iter()
        .map(|k| {
            rule(
                k.as_str(),
                k.as_str(),
                kind_help(*k),
                "docs/contract-diff.md",
            )
        })
        .collect();
    let mut results = Vec::new();
    for r in &report.resources {
        for f in &r.findings {
            let at = f.location.clone().unwrap_or(JsonLocation {
                file: r.file.clone(),
                line: 1,
                column: 1,
                end_line: 1,
                end_column: 1,
                label: None,
            });
            let logical = match &f.column {
                Some(c) => format!("{}.{c}", r.relation),
                None => r.relation.clone(),
            };
            results.push(SarifResult {
                rule_id: f.kind.as_str().to_string(),
                rule_index: kinds.iter().position(|k| *k == f.kind).unwrap_or(0),
                level: f.severity.word(),
                message: Message {
                    text: format!("{} {}: {}", r.resource_type, r.resource_name, f.message),
                },
                locations: vec![location(prefix, &at, Some(logical))],
                partial_fingerprints: BTreeMap::from([("sqbFinding/v1", f.fingerprint.clone())]),
                baseline_state: f.baseline.map(|m| match m {
                    Mark::New => "new",
                    Mark::Known => "unchanged",
                }),
            });
        }
    }
    log(
        Run {
            tool: driver(rules),
            automation_details: AutomationDetails {
                id: format!("sqb/contract-diff/{}/", report.target),
            },
            column_kind: "unicodeCodePoints",
            results,
        },
        w,
    )
}
