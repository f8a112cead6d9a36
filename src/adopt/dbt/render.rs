//! The new project's files as TOML text: `sqb.toml`, sidecars and source files, built with
//! toml_edit so that every key and string is quoted as TOML needs.

use std::collections::BTreeMap;

use serde_json::Value;
use toml_edit::{DocumentMut, InlineTable, Item, Table};

use super::folders::FolderDefaults;
use super::{ColumnOut, ModelOut, SourceOut};
use crate::engine::Engine;
use crate::engine_rules;

/// A JSON value as TOML; `None` for null (TOML has none), also inside tables and arrays.
pub fn json_to_toml(value: &Value) -> Option<toml_edit::Value> {
    Some(match value {
        Value::Null => return None,
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.into(),
            None => n.as_f64()?.into(),
        },
        Value::String(s) => s.as_str().into(),
        Value::Array(items) => {
            toml_edit::Value::Array(items.iter().filter_map(json_to_toml).collect())
        }
        Value::Object(map) => {
            let mut table = InlineTable::new();
            for (k, v) in map {
                if let Some(v) = json_to_toml(v) {
                    table.insert(k, v);
                }
            }
            toml_edit::Value::InlineTable(table)
        }
    })
}

/// `meta`, when it has anything.
pub fn meta_to_toml(meta: &BTreeMap<String, Value>) -> Option<toml_edit::Value> {
    let mut table = InlineTable::new();
    for (k, v) in meta {
        if let Some(v) = json_to_toml(v) {
            table.insert(k, v);
        }
    }
    (!table.is_empty()).then_some(toml_edit::Value::InlineTable(table))
}

/// A source's `freshness` (nulls dropped, `loaded_at_field` kept with it); `None` when dbt
/// checks none.
pub fn freshness(value: Option<&Value>, loaded_at: Option<&str>) -> Option<toml_edit::Value> {
    let mut table = match value.and_then(json_to_toml)? {
        toml_edit::Value::InlineTable(t) => t,
        _ => return None,
    };
    table.retain(|_, v| !matches!(v, toml_edit::Value::InlineTable(t) if t.is_empty()));
    if table.is_empty() {
        return None;
    }
    if let Some(field) = loaded_at {
        table.insert("loaded_at_field", field.into());
    }
    Some(toml_edit::Value::InlineTable(table))
}

/// An audit: a bare name, `{ accepted_values = [..] }`, or `{ name = { args } }`.
pub fn audit(name: &str, args: Vec<(String, toml_edit::Value)>) -> toml_edit::Value {
    if args.is_empty() {
        return name.into();
    }
    let mut table = InlineTable::new();
    if name == "accepted_values" && args.len() == 1 && args[0].0 == "values" {
        table.insert(name, args[0].1.clone());
        return toml_edit::Value::InlineTable(table);
    }
    let mut inner = InlineTable::new();
    for (k, v) in args {
        inner.insert(&k, v);
    }
    table.insert(name, toml_edit::Value::InlineTable(inner));
    toml_edit::Value::InlineTable(table)
}

/// What `sqb.toml` says.
pub struct ProjectOut<'a> {
    pub name: &'a str,
    pub dbt_version: Option<&'a str>,
    pub manifest_schema: u32,
    pub engine: Engine,
    pub database: Option<&'a str>,
    pub schemas: Vec<String>,
    pub default_schema: String,
    pub path_defaults: &'a [(String, &'a FolderDefaults)],
}

pub fn sqb_toml(p: &ProjectOut<'_>) -> String {
    let mut doc = DocumentMut::new();
    doc.decor_mut().set_prefix(format!(
        "# Imported from the dbt project `{}` (dbt-core {}, manifest schema v{}) by `sqb import dbt`.\n",
        p.name,
        p.dbt_version.unwrap_or("unknown"),
        p.manifest_schema
    ));
    doc.insert("name", p.name.into());
    doc.insert("default_target", p.default_schema.as_str().into());
    let mut connection = Table::new();
    connection.insert("engine", p.engine.as_str().into());
    let entry = engine_rules::of(p.engine).dbt_connection(p.database.unwrap_or(p.name));
    connection.insert(entry.key, entry.value.into());
    connection.decor_mut().set_prefix(entry.comment);
    doc.insert("connection", Item::Table(connection));
    let mut targets = Table::new();
    targets.set_implicit(true);
    for (i, schema) in p.schemas.iter().enumerate() {
        let mut t = Table::new();
        if i == 0 {
            t.decor_mut()
                .set_prefix("\n# A target per schema dbt builds models in.\n");
        }
        t.insert("schema", schema.as_str().into());
        targets.insert(schema, Item::Table(t));
    }
    doc.insert("targets", Item::Table(targets));
    let mut settings = Table::new();
    settings.decor_mut().set_prefix(
        "\n# In dbt, the columns of a model without an enforced contract are documentation.\n",
    );
    settings.insert("column_contract_mode", "explicit".into());
    doc.insert("settings", Item::Table(settings));
    if !p.path_defaults.is_empty() {
        let mut defaults = Table::new();
        defaults.set_implicit(true);
        let mut sorted: Vec<_> = p.path_defaults.iter().collect();
        sorted.sort_by(|a, b| a.0.cmp(&b.0));
        for (i, (folder, d)) in sorted.into_iter().enumerate() {
            let mut t = folder_table(d);
            if i == 0 {
                t.decor_mut().set_prefix(
                    "\n# dbt_project.yml's folder configs, inherited values included.\n",
                );
            }
            defaults.insert(folder, Item::Table(t));
        }
        doc.insert("path_defaults", Item::Table(defaults));
    }
    doc.to_string()
}

fn folder_table(d: &FolderDefaults) -> Table {
    let mut t = Table::new();
    if let Some(m) = &d.materialized {
        let m = if super::MATERIALIZATIONS.contains(&m.as_str()) {
            m.as_str()
        } else {
            "custom"
        };
        t.insert("materialized", m.into());
    }
    match d.contract {
        Some(true) => {
            t.insert("contract", "enforced".into());
        }
        Some(false) => {
            t.insert("contract", "none".into());
        }
        None => {}
    }
    if !d.tags.is_empty() {
        t.insert(
            "tags",
            toml_edit::Value::Array(d.tags.iter().map(String::as_str).collect()).into(),
        );
    }
    if let Some(a) = &d.access {
        t.insert("access", a.as_str().into());
    }
    t
}

/// A model's sidecar; `None` when it would say nothing.
pub fn sidecar(model: &ModelOut) -> Option<String> {
    if model.props.is_empty() && model.columns.is_empty() && model.semantic.is_empty() {
        return None;
    }
    let mut doc = DocumentMut::new();
    for (key, value) in &model.props {
        doc.insert(key, value.clone().into());
    }
    insert_columns(doc.as_table_mut(), &model.columns, !model.props.is_empty());
    for section in ["measures", "dimensions", "joins"] {
        let mut parent = Table::new();
        parent.set_implicit(true);
        for (_, name, table) in model.semantic.iter().filter(|(s, _, _)| *s == section) {
            let mut t = table.clone();
            t.decor_mut().set_prefix("\n");
            parent.insert(name, Item::Table(t));
        }
        if !parent.is_empty() {
            doc.insert(section, Item::Table(parent));
        }
    }
    Some(doc.to_string())
}

fn insert_columns(parent: &mut Table, columns: &[ColumnOut], after_keys: bool) {
    if columns.is_empty() {
        return;
    }
    let mut table = Table::new();
    table.set_implicit(true);
    for (i, column) in columns.iter().enumerate() {
        let mut t = column_table(column);
        if i > 0 || after_keys {
            t.decor_mut().set_prefix("\n");
        }
        table.insert(&column.name, Item::Table(t));
    }
    parent.insert("columns", Item::Table(table));
}

fn column_table(c: &ColumnOut) -> Table {
    let mut t = Table::new();
    if let Some(ty) = &c.ty {
        t.insert("type", ty.as_str().into());
    }
    if c.not_null {
        t.insert("nullable", false.into());
    }
    if let Some(d) = &c.description {
        t.insert("description", d.as_str().into());
    }
    if !c.tags.is_empty() {
        t.insert(
            "tags",
            toml_edit::Value::Array(c.tags.iter().map(String::as_str).collect()).into(),
        );
    }
    if let Some(meta) = &c.meta {
        t.insert("meta", meta.clone().into());
    }
    if !c.audits.is_empty() {
        t.insert(
            "audits",
            toml_edit::Value::Array(c.audits.iter().cloned().collect()).into(),
        );
    }
    t
}

/// A `sources/*.toml` file.
pub fn sources(sources: &[&SourceOut]) -> String {
    let mut doc = DocumentMut::new();
    if let Some(header) = sources.iter().find_map(|s| s.header.as_deref()) {
        doc.decor_mut().set_prefix(format!("# {header}\n"));
    }
    for (i, source) in sources.iter().enumerate() {
        let mut t = Table::new();
        if i > 0 || doc.decor().prefix().is_some() {
            t.decor_mut().set_prefix("\n");
        }
        for (key, value) in &source.props {
            t.insert(key, value.clone().into());
        }
        insert_columns(&mut t, &source.columns, true);
        doc.insert(&source.name, Item::Table(t));
    }
    doc.to_string()
}
