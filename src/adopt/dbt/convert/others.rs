//! What the import lists without carrying over: exposures, macros, operations, and the like.

#[allow(clippy::wildcard_imports)]
use super::*;

impl<'m> Importer<'m> {
    /// Resources the import lists only: tests done above; analyses, operations, unit tests,
    /// the semantic layer, exposures, disabled nodes.
    pub(in crate::adopt::dbt) fn list_others(&mut self) {
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
}
