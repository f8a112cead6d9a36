//! The conversion itself: dbt's nodes planned as sqb models and sources, the compiled SQL
//! rewritten once every target is known, tests attached as audits, and every resource that
//! does not carry over listed. The importer's state is here; its phases are `models`,
//! `sources`, `references` (the SQL rewrite), `audits` (dbt's tests as audits), `others` (what is listed, not
//! carried over) and `metricflow` (the semantic layer).

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::Value;

use super::folders::{DbtProject, FolderDefaults};
use super::manifest::{self, Manifest, Node, SourceNode};
use super::{
    render, sql, types, Carried, ColumnOut, DbtError, Excluded, Imported, ModelOut, NotCarried,
    Report, SourceOut, MATERIALIZATIONS,
};
use crate::engine::Engine;
use crate::ident::quote_ident;

mod audits;
mod metricflow;
mod models;
mod others;
mod references;
mod sources;

/// Where each dbt resource that other models read goes in the sqb project.
#[derive(Debug, Clone)]
pub(super) enum Target {
    Model(usize),
    Source(usize),
}

pub(super) struct Importer<'m> {
    manifest: &'m Manifest,
    project: &'m DbtProject,
    engine: Engine,
    name: String,
    /// The database most models are built in: relations there are named without it.
    home_database: Option<String>,
    models: Vec<ModelOut>,
    sources: Vec<SourceOut>,
    /// dbt unique id → what it became.
    targets: HashMap<String, Target>,
    /// Model index → its dbt node.
    model_nodes: Vec<&'m Node>,
    /// The `path_defaults` written, by sqb folder.
    path_defaults: Vec<(String, &'m FolderDefaults)>,
    /// Schemas the models are built in, with how many models each.
    schemas: BTreeMap<String, usize>,
    entries: Vec<NotCarried>,
    audits: usize,
    /// `contracts/metrics/*.toml` from MetricFlow's metrics.
    metric_files: Vec<(String, String)>,
    /// Semantic items to leave out.
    excluded: &'m [Excluded],
}

impl<'m> Importer<'m> {
    pub(super) fn new(
        manifest: &'m Manifest,
        project: &'m DbtProject,
        engine: Engine,
        excluded: &'m [Excluded],
    ) -> Self {
        let name = manifest
            .project_name
            .clone()
            .or_else(|| project.name.clone())
            .unwrap_or_else(|| "imported".to_string());
        let mut databases: BTreeMap<&str, usize> = BTreeMap::new();
        for node in manifest.nodes.iter().filter(|n| n.resource_type == "model") {
            if let Some(db) = node.database.as_deref() {
                *databases.entry(db).or_default() += 1;
            }
        }
        let home_database = databases
            .iter()
            .max_by_key(|(db, n)| (**n, std::cmp::Reverse(**db)))
            .map(|(db, _)| db.to_string());
        Self {
            manifest,
            project,
            engine,
            name,
            home_database,
            models: Vec::new(),
            sources: Vec::new(),
            targets: HashMap::new(),
            model_nodes: Vec::new(),
            path_defaults: Vec::new(),
            schemas: BTreeMap::new(),
            entries: Vec::new(),
            audits: 0,
            metric_files: Vec::new(),
            excluded,
        }
    }

    /// Why the semantic item `[section.name]` of `file` is left out, if it is.
    pub(super) fn excluded(&self, file: &str, section: &str, name: &str) -> Option<String> {
        self.excluded
            .iter()
            .find(|e| e.file == file && e.section == section && e.name == name)
            .map(|e| e.why.clone())
    }

    pub(super) fn entry(
        &mut self,
        file: &str,
        node: &str,
        kind: &'static str,
        carried: Carried,
        what: String,
    ) {
        self.entries.push(NotCarried {
            file: file.to_string(),
            node: node.to_string(),
            kind,
            carried,
            what,
        });
    }

    pub(super) fn default_schema(&self) -> String {
        self.schemas
            .iter()
            .max_by_key(|(s, n)| (**n, std::cmp::Reverse((*s).clone())))
            .map(|(s, _)| s.clone())
            .unwrap_or_else(|| "main".to_string())
    }

    pub(super) fn finish(mut self) -> Imported {
        let mut files = Vec::new();
        files.push((
            "sqb.toml".to_string(),
            render::sqb_toml(&render::ProjectOut {
                name: &self.name,
                dbt_version: self.manifest.dbt_version.as_deref(),
                manifest_schema: self.manifest.version,
                engine: self.engine,
                database: self.home_database.as_deref(),
                schemas: self.schemas.keys().cloned().collect(),
                default_schema: self.default_schema(),
                path_defaults: &self.path_defaults,
            }),
        ));
        for model in &self.models {
            files.push((format!("{}.sql", model.path), model.sql.clone()));
            if let Some(sidecar) = render::sidecar(model) {
                files.push((format!("{}.toml", model.path), sidecar));
            }
        }
        let mut by_file: BTreeMap<&str, Vec<&SourceOut>> = BTreeMap::new();
        for source in &self.sources {
            by_file.entry(&source.file).or_default().push(source);
        }
        for (file, sources) in by_file {
            files.push((format!("sources/{file}.toml"), render::sources(&sources)));
        }
        files.append(&mut self.metric_files);
        files.sort();
        self.entries.sort();
        self.entries.dedup();
        Imported {
            files,
            report: Report {
                project: self.name.clone(),
                dbt_version: self.manifest.dbt_version.clone(),
                manifest_schema: self.manifest.version,
                engine: self.engine.as_str(),
                models: self.models.len(),
                sources: self.sources.len(),
                audits: self.audits,
                not_carried_over: self.entries,
            },
        }
    }
}

/// Macros (by name, any package) that query the warehouse while dbt compiles a model.
pub(super) const INTROSPECTIVE_MACROS: &[&str] = &[
    "run_query",
    "get_columns_in_relation",
    "get_columns_in_query",
    "star",
    "get_column_values",
    "get_filtered_columns_in_relation",
    "get_relations_by_pattern",
    "get_relations_by_prefix",
    "union_relations",
    "get_query_results_as_dict",
    "get_single_value",
];

/// What an `operation` node (`<project>-on-run-end-0`) is.
pub(super) fn operation_text(name: &str) -> String {
    let when = match name {
        n if n.contains("on-run-start") => "an on-run-start hook runs SQL before every dbt run",
        n if n.contains("on-run-end") => "an on-run-end hook runs SQL after every dbt run",
        _ => "an operation runs SQL when dbt is invoked",
    };
    format!("{when}; sqb builds nothing")
}

/// The sqb name of a model: its dbt name, with `_v<N>` for a version.
/// Takes `name` (case-insensitively, as both engines fold unquoted names) for dbt node `id`;
/// a name another node already took is a clash.
pub(super) fn claim(
    taken: &mut HashMap<String, String>,
    kind: &'static str,
    name: &str,
    id: &str,
) -> Result<(), DbtError> {
    match taken.insert(name.to_lowercase(), id.to_string()) {
        Some(first) => Err(DbtError::NameClash {
            kind,
            name: name.to_string(),
            first,
            second: id.to_string(),
        }),
        None => Ok(()),
    }
}

pub(super) fn model_name(node: &Node) -> String {
    match &node.version {
        Some(v) => format!("{}_v{}", node.name, version_text(v)),
        None => node.name.clone(),
    }
}

pub(super) fn version_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

pub(super) fn expression(constraint: &manifest::Constraint) -> String {
    constraint
        .expression
        .as_deref()
        .map(|e| format!(" `{e}`"))
        .unwrap_or_default()
}

pub(super) fn same_set(a: &[String], b: &[String]) -> bool {
    let a: HashSet<&String> = a.iter().collect();
    let b: HashSet<&String> = b.iter().collect();
    a == b
}

pub(super) fn string_array(items: &[String]) -> toml_edit::Value {
    toml_edit::Value::Array(items.iter().map(String::as_str).collect())
}

/// Compiled SQL without the blank lines dbt leaves where `config()` blocks were, ending in one
/// newline.
pub(super) fn tidy(sql: &str) -> String {
    let trimmed = sql.trim_start_matches(['\n', '\r']).trim_end();
    format!("{trimmed}\n")
}
