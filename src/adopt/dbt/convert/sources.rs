//! dbt's sources planned as sqb sources, and relations sqb cannot read as models (Python
//! models, seeds, snapshots) declared as sources instead.

#[allow(clippy::wildcard_imports)]
use super::*;

impl<'m> Importer<'m> {
    pub(super) fn last_source_name(&self) -> String {
        self.sources
            .last()
            .map(|s| s.name.clone())
            .unwrap_or_default()
    }

    /// dbt sources, seeds and snapshots become sqb sources.
    pub(in crate::adopt::dbt) fn plan_sources(&mut self) -> Result<(), DbtError> {
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
            claim(&mut seen, "source", &name, &source.unique_id)?;
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
            claim(&mut seen, "source", &node.name, &node.unique_id)?;
            self.relation_as_source(node, file);
            self.entry(&node.original_file_path, &node.unique_id, kind, Carried::Partly, format!(
                "its table is declared as the source `{}` (sources/{file}.toml), so models that read it keep the edge; {what}",
                node.name
            ));
        }
        Ok(())
    }

    pub(super) fn plan_source(&mut self, source: &'m SourceNode, name: String) {
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
    pub(super) fn relation_as_source(&mut self, node: &'m Node, file: &str) {
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
}

impl Node {
    /// A source as the node shape that column reading takes.
    pub(super) fn from_source(source: &SourceNode) -> Node {
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
            time_spine: None,
            column_name: None,
            attached_node: None,
        }
    }
}
