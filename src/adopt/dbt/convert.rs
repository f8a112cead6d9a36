//! The conversion itself: dbt's nodes planned as sqb models and sources, the compiled SQL
//! rewritten once every target is known, tests attached as audits, and every resource that
//! does not carry over listed.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::Value;

use super::folders::{DbtProject, FolderDefaults};
use super::manifest::{self, Manifest, Node, SourceNode};
use super::{
    render, sql, types, Carried, ColumnOut, DbtError, Imported, ModelOut, NotCarried, Report,
    SourceOut, MATERIALIZATIONS,
};
use crate::engine::Engine;
use crate::ident::quote_ident;

mod metricflow;

/// Where each dbt resource that other models read goes in the sqb project.
#[derive(Debug, Clone)]
enum Target {
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
}

impl<'m> Importer<'m> {
    pub(super) fn new(manifest: &'m Manifest, project: &'m DbtProject, engine: Engine) -> Self {
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
        }
    }

    fn entry(
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

    /// The models to write, with their paths and sidecar keys (SQL comes after every target
    /// is known).
    pub(super) fn plan_models(&mut self) -> Result<(), DbtError> {
        let mut missing = Vec::new();
        let mut names: HashMap<String, String> = HashMap::new();
        let nodes: Vec<&Node> = self
            .manifest
            .nodes
            .iter()
            .filter(|n| n.resource_type == "model")
            .collect();
        for node in nodes {
            let file = node.original_file_path.clone();
            if node.language.as_deref() == Some("python") {
                self.relation_as_source(node, "python_models");
                self.entry(&file, &node.unique_id, "python model", Carried::Partly, format!(
                    "a Python model has no SQL for sqb to read: its relation is declared as the source `{}` (sources/python_models.toml)",
                    self.last_source_name()
                ));
                continue;
            }
            if node.config.materialized.as_deref() == Some("ephemeral") {
                self.entry(&file, &node.unique_id, "ephemeral model", Carried::Partly,
                    "dbt inlines an ephemeral model into the compiled SQL of the models that read it (as a `__dbt__cte__` CTE), and so does the import: it is not a model of its own".into());
                continue;
            }
            if node.compiled_code.is_none() {
                missing.push(node.unique_id.clone());
                continue;
            }
            let name = model_name(node);
            if let Some(first) = names.insert(name.to_lowercase(), node.unique_id.clone()) {
                return Err(DbtError::NameClash {
                    kind: "model",
                    name,
                    first,
                    second: node.unique_id.clone(),
                });
            }
            self.plan_model(node, name);
        }
        if !missing.is_empty() {
            return Err(DbtError::NotCompiled(missing));
        }
        Ok(())
    }

    fn plan_model(&mut self, node: &'m Node, name: String) {
        let (rel, folder_rel) = self.model_path(node, &name);
        let defaults = self
            .project
            .defaults_for(&folder_rel)
            .filter(|_| node.package_name == self.name);
        if let Some(d) = defaults {
            let folder = match d.folder.as_str() {
                "" => "models".to_string(),
                f => format!("models/{f}"),
            };
            if !self.path_defaults.iter().any(|(f, _)| *f == folder) {
                self.path_defaults.push((folder, d));
            }
        }
        if let Some(schema) = &node.schema {
            *self.schemas.entry(schema.clone()).or_default() += 1;
        }
        let props = self.model_props(node, &name, defaults);
        let columns = self.columns(&node.columns, node);
        self.model_level_constraints(node);
        if let Some(version) = &node.version {
            let v = version_text(version);
            self.entry(&self.yaml_file(node), &node.unique_id, "model version", Carried::Partly, format!(
                "version {v} of `{}` is the model `{name}` of its own; sqb has no model versions", node.name
            ));
        }
        self.compile_time_reads(node);
        for (hook, list) in [
            ("pre-hook", &node.config.pre_hook),
            ("post-hook", &node.config.post_hook),
        ] {
            if !list.is_empty() {
                self.entry(
                    &node.original_file_path,
                    &node.unique_id,
                    "hook",
                    Carried::Not,
                    format!(
                        "{} {hook} {} SQL at build time; sqb builds nothing",
                        list.len(),
                        if list.len() == 1 { "runs" } else { "run" }
                    ),
                );
            }
        }
        self.targets
            .insert(node.unique_id.clone(), Target::Model(self.models.len()));
        self.model_nodes.push(node);
        self.models.push(ModelOut {
            name,
            path: rel,
            sql: String::new(),
            props,
            columns,
            semantic: Vec::new(),
        });
    }

    /// Macros that read the warehouse while dbt compiles (`dbt_utils.star` lists a relation's
    /// columns): the compiled SQL holds what they found then, and the import that SQL.
    fn compile_time_reads(&mut self, node: &Node) {
        for id in &node.depends_on.macros {
            let name = id.rsplit('.').next().unwrap_or(id);
            if !INTROSPECTIVE_MACROS.contains(&name) {
                continue;
            }
            let what = format!(
                "its SQL was compiled with `{}`, which reads the warehouse while dbt compiles: the import has the SQL of that moment; run `dbt compile` and import again after the relations it read change",
                id.strip_prefix("macro.").unwrap_or(id)
            );
            self.entry(
                &node.original_file_path,
                &node.unique_id,
                "compile-time macro",
                Carried::Partly,
                what,
            );
        }
    }

    /// The model's file path in the sqb project (`models/...` without extension), and its
    /// path relative to its dbt model path (for folder configs).
    fn model_path(&self, node: &Node, name: &str) -> (String, String) {
        let file = node.original_file_path.replace('\\', "/");
        let rel = self
            .project
            .model_paths
            .iter()
            .find_map(|p| file.strip_prefix(&format!("{p}/")))
            .unwrap_or(&file)
            .to_string();
        let dir = rel.rsplit_once('/').map(|(d, _)| d);
        let base = match (node.package_name == self.name, dir) {
            (true, Some(d)) => format!("models/{d}"),
            (true, None) => "models".to_string(),
            (false, Some(d)) => format!("models/packages/{}/{d}", node.package_name),
            (false, None) => format!("models/packages/{}", node.package_name),
        };
        (format!("{base}/{name}"), rel)
    }

    fn model_props(
        &mut self,
        node: &Node,
        name: &str,
        defaults: Option<&FolderDefaults>,
    ) -> Vec<(&'static str, toml_edit::Value)> {
        let mut props: Vec<(&'static str, toml_edit::Value)> = Vec::new();
        let config = &node.config;
        let materialized = config.materialized.as_deref().unwrap_or("view");
        let sqb_materialized = if MATERIALIZATIONS.contains(&materialized) {
            materialized
        } else {
            self.entry(
                &node.original_file_path,
                &node.unique_id,
                "materialization",
                Carried::Partly,
                format!(
                    "dbt materializes it as `{materialized}`, which sqb knows only as `custom`"
                ),
            );
            "custom"
        };
        let default_materialized = defaults.and_then(|d| d.materialized.as_deref()).map(|m| {
            if MATERIALIZATIONS.contains(&m) {
                m
            } else {
                "custom"
            }
        });
        if default_materialized.unwrap_or("view") != sqb_materialized {
            props.push(("materialized", sqb_materialized.into()));
        }
        let enforced = config.contract.as_ref().is_some_and(|c| c.enforced);
        let folder_contract = defaults.and_then(|d| d.contract);
        match (enforced, folder_contract) {
            (true, Some(true)) | (false, None) => {}
            (true, _) => props.push(("contract", "enforced".into())),
            (false, Some(true)) => props.push(("contract", "none".into())),
            (false, Some(false)) => {}
        }
        if !node.description.is_empty() {
            props.push(("description", node.description.as_str().into()));
        }
        let tags = config.tags.clone().unwrap_or_else(|| node.tags.clone());
        let folder_tags = defaults.map(|d| d.tags.clone()).unwrap_or_default();
        if !same_set(&tags, &folder_tags) {
            props.push(("tags", string_array(&tags)));
        }
        if let Some(alias) = &node.alias {
            if alias != name {
                props.push(("alias", alias.as_str().into()));
            }
        }
        if let Some(key) = config.unique_key.as_ref().and_then(render::json_to_toml) {
            props.push(("unique_key", key));
        }
        if sqb_materialized == "incremental" {
            let change = config.on_schema_change.as_deref().unwrap_or("ignore");
            props.push(("on_schema_change", change.into()));
        }
        let access = config.access.as_deref().unwrap_or("protected");
        let folder_access = defaults
            .and_then(|d| d.access.as_deref())
            .unwrap_or("protected");
        if access != folder_access && ["public", "protected", "private"].contains(&access) {
            props.push(("access", access.into()));
        }
        if let Some(meta) = render::meta_to_toml(&config.meta) {
            props.push(("meta", meta));
        }
        props
    }

    /// Declared columns, with constraints folded in (`not_null`, `primary_key`) and the others
    /// reported.
    fn columns(
        &mut self,
        columns: &[(String, manifest::ColumnInfo)],
        node: &Node,
    ) -> Vec<ColumnOut> {
        let alias_types = node
            .config
            .contract
            .as_ref()
            .and_then(|c| c.alias_types)
            .unwrap_or(true);
        let mut out = Vec::new();
        for (name, info) in columns {
            let mut column = ColumnOut {
                name: name.clone(),
                ty: info
                    .data_type
                    .as_deref()
                    .filter(|t| !t.trim().is_empty())
                    .map(|t| types::translate(t, alias_types)),
                description: Some(info.description.clone()).filter(|d| !d.is_empty()),
                tags: info.tags.clone(),
                meta: render::meta_to_toml(&info.meta),
                ..ColumnOut::default()
            };
            for constraint in &info.constraints {
                match constraint.kind.as_str() {
                    "not_null" => column.not_null = true,
                    "primary_key" => {
                        column.not_null = true;
                        let what = format!("column `{name}`: its primary_key constraint is kept as `nullable = false`; uniqueness is a `unique` audit in sqb, not a constraint");
                        self.entry(
                            &self.yaml_file(node),
                            &node.unique_id,
                            "constraint",
                            Carried::Partly,
                            what,
                        );
                    }
                    other => {
                        let what = format!("column `{name}`: the `{other}` constraint{} is not carried over (sqb declares no constraints)", expression(constraint));
                        self.entry(
                            &self.yaml_file(node),
                            &node.unique_id,
                            "constraint",
                            Carried::Not,
                            what,
                        );
                    }
                }
            }
            out.push(column);
        }
        out
    }

    fn model_level_constraints(&mut self, node: &Node) {
        for constraint in &node.constraints {
            let on = match constraint.columns.is_empty() {
                true => String::new(),
                false => format!(" on ({})", constraint.columns.join(", ")),
            };
            let what = format!("the model's `{}` constraint{on}{} is not carried over (sqb declares no constraints)", constraint.kind, expression(constraint));
            self.entry(
                &self.yaml_file(node),
                &node.unique_id,
                "constraint",
                Carried::Not,
                what,
            );
        }
    }

    /// The YAML file that patches a node (its properties), else its own file.
    fn yaml_file(&self, node: &Node) -> String {
        node.patch_path
            .as_deref()
            .map(|p| p.split_once("://").map_or(p, |(_, rest)| rest).to_string())
            .unwrap_or_else(|| node.original_file_path.clone())
    }

    fn last_source_name(&self) -> String {
        self.sources
            .last()
            .map(|s| s.name.clone())
            .unwrap_or_default()
    }

    /// dbt sources, seeds and snapshots become sqb sources.
    pub(super) fn plan_sources(&mut self) -> Result<(), DbtError> {
        let mut seen: HashMap<String, String> = self
            .models
            .iter()
            .zip(&self.model_nodes)
            .map(|(m, n)| (m.name.to_lowercase(), n.unique_id.clone()))
            .collect();
        for s in &self.sources {
            seen.insert(s.name.to_lowercase(), s.file.clone());
        }
        for source in &self.manifest.sources {
            let name = format!("{}_{}", source.source_name, source.name);
            if let Some(first) = seen.insert(name.to_lowercase(), source.unique_id.clone()) {
                return Err(DbtError::NameClash {
                    kind: "source",
                    name,
                    first,
                    second: source.unique_id.clone(),
                });
            }
            self.plan_source(source, name);
        }
        let relations: Vec<&Node> = self
            .manifest
            .nodes
            .iter()
            .filter(|n| n.resource_type == "seed" || n.resource_type == "snapshot")
            .collect();
        for node in relations {
            let (file, kind, what) = match node.resource_type.as_str() {
                "seed" => ("seeds", "seed", "sqb loads no CSV"),
                _ => ("snapshots", "snapshot", "sqb runs no snapshot logic"),
            };
            if let Some(first) = seen.insert(node.name.to_lowercase(), node.unique_id.clone()) {
                return Err(DbtError::NameClash {
                    kind: "source",
                    name: node.name.clone(),
                    first,
                    second: node.unique_id.clone(),
                });
            }
            self.relation_as_source(node, file);
            self.entry(&node.original_file_path, &node.unique_id, kind, Carried::Partly, format!(
                "its table is declared as the source `{}` (sources/{file}.toml), so models that read it keep the edge; {what}",
                node.name
            ));
        }
        Ok(())
    }

    fn plan_source(&mut self, source: &'m SourceNode, name: String) {
        let mut props: Vec<(&'static str, toml_edit::Value)> = Vec::new();
        if let Some(db) = source
            .database
            .as_deref()
            .filter(|db| Some(*db) != self.home_database.as_deref())
        {
            props.push(("database", db.into()));
        }
        props.push((
            "schema",
            source
                .schema
                .as_deref()
                .unwrap_or(&source.source_name)
                .into(),
        ));
        props.push((
            "table",
            source.identifier.as_deref().unwrap_or(&source.name).into(),
        ));
        if !source.description.is_empty() {
            props.push(("description", source.description.as_str().into()));
        }
        if !source.loader.is_empty() {
            let mut loader = toml_edit::InlineTable::new();
            loader.insert("tool", source.loader.as_str().into());
            props.push(("loader", toml_edit::Value::InlineTable(loader)));
        }
        if !source.tags.is_empty() {
            props.push(("tags", string_array(&source.tags)));
        }
        if let Some(freshness) =
            render::freshness(source.freshness.as_ref(), source.loaded_at_field.as_deref())
        {
            props.push(("freshness", freshness));
        }
        if let Some(meta) = render::meta_to_toml(&source.meta) {
            props.push(("meta", meta));
        }
        let node = Node::from_source(source);
        let columns = self.columns(&source.columns, &node);
        let header = Some(source.source_description.clone())
            .filter(|d| !d.is_empty())
            .map(|d| format!("dbt source `{}`: {d}", source.source_name));
        self.targets
            .insert(source.unique_id.clone(), Target::Source(self.sources.len()));
        self.sources.push(SourceOut {
            file: source.source_name.clone(),
            header,
            name,
            props,
            columns,
        });
    }

    /// A relation dbt builds that is not a sqb model (seed, snapshot, Python model), as a
    /// source named like the node.
    fn relation_as_source(&mut self, node: &'m Node, file: &str) {
        let mut props: Vec<(&'static str, toml_edit::Value)> = Vec::new();
        if let Some(db) = node
            .database
            .as_deref()
            .filter(|db| Some(*db) != self.home_database.as_deref())
        {
            props.push(("database", db.into()));
        }
        props.push(("schema", node.schema.as_deref().unwrap_or("main").into()));
        props.push(("table", node.alias.as_deref().unwrap_or(&node.name).into()));
        if !node.description.is_empty() {
            props.push(("description", node.description.as_str().into()));
        }
        let mut columns = self.columns(&node.columns, node);
        for (column, ty) in &node.config.column_types {
            let Some(ty) = ty.as_str() else { continue };
            match columns
                .iter_mut()
                .find(|c| c.name.eq_ignore_ascii_case(column))
            {
                Some(c) => c.ty = c.ty.clone().or_else(|| Some(ty.to_string())),
                None => columns.push(ColumnOut {
                    name: column.clone(),
                    ty: Some(ty.to_string()),
                    ..ColumnOut::default()
                }),
            }
        }
        self.targets
            .insert(node.unique_id.clone(), Target::Source(self.sources.len()));
        self.sources.push(SourceOut {
            file: file.to_string(),
            header: None,
            name: node.name.clone(),
            props,
            columns,
        });
    }

    /// How the SQL of a model names each target.
    fn reference(&self, target: &Target) -> String {
        match target {
            Target::Model(i) => quote_ident(&self.models[*i].name),
            Target::Source(i) => {
                let source = &self.sources[*i];
                let get = |key: &str| {
                    source
                        .props
                        .iter()
                        .find(|(k, _)| *k == key)
                        .and_then(|(_, v)| v.as_str().map(str::to_string))
                };
                let mut parts = Vec::new();
                if let Some(db) = get("database") {
                    parts.push(quote_ident(&db));
                }
                parts.extend(get("schema").map(|s| quote_ident(&s)));
                parts.extend(get("table").map(|t| quote_ident(&t)));
                parts.join(".")
            }
        }
    }

    /// Each model's compiled SQL with the relations of its `ref()`s and `source()`s renamed.
    pub(super) fn rewrite_sql(&mut self) {
        let mut names: Vec<(String, String)> = Vec::new();
        for (id, target) in &self.targets {
            if let Some(relation) = self.manifest.relation_of(id) {
                names.push((relation.to_string(), self.reference(target)));
            }
        }
        let relations = sql::Relations::new(names.iter().map(|(a, b)| (a.as_str(), b.as_str())));
        let mut entries = Vec::new();
        for (i, node) in self.model_nodes.iter().enumerate() {
            let code = node.compiled_code.as_deref().unwrap_or_default();
            // `{{ this }}`: dbt compiled the incremental branch (`is_incremental()` was true).
            // Renamed, the model would read itself (a cycle); kept, it reads its own table.
            let own = node.relation_name.as_deref();
            let rewritten = sql::rewrite(code, &relations, own);
            tracing::debug!(model = %node.unique_id, relations = rewritten.replaced, "renamed");
            if rewritten.kept {
                entries.push(NotCarried {
                    file: node.original_file_path.clone(),
                    node: node.unique_id.clone(),
                    kind: "incremental branch",
                    carried: Carried::Partly,
                    what: "its compiled SQL reads its own table (`is_incremental()` was true when dbt compiled it): kept as dbt compiled it, an external relation for sqb; `dbt compile --full-refresh` compiles the model without that branch".into(),
                });
            }
            self.models[i].sql = tidy(&rewritten.sql);
            for dep in &node.depends_on.nodes {
                if self.targets.contains_key(dep) || self.is_ephemeral(dep) {
                    continue;
                }
                let what = match self.manifest.disabled.contains_key(dep) {
                    true => format!("it reads `{dep}`, which is disabled in dbt: the relation stays as the compiled SQL names it, an external relation for sqb"),
                    false => format!("it reads `{dep}`, which the manifest does not hold: the relation stays as the compiled SQL names it, an external relation for sqb"),
                };
                entries.push(NotCarried {
                    file: node.original_file_path.clone(),
                    node: node.unique_id.clone(),
                    kind: "dependency",
                    carried: Carried::Partly,
                    what,
                });
            }
        }
        self.entries.extend(entries);
    }

    fn is_ephemeral(&self, id: &str) -> bool {
        self.manifest.node(id).is_some_and(|n| {
            n.config.materialized.as_deref() == Some("ephemeral") || n.resource_type == "analysis"
        })
    }

    /// dbt's data tests on a column become its audits.
    pub(super) fn attach_tests(&mut self) {
        let tests: Vec<&Node> = self
            .manifest
            .nodes
            .iter()
            .filter(|n| n.resource_type == "test")
            .collect();
        for test in tests {
            let Some(meta) = &test.test_metadata else {
                self.entry(
                    &test.original_file_path,
                    &test.unique_id,
                    "singular test",
                    Carried::Not,
                    "a singular data test is a query of its own; sqb audits attach to columns"
                        .into(),
                );
                continue;
            };
            let attached = test
                .attached_node
                .clone()
                .or_else(|| test.depends_on.nodes.last().cloned());
            let target = attached
                .as_deref()
                .and_then(|a| self.targets.get(a))
                .cloned();
            let (Some(target), Some(column)) = (target, test.column_name.clone()) else {
                let what = match test.column_name {
                    None => format!("the model-level data test `{}` is not carried over: sqb audits attach to columns", meta.name),
                    Some(_) => format!("the data test `{}` is on a resource the import does not write", meta.name),
                };
                self.entry(
                    &test.original_file_path,
                    &test.unique_id,
                    "data test",
                    Carried::Not,
                    what,
                );
                continue;
            };
            let audit = self.audit(test, meta, attached.as_deref().unwrap_or_default());
            let columns = match target {
                Target::Model(i) => &mut self.models[i].columns,
                Target::Source(i) => &mut self.sources[i].columns,
            };
            let column = match columns
                .iter()
                .position(|c| c.name.eq_ignore_ascii_case(&column))
            {
                Some(at) => &mut columns[at],
                None => {
                    columns.push(ColumnOut {
                        name: column.clone(),
                        ..ColumnOut::default()
                    });
                    columns.last_mut().expect("just pushed")
                }
            };
            column.audits.push(audit);
            self.audits += 1;
        }
    }

    /// A dbt test as a sqb audit: `"not_null"`, `{ accepted_values = [..] }`, or a one-key
    /// table of its arguments and non-default config.
    fn audit(
        &self,
        test: &Node,
        meta: &manifest::TestMetadata,
        attached: &str,
    ) -> toml_edit::Value {
        let name = match &meta.namespace {
            Some(ns) => format!("{ns}.{}", meta.name),
            None => meta.name.clone(),
        };
        let mut args: Vec<(String, toml_edit::Value)> = Vec::new();
        let mut kwargs: Vec<(&String, &Value)> = meta.kwargs.iter().collect();
        // `to` before `field`, as dbt's docs write a relationship.
        kwargs.sort_by_key(|(k, _)| (k.as_str() != "to", k.as_str()));
        for (key, value) in kwargs {
            if key == "column_name" || key == "model" {
                continue;
            }
            if meta.name == "relationships" && key == "to" && meta.namespace.is_none() {
                let other = test
                    .depends_on
                    .nodes
                    .iter()
                    .find(|d| d.as_str() != attached);
                if let Some(t) = other.and_then(|o| self.targets.get(o)) {
                    let to = match t {
                        Target::Model(i) => self.models[*i].name.clone(),
                        Target::Source(i) => self.sources[*i].name.clone(),
                    };
                    args.push((key.clone(), to.into()));
                    continue;
                }
            }
            if let Some(v) = render::json_to_toml(value) {
                args.push((key.clone(), v));
            }
        }
        if let Some(severity) = test
            .config
            .severity
            .as_deref()
            .filter(|s| !s.eq_ignore_ascii_case("error"))
        {
            args.push(("severity".into(), severity.to_lowercase().into()));
        }
        if let Some(filter) = &test.config.where_ {
            args.push(("where".into(), filter.as_str().into()));
        }
        render::audit(&name, args)
    }

    /// Resources the import lists only: tests done above; analyses, operations, unit tests,
    /// the semantic layer, exposures, disabled nodes.
    pub(super) fn list_others(&mut self) {
        let mut entries = Vec::new();
        for node in &self.manifest.nodes {
            let (kind, what) = match node.resource_type.as_str() {
                "analysis" => (
                    "analysis",
                    "an analysis is compiled but never built; not a model".to_string(),
                ),
                "operation" => ("hook", operation_text(&node.name)),
                _ => continue,
            };
            let file = match node.resource_type.as_str() {
                "operation" => "dbt_project.yml".to_string(),
                _ => node.original_file_path.clone(),
            };
            entries.push(NotCarried {
                file,
                node: node.unique_id.clone(),
                kind,
                carried: Carried::Not,
                what,
            });
        }
        for (section, id, other) in &self.manifest.others {
            let (kind, what) = match *section {
                "unit_tests" => ("unit test", "sqb runs no model on fixture rows"),
                "saved_queries" => ("saved query", "MetricFlow's saved queries are not carried over"),
                _ => ("exposure", "sqb has no exposures; `access = \"public\"` and `sqb publish` are how other projects read models"),
            };
            entries.push(NotCarried {
                file: other.original_file_path.clone(),
                node: id.clone(),
                kind,
                carried: Carried::Not,
                what: format!("`{}`: {what}", other.name),
            });
        }
        for (id, nodes) in &self.manifest.disabled {
            let file = nodes
                .first()
                .and_then(|n| n.get("original_file_path"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            entries.push(NotCarried {
                file: file.to_string(),
                node: id.clone(),
                kind: "disabled",
                carried: Carried::Not,
                what: "disabled in dbt (`enabled: false`): not imported".into(),
            });
        }
        self.entries.extend(entries);
        if self.schemas.len() > 1 {
            let default = self.default_schema();
            for (i, node) in self.model_nodes.iter().enumerate() {
                let schema = node.schema.clone().unwrap_or_default();
                if schema != default {
                    let what = format!("dbt builds `{}` in the schema `{schema}`; a sqb target reads every model from one schema, so `contract diff --from {schema}` is the run that checks it", self.models[i].name);
                    self.entries.push(NotCarried {
                        file: node.original_file_path.clone(),
                        node: node.unique_id.clone(),
                        kind: "schema",
                        carried: Carried::Partly,
                        what,
                    });
                }
            }
        }
    }

    fn default_schema(&self) -> String {
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

impl Node {
    /// A source as the node shape that column reading takes.
    fn from_source(source: &SourceNode) -> Node {
        Node {
            unique_id: source.unique_id.clone(),
            resource_type: "source".into(),
            name: source.name.clone(),
            package_name: source.package_name.clone(),
            original_file_path: source.original_file_path.clone(),
            patch_path: None,
            database: source.database.clone(),
            schema: source.schema.clone(),
            alias: None,
            relation_name: source.relation_name.clone(),
            compiled_code: None,
            language: None,
            description: String::new(),
            tags: Vec::new(),
            config: Default::default(),
            columns: Vec::new(),
            constraints: Vec::new(),
            depends_on: Default::default(),
            version: None,
            test_metadata: None,
            column_name: None,
            attached_node: None,
        }
    }
}

/// Macros (by name, any package) that query the warehouse while dbt compiles a model.
const INTROSPECTIVE_MACROS: &[&str] = &[
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
fn operation_text(name: &str) -> String {
    let when = match name {
        n if n.contains("on-run-start") => "an on-run-start hook runs SQL before every dbt run",
        n if n.contains("on-run-end") => "an on-run-end hook runs SQL after every dbt run",
        _ => "an operation runs SQL when dbt is invoked",
    };
    format!("{when}; sqb builds nothing")
}

/// The sqb name of a model: its dbt name, with `_v<N>` for a version.
fn model_name(node: &Node) -> String {
    match &node.version {
        Some(v) => format!("{}_v{}", node.name, version_text(v)),
        None => node.name.clone(),
    }
}

fn version_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn expression(constraint: &manifest::Constraint) -> String {
    constraint
        .expression
        .as_deref()
        .map(|e| format!(" `{e}`"))
        .unwrap_or_default()
}

fn same_set(a: &[String], b: &[String]) -> bool {
    let a: HashSet<&String> = a.iter().collect();
    let b: HashSet<&String> = b.iter().collect();
    a == b
}

fn string_array(items: &[String]) -> toml_edit::Value {
    toml_edit::Value::Array(items.iter().map(String::as_str).collect())
}

/// Compiled SQL without the blank lines dbt leaves where `config()` blocks were, ending in one
/// newline.
fn tidy(sql: &str) -> String {
    let trimmed = sql.trim_start_matches(['\n', '\r']).trim_end();
    format!("{trimmed}\n")
}
