//! SARIF 2.1.0 (the OASIS static-analysis interchange format GitHub code scanning reads): the
//! log's data model, the rules' help taken from the docs' own tables, and the emitter of `sqb
//! compile` (`contract diff`'s is `report::diff::sarif`).
//!
//! Paths are relative (to the working directory, as GitHub annotations are), never absolute:
//! a log names no file of the machine it ran on. Each result carries `partialFingerprints` so
//! that code scanning tracks it across runs and edits.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};
use std::sync::OnceLock;

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::contract::diff::FindingKind;
use crate::diagnostics::{Code, Diagnostic, JsonLocation};
use crate::project::Project;

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

#[derive(Serialize)]
pub(crate) struct Log {
    #[serde(rename = "$schema")]
    pub(crate) schema: &'static str,
    pub(crate) version: &'static str,
    pub(crate) runs: Vec<Run>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Run {
    pub(crate) tool: Tool,
    pub(crate) automation_details: AutomationDetails,
    pub(crate) column_kind: &'static str,
    pub(crate) results: Vec<SarifResult>,
}

#[derive(Serialize)]
pub(crate) struct Tool {
    pub(crate) driver: Driver,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Driver {
    pub(crate) name: &'static str,
    pub(crate) version: &'static str,
    pub(crate) semantic_version: &'static str,
    pub(crate) rules: Vec<Rule>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Rule {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) short_description: Message,
    pub(crate) full_description: Message,
    pub(crate) help: Help,
}

#[derive(Serialize)]
pub(crate) struct Help {
    pub(crate) text: String,
    pub(crate) markdown: String,
}

#[derive(Serialize)]
pub(crate) struct Message {
    pub(crate) text: String,
}

#[derive(Serialize)]
pub(crate) struct AutomationDetails {
    pub(crate) id: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SarifResult {
    pub(crate) rule_id: String,
    pub(crate) rule_index: usize,
    pub(crate) level: &'static str,
    pub(crate) message: Message,
    pub(crate) locations: Vec<Location>,
    pub(crate) partial_fingerprints: BTreeMap<&'static str, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) baseline_state: Option<&'static str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Location {
    pub(crate) physical_location: PhysicalLocation,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) logical_locations: Vec<LogicalLocation>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PhysicalLocation {
    pub(crate) artifact_location: ArtifactLocation,
    pub(crate) region: Region,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ArtifactLocation {
    pub(crate) uri: String,
    pub(crate) uri_base_id: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Region {
    pub(crate) start_line: usize,
    pub(crate) start_column: usize,
    pub(crate) end_line: usize,
    pub(crate) end_column: usize,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LogicalLocation {
    pub(crate) fully_qualified_name: String,
    pub(crate) kind: &'static str,
}

/// The `meaning` column of a docs table, by its first column (backticks dropped): `cells` is
/// how many columns come before the meaning, which may itself hold `|`.
/// A key's first row wins: a later table (contract-diff.md's severities) names the same keys.
fn help_table(doc: &str, cells: usize) -> HashMap<String, String> {
    let mut table = HashMap::new();
    let rows = doc.lines().filter_map(|line| {
        let row = line.strip_prefix("| ")?;
        let mut parts = row.splitn(cells + 1, " | ");
        let key = parts.next()?.trim_matches('`').to_string();
        let meaning = parts.nth(cells - 1)?.trim_end_matches(" |").to_string();
        Some((key, meaning))
    });
    for (key, meaning) in rows {
        table.entry(key).or_insert(meaning);
    }
    table
}

/// What a diagnostic code means, from docs/diagnostics.md.
fn code_help(code: Code) -> &'static str {
    static TABLE: OnceLock<HashMap<String, String>> = OnceLock::new();
    TABLE
        .get_or_init(|| help_table(include_str!("../../docs/diagnostics.md"), 3))
        .get(code.as_str())
        .map_or("", String::as_str)
}

/// What a finding kind means, from docs/contract-diff.md.
pub(crate) fn kind_help(kind: FindingKind) -> &'static str {
    static TABLE: OnceLock<HashMap<String, String>> = OnceLock::new();
    TABLE
        .get_or_init(|| help_table(include_str!("../../docs/contract-diff.md"), 1))
        .get(kind.as_str())
        .map_or("", String::as_str)
}

pub(crate) fn rule(id: &str, name: &str, meaning: &str, doc: &str) -> Rule {
    Rule {
        id: id.to_string(),
        name: name.to_string(),
        short_description: Message {
            text: name.replace(['-', '_'], " "),
        },
        full_description: Message {
            text: meaning.to_string(),
        },
        help: Help {
            text: format!("{meaning} (sqb's {doc})"),
            markdown: format!("{meaning}\n\nSee [{doc}]({doc}) in sqb's documentation."),
        },
    }
}

/// The first 32 hex digits of the SHA-256 of `parts` as a JSON array.
pub(crate) fn digest(parts: &[&str]) -> String {
    let text = serde_json::to_vec(parts).expect("strings serialize");
    Sha256::digest(&text)[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub(crate) fn location(prefix: &str, at: &JsonLocation, logical: Option<String>) -> Location {
    Location {
        physical_location: PhysicalLocation {
            artifact_location: ArtifactLocation {
                uri: format!("{prefix}{}", at.file),
                uri_base_id: "%SRCROOT%",
            },
            region: Region {
                start_line: at.line,
                start_column: at.column,
                end_line: at.end_line.max(at.line),
                end_column: match at.end_line > at.line {
                    true => at.end_column,
                    false => at.end_column.max(at.column),
                },
            },
        },
        logical_locations: logical
            .map(|name| LogicalLocation {
                fully_qualified_name: name,
                kind: "member",
            })
            .into_iter()
            .collect(),
    }
}

pub(crate) fn log(run: Run, w: &mut dyn Write) -> io::Result<()> {
    let log = Log {
        schema: SCHEMA,
        version: "2.1.0",
        runs: vec![run],
    };
    serde_json::to_writer_pretty(&mut *w, &log)?;
    writeln!(w)
}

pub(crate) fn driver(rules: Vec<Rule>) -> Tool {
    Tool {
        driver: Driver {
            name: "sqb",
            version: env!("CARGO_PKG_VERSION"),
            semantic_version: env!("CARGO_PKG_VERSION"),
            rules,
        },
    }
}

/// `sqb compile --format sarif`: a rule per diagnostic code, a result per diagnostic at its
/// primary label (else its first related one, else `sqb.toml`).
pub fn emit_compile(
    project: &Project,
    diags: &[Diagnostic],
    prefix: &str,
    w: &mut dyn Write,
) -> io::Result<()> {
    let rules = Code::ALL
        .iter()
        .map(|c| rule(c.as_str(), c.name(), code_help(*c), "docs/diagnostics.md"))
        .collect();
    let index: HashMap<Code, usize> = Code::ALL.iter().enumerate().map(|(i, c)| (*c, i)).collect();
    let results = diags
        .iter()
        .map(|d| {
            let label = d.primary.as_ref().or(d.related.first());
            let at = match label {
                Some(l) => JsonLocation::from_loc(&l.loc, &project.sources, None),
                None => JsonLocation {
                    file: "sqb.toml".to_string(),
                    line: 1,
                    column: 1,
                    end_line: 1,
                    end_column: 1,
                    label: None,
                },
            };
            let text = match &d.hint {
                Some(hint) => format!("{}\nhint: {hint}", d.message),
                None => d.message.clone(),
            };
            let print = digest(&["sqb.diagnostic/1", d.code.as_str(), &at.file, &d.message]);
            SarifResult {
                rule_id: d.code.as_str().to_string(),
                rule_index: index[&d.code],
                level: d.severity.word(),
                message: Message { text },
                locations: vec![location(prefix, &at, None)],
                partial_fingerprints: BTreeMap::from([("sqbDiagnostic/v1", print)]),
                baseline_state: None,
            }
        })
        .collect();
    log(
        Run {
            tool: driver(rules),
            automation_details: AutomationDetails {
                id: "sqb/compile/".to_string(),
            },
            column_kind: "unicodeCodePoints",
            results,
        },
        w,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_and_kind_has_its_docs_help() {
        for code in Code::ALL {
            assert!(!code_help(*code).is_empty(), "{}", code.as_str());
        }
        for kind in <FindingKind as strum::IntoEnumIterator>::iter() {
            assert!(!kind_help(kind).is_empty(), "{}", kind.as_str());
        }
        assert_eq!(
            code_help(Code::UnknownKey),
            "a key that this table does not take"
        );
        // The findings table, not the severity table after it.
        assert!(kind_help(FindingKind::InspectionUnavailable).starts_with("the relation exists"));
    }
}
