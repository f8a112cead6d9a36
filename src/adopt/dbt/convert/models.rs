//! dbt's models planned as sqb models: each one's path, sidecar keys, columns and constraints,
//! and what its compiled SQL read at compile time.

#[allow(clippy::wildcard_imports)]
use super::*;

impl<'m> Importer<'m> {
    /// The models to write, with their paths and sidecar keys (SQL comes after every target
    /// is known).
    pub(in crate::adopt::dbt) fn plan_models(&mut self) -> Result<(), DbtError> {
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
            claim(&mut names, "model", &name, &node.unique_id)?;
            self.plan_model(node, name);
        }
        if !missing.is_empty() {
            return Err(DbtError::NotCompiled(missing));
        }
        Ok(())
    }

    pub(super) fn plan_model(&mut self, node: &'m Node, name: String) {
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
    pub(super) fn compile_time_reads(&mut self, node: &Node) {
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
    pub(super) fn model_path(&self, node: &Node, name: &str) -> (String, String) {
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

    pub(super) fn model_props(
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
    pub(super) fn columns(
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
                        self.constraint_entry(node, Carried::Partly, what);
                    }
                    other => {
                        let what = format!("column `{name}`: the `{other}` constraint{} is not carried over (sqb declares no constraints)", expression(constraint));
                        self.constraint_entry(node, Carried::Not, what);
                    }
                }
            }
            out.push(column);
        }
        out
    }

    pub(super) fn model_level_constraints(&mut self, node: &Node) {
        for constraint in &node.constraints {
            let on = match constraint.columns.is_empty() {
                true => String::new(),
                false => format!(" on ({})", constraint.columns.join(", ")),
            };
            let what = format!("the model's `{}` constraint{on}{} is not carried over (sqb declares no constraints)", constraint.kind, expression(constraint));
            self.constraint_entry(node, Carried::Not, what);
        }
    }

    /// A constraint of `node` that is not carried over as dbt had it, listed at the YAML file
    /// that declares it.
    fn constraint_entry(&mut self, node: &Node, carried: Carried, what: String) {
        let file = self.yaml_file(node);
        self.entry(&file, &node.unique_id, "constraint", carried, what);
    }

    /// The YAML file that patches a node (its properties), else its own file.
    pub(super) fn yaml_file(&self, node: &Node) -> String {
        node.patch_path
            .as_deref()
            .map(|p| p.split_once("://").map_or(p, |(_, rest)| rest).to_string())
            .unwrap_or_else(|| node.original_file_path.clone())
    }
}
