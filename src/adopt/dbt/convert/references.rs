//! The compiled SQL rewritten once every target is known: each relation dbt compiled in named
//! as the sqb model or source it became.

#[allow(clippy::wildcard_imports)]
use super::*;

impl<'m> Importer<'m> {
    /// How the SQL of a model names each target.
    pub(super) fn reference(&self, target: &Target) -> String {
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
    pub(in crate::adopt::dbt) fn rewrite_sql(&mut self) {
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
            let rewritten = match sql::rewrite(code, &relations, own, self.engine) {
                Ok(r) => r,
                Err(error) => {
                    entries.push(NotCarried {
                        file: node.original_file_path.clone(),
                        node: node.unique_id.clone(),
                        kind: "unreadable SQL",
                        carried: Carried::Partly,
                        what: format!("sqb cannot read its compiled SQL ({error}): kept as dbt compiled it, with the relations it reads not renamed"),
                    });
                    sql::Rewritten {
                        sql: code.to_string(),
                        replaced: 0,
                        kept: false,
                    }
                }
            };
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

    pub(super) fn is_ephemeral(&self, id: &str) -> bool {
        self.manifest.node(id).is_some_and(|n| {
            n.config.materialized.as_deref() == Some("ephemeral") || n.resource_type == "analysis"
        })
    }
}
