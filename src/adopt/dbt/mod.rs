//! `sqb import dbt`: a dbt project's `target/manifest.json` (and its `dbt_project.yml`) as a new
//! sqb project: models from the compiled SQL with every `ref()`/`source()` rewritten to the sqb
//! name, sidecars from the YAML, sources, folder configs as `path_defaults`, and a report of
//! everything that could not be carried over (docs/from-dbt.md).
//!
//! Pure: [`import`] takes the files' text and returns the files to write and the report.

mod convert;
mod folders;
mod manifest;
mod render;
mod sql;
pub mod types;

use serde::Serialize;

use crate::engine::Engine;
use convert::Importer;
use folders::DbtProject;
use manifest::Manifest;

pub use manifest::SUPPORTED;

/// Why a dbt project could not be imported. Nothing is written then.
#[derive(Debug, thiserror::Error)]
pub enum DbtError {
    #[error("the manifest is not JSON: {0}")]
    NotJson(String),
    #[error("the file is not a dbt manifest: {0}")]
    NotManifest(String),
    #[error("{}", unsupported(*.version, .dbt_version.as_deref(), *.newer))]
    UnsupportedVersion {
        version: u32,
        dbt_version: Option<String>,
        newer: bool,
    },
    #[error("the manifest has an entry sqb cannot read: {0}")]
    BadEntry(String),
    #[error("{message}")]
    ProjectYml { message: String },
    #[error("the manifest's adapter is `{0}`, which sqb does not support")]
    UnsupportedAdapter(String),
    #[error("{} {} no compiled SQL: {}", .0.len(), if .0.len() == 1 { "model has" } else { "models have" }, .0.join(", "))]
    NotCompiled(Vec<String>),
    #[error("two dbt resources would both be the sqb {kind} `{name}`: {first} and {second}")]
    NameClash {
        kind: &'static str,
        name: String,
        first: String,
        second: String,
    },
}

fn unsupported(version: u32, dbt: Option<&str>, newer: bool) -> String {
    let by = dbt
        .map(|v| format!(", written by dbt-core {v}"))
        .unwrap_or_default();
    let range = format!(
        "sqb reads v{} to v{} (dbt-core {} and later)",
        SUPPORTED[0].0,
        SUPPORTED[SUPPORTED.len() - 1].0,
        SUPPORTED[0].1
    );
    match newer {
        true => {
            format!("the manifest is schema v{version}{by}, newer than this sqb reads; {range}")
        }
        false => format!("the manifest is schema v{version}{by}; {range}"),
    }
}

impl DbtError {
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            DbtError::NotJson(_) | DbtError::NotManifest(_) => {
                Some("point --manifest at the target/manifest.json that `dbt compile` writes")
            }
            DbtError::UnsupportedVersion { newer: true, .. } => {
                Some("upgrade sqb, or compile with a dbt-core release that writes one of the versions named")
            }
            DbtError::UnsupportedVersion { newer: false, .. } => {
                Some("run `dbt compile` with dbt-core 1.5 or later")
            }
            DbtError::UnsupportedAdapter(_) => {
                Some("pass --engine postgres or --engine duckdb to read its SQL in that dialect")
            }
            DbtError::NotCompiled(_) => Some(
                "run `dbt compile` (not `dbt parse`): the manifest then holds each model's compiled SQL",
            ),
            _ => None,
        }
    }
}

/// What the importer reads.
pub struct Input<'a> {
    pub manifest: &'a str,
    pub dbt_project_yml: &'a str,
    /// The engine of the sqb project; default: from the manifest's adapter.
    pub engine: Option<Engine>,
    /// Semantic items to leave out, and why (what `sqb compile` said of them).
    pub excluded: &'a [Excluded],
}

/// A semantic item the import leaves out: `[section.name]` of the sidecar `file`, the metric
/// `name` (section `metric`) of `contracts/metrics/<name>.toml`, or the saved query `name`
/// (section `saved_query`) of `contracts/queries/<name>.toml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Excluded {
    pub file: String,
    pub section: String,
    pub name: String,
    pub why: String,
}

/// The new project: its files (relative paths, `/`-separated, sorted) and the report.
#[derive(Debug)]
pub struct Imported {
    pub files: Vec<(String, String)>,
    pub report: Report,
}

/// What was imported, and everything that was not (or only in part).
#[derive(Debug, Serialize)]
pub struct Report {
    pub project: String,
    pub dbt_version: Option<String>,
    pub manifest_schema: u32,
    pub engine: &'static str,
    pub models: usize,
    pub sources: usize,
    pub audits: usize,
    pub not_carried_over: Vec<NotCarried>,
}

/// One dbt resource (or part of one) that sqb does not carry over as dbt had it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct NotCarried {
    /// The file that declares it, relative to the dbt project.
    pub file: String,
    /// dbt's unique id of the node.
    pub node: String,
    pub kind: &'static str,
    /// `partly` (carried over in another form, said in `what`) or `not`.
    pub carried: Carried,
    pub what: String,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Carried {
    Partly,
    Not,
}

/// A model as it will be written.
#[derive(Debug)]
pub(crate) struct ModelOut {
    pub name: String,
    /// `models/...`, without the extension.
    pub path: String,
    pub sql: String,
    pub props: Vec<(&'static str, toml_edit::Value)>,
    pub columns: Vec<ColumnOut>,
    /// `[measures.*]`, `[dimensions.*]`, `[joins.*]` from MetricFlow: section, name, table.
    pub semantic: Vec<(&'static str, String, toml_edit::Table)>,
}

/// A source table as it will be written, into `sources/<file>.toml`.
#[derive(Debug)]
pub(crate) struct SourceOut {
    pub file: String,
    pub header: Option<String>,
    pub name: String,
    pub props: Vec<(&'static str, toml_edit::Value)>,
    pub columns: Vec<ColumnOut>,
}

#[derive(Debug, Default)]
pub(crate) struct ColumnOut {
    pub name: String,
    pub ty: Option<String>,
    pub not_null: bool,
    pub description: Option<String>,
    pub tags: Vec<String>,
    pub meta: Option<toml_edit::Value>,
    pub audits: Vec<toml_edit::Value>,
}

/// The materializations sqb knows by the same name.
const MATERIALIZATIONS: &[&str] = &["view", "table", "incremental"];

/// Imports the dbt project whose manifest and `dbt_project.yml` are given.
pub fn import(input: &Input<'_>) -> Result<Imported, DbtError> {
    let manifest = Manifest::parse(input.manifest)?;
    let project = DbtProject::parse(input.dbt_project_yml)?;
    let engine = match input.engine {
        Some(engine) => engine,
        None => engine_of(manifest.adapter_type.as_deref())?,
    };
    let mut importer = Importer::new(&manifest, &project, engine, input.excluded);
    importer.plan_models()?;
    importer.plan_sources()?;
    importer.rewrite_sql();
    importer.attach_tests();
    importer.carry_semantic_layer();
    importer.list_others();
    Ok(importer.finish())
}

fn engine_of(adapter: Option<&str>) -> Result<Engine, DbtError> {
    adapter
        .and_then(Engine::of_dbt_adapter)
        .ok_or_else(|| DbtError::UnsupportedAdapter(adapter.unwrap_or("(none)").to_string()))
}

/// An error `sqb compile` found in an imported project: the file (relative), the byte offset
/// it points at, and what it says.
pub struct Rejection<'a> {
    pub file: &'a str,
    pub offset: usize,
    pub said: String,
}

/// The semantic items of `files` (an import's output) that `rejections` point into: a metric
/// binding, or a `[measures|dimensions|joins.NAME]` table of a sidecar. A rejection elsewhere
/// (a model's SQL or columns) names no item: it is the importer's bug, and stays an error.
pub fn exclusions(files: &[(String, String)], rejections: &[Rejection<'_>]) -> Vec<Excluded> {
    let mut out: Vec<Excluded> = Vec::new();
    for r in rejections {
        let Some((_, text)) = files.iter().find(|(path, _)| path == r.file) else {
            continue;
        };
        let stem = |prefix: &str| {
            r.file
                .strip_prefix(prefix)
                .and_then(|n| n.strip_suffix(".toml"))
                .map(str::to_string)
        };
        let item = match (stem("contracts/metrics/"), stem("contracts/queries/")) {
            (Some(name), _) => Some(("metric".to_string(), name)),
            (_, Some(name)) => Some(("saved_query".to_string(), name)),
            _ if r.file.starts_with("models/") => semantic_table_at(text, r.offset),
            _ => None,
        };
        let Some((section, name)) = item else {
            continue;
        };
        if !out
            .iter()
            .any(|e| e.file == r.file && e.section == section && e.name == name)
        {
            out.push(Excluded {
                file: r.file.to_string(),
                section,
                name,
                why: format!("`sqb compile` rejects it: {}", r.said),
            });
        }
    }
    out
}

/// The `[measures|dimensions|joins.NAME]` table of a sidecar's text that holds `offset`.
fn semantic_table_at(text: &str, offset: usize) -> Option<(String, String)> {
    let offset = offset.min(text.len());
    let line_end = text[offset..].find('\n').map_or(text.len(), |n| offset + n);
    let before = text.get(..line_end)?;
    let header = before
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('['))?;
    let doc: toml_edit::DocumentMut = format!("{}\n", header.trim()).parse().ok()?;
    let (section, inner) = doc.iter().next()?;
    if !["measures", "dimensions", "joins"].contains(&section) {
        return None;
    }
    let (name, _) = inner.as_table()?.iter().next()?;
    Some((section.to_string(), name.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rejection_names_the_semantic_table_it_points_into() {
        let sidecar = "[[columns]]\nname = \"a\"\n\n[measures.total]\nagg = \"sum\"\ncolumn = \"a\"\n\n[joins.\"x.y\"]\nto = \"m\"\n";
        let files = vec![
            ("models/m.toml".to_string(), sidecar.to_string()),
            (
                "contracts/metrics/r.toml".to_string(),
                "metric = \"r\"\n".to_string(),
            ),
        ];
        let at = |file: &'static str, needle: &str| Rejection {
            file,
            offset: files
                .iter()
                .find(|(p, _)| p == file)
                .unwrap()
                .1
                .find(needle)
                .unwrap(),
            said: "E0 x".into(),
        };
        let found = exclusions(
            &files,
            &[
                at("models/m.toml", "sum"),
                at("models/m.toml", "total"),
                at("models/m.toml", "to ="),
                at("models/m.toml", "name"),
                at("contracts/metrics/r.toml", "r"),
            ],
        );
        let items: Vec<_> = found
            .iter()
            .map(|e| (e.section.as_str(), e.name.as_str()))
            .collect();
        assert_eq!(
            items,
            [("measures", "total"), ("joins", "x.y"), ("metric", "r")]
        );
    }
}
