//! dbt's tests attached as audits where sqb has the same check, listed where it has not.

#[allow(clippy::wildcard_imports)]
use super::*;

impl<'m> Importer<'m> {
    /// dbt's data tests on a column become its audits.
    pub(in crate::adopt::dbt) fn attach_tests(&mut self) {
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
                    "a singular data test is a query of its own: it can become a user-defined audit, audits/<name>.sql (docs/audits.md)"
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
                    None => format!("the model-level data test `{}` is not carried over: the import carries column tests; a relation's own `audits` can declare it (docs/audits.md)", meta.name),
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
            let name = match &meta.namespace {
                Some(ns) => format!("{ns}.{}", meta.name),
                None => meta.name.clone(),
            };
            // Only what `sqb audit` runs is carried: an audit it cannot run would not compile.
            if !crate::audit::spec::NAMES.contains(&name.as_str()) {
                self.entry(
                    &test.original_file_path,
                    &test.unique_id,
                    "data test",
                    Carried::Not,
                    format!("the generic test `{name}` on column `{column}` is no audit sqb runs (docs/audits.md lists them; a user-defined audit, audits/<name>.sql, can take its place)"),
                );
                continue;
            }
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
    pub(super) fn audit(
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
}
