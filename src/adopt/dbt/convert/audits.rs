//! dbt's tests attached as audits where sqb has the same check, listed where it has not.

#[allow(clippy::wildcard_imports)]
use super::*;

impl<'m> Importer<'m> {
    /// dbt's data tests on a column become its audits, and those of a whole model or source
    /// (`unique_combination_of_columns`, `recency`, `expression_is_true`) its own `audits`:
    /// each only when sqb runs it with the arguments dbt gave, else it is listed.
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
            let Some(target) = target else {
                let what = format!(
                    "the data test `{}` is on a resource the import does not write",
                    meta.name
                );
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
            let args = self.audit_args(test, meta, attached.as_deref().unwrap_or_default());
            // Only what `sqb audit` runs, with these arguments, is carried: an audit it cannot
            // run would not compile.
            let (args, refused) = match args {
                Ok(args) => {
                    let refused = runs(&name, &args, test.column_name.as_deref())
                        .or_else(|| snippets(self.engine, &name, &args));
                    (args, refused)
                }
                Err(why) => (Vec::new(), Some(why)),
            };
            if let Some(why) = refused {
                self.entry(
                    &test.original_file_path,
                    &test.unique_id,
                    "data test",
                    Carried::Not,
                    why,
                );
                continue;
            }
            let audit = render::audit(&name, args);
            match &test.column_name {
                Some(column) => self.column(target, column).audits.push(audit),
                None => self.relation_audits(target).push(audit),
            }
            self.audits += 1;
        }
    }

    /// The column `name` of `target`, added when its YAML does not list it.
    fn column(&mut self, target: Target, name: &str) -> &mut ColumnOut {
        let columns = match target {
            Target::Model(i) => &mut self.models[i].columns,
            Target::Source(i) => &mut self.sources[i].columns,
        };
        let at = match columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
        {
            Some(at) => at,
            None => {
                columns.push(ColumnOut {
                    name: name.to_string(),
                    ..ColumnOut::default()
                });
                columns.len() - 1
            }
        };
        &mut columns[at]
    }

    /// The `audits` of `target` itself (a model's top-level key, a source table's key).
    fn relation_audits(&mut self, target: Target) -> &mut toml_edit::Array {
        let props = match target {
            Target::Model(i) => &mut self.models[i].props,
            Target::Source(i) => &mut self.sources[i].props,
        };
        let at = match props.iter().position(|(k, _)| *k == "audits") {
            Some(at) => at,
            None => {
                props.push(("audits", toml_edit::Value::Array(toml_edit::Array::new())));
                props.len() - 1
            }
        };
        match &mut props[at].1 {
            toml_edit::Value::Array(array) => array,
            _ => unreachable!("`audits` is only ever written as an array"),
        }
    }

    /// A dbt test's arguments and non-default config, as sqb's audit takes them.
    pub(super) fn audit_args(
        &self,
        test: &Node,
        meta: &manifest::TestMetadata,
        attached: &str,
    ) -> Result<Vec<(String, toml_edit::Value)>, String> {
        let mut args: Vec<(String, toml_edit::Value)> = Vec::new();
        let mut kwargs: Vec<(&String, &Value)> = meta.kwargs.iter().collect();
        // `to` before `field`, as dbt's docs write a relationship.
        kwargs.sort_by_key(|(k, _)| (k.as_str() != "to", k.as_str()));
        for (key, value) in kwargs {
            if key == "column_name" || key == "model" {
                continue;
            }
            if meta.name == "relationships" && key == "to" && meta.namespace.is_none() {
                args.push((
                    key.clone(),
                    self.relationship_to(test, attached, value)?.into(),
                ));
                continue;
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
        Ok(args)
    }

    /// The resource a `relationships` test's `to` names, as the import writes it: the test's
    /// other dependency, or the model it is attached to when it reads itself (a parent key in
    /// the same table). A `to` the import writes nothing for is refused, never written as
    /// dbt's text (`ref('x')`), which would not compile.
    fn relationship_to(&self, test: &Node, attached: &str, to: &Value) -> Result<String, String> {
        let nodes = &test.depends_on.nodes;
        let other = nodes
            .iter()
            .find(|d| d.as_str() != attached)
            .or_else(|| nodes.iter().find(|d| d.as_str() == attached));
        match other.and_then(|o| self.targets.get(o)) {
            Some(Target::Model(i)) => Ok(self.models[*i].name.clone()),
            Some(Target::Source(i)) => Ok(self.sources[*i].name.clone()),
            None => Err(format!(
                "the generic test `relationships` is not carried over: its `to` ({}) is no model or source the import writes",
                to.as_str().map_or_else(|| to.to_string(), |t| format!("`{t}`"))
            )),
        }
    }
}

/// Why the `where` or `expression` of the test `name` would not compile: each must be one SQL
/// expression in the engine's dialect, as `sqb compile` checks it (dbt's Jinja is not one).
fn snippets(engine: Engine, name: &str, args: &[(String, toml_edit::Value)]) -> Option<String> {
    args.iter()
        .filter(|(k, _)| k == "where" || k == "expression")
        .find_map(|(key, value)| {
            let text = value.as_str()?;
            let e = crate::semantic::predicate::parse_for(engine, text).err()?;
            let jinja = if text.contains("{{") || text.contains("{%") {
                " (dbt's Jinja is not rendered)"
            } else {
                ""
            };
            Some(format!(
                "the generic test `{name}` is not carried over: its `{key}` is not one SQL expression{jinja}: {e}"
            ))
        })
}

/// Why sqb does not run the test `name` with `args` (on `column`, or on the whole relation), or
/// `None` when it does.
fn runs(name: &str, args: &[(String, toml_edit::Value)], column: Option<&str>) -> Option<String> {
    use crate::audit::spec::{parse, parse_relation, SpecError, NAMES, RELATION_NAMES};
    let audit = crate::project::Audit {
        name: name.to_string(),
        loc: crate::source::Loc::file_start(crate::source::FileId(0)),
        args: args
            .iter()
            .map(|(k, v)| (k.clone(), crate::project::AuditArg::of(v)))
            .collect(),
    };
    let (known, parsed, on) = match column {
        Some(column) => (
            NAMES,
            parse(&audit, column).err(),
            format!("on column `{column}`"),
        ),
        None => (
            RELATION_NAMES,
            parse_relation(&audit).err(),
            "of a whole model or source".to_string(),
        ),
    };
    if !known.contains(&name) {
        return Some(format!("the generic test `{name}` {on} is no audit sqb runs (docs/audits.md lists them; a user-defined audit, audits/<name>.sql, can take its place)"));
    }
    let why = match parsed? {
        SpecError::Argument(why) => why,
        SpecError::Unknown(_) => "sqb runs no such audit".to_string(),
    };
    Some(format!(
        "the generic test `{name}` {on} is not carried over: {why}"
    ))
}

#[cfg(test)]
mod tests {
    use super::runs;

    fn args(pairs: &[(&str, toml_edit::Value)]) -> Vec<(String, toml_edit::Value)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    /// A test is carried only where sqb runs it with the arguments dbt gave: one it would not
    /// run is listed with the reason, never written into a project that does not compile.
    #[test]
    fn only_what_sqb_runs_with_these_arguments_is_carried() {
        let recency = args(&[
            ("datepart", "day".into()),
            ("field", "ordered_at".into()),
            ("interval", 1.into()),
        ]);
        assert_eq!(runs("dbt_utils.recency", &recency, None), None);
        let grouped = [recency.clone(), args(&[("group_by_columns", "x".into())])].concat();
        let why = runs("dbt_utils.recency", &grouped, None).unwrap();
        assert!(why.contains("group_by_columns"), "{why}");
        let why = runs("dbt_utils.recency", &recency, Some("ordered_at")).unwrap();
        assert!(why.contains("is no audit sqb runs"), "{why}");
        let why = runs("unique", &[], None).unwrap();
        assert!(why.contains("of a whole model or source"), "{why}");
        assert_eq!(runs("unique", &[], Some("id")), None);
        let why = runs("relationships", &args(&[("to", "m".into())]), Some("id")).unwrap();
        assert!(why.contains("missing `field`"), "{why}");
    }
}
