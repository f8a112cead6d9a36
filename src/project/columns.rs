//! Reading model-level keys and `[columns.*]` declarations, shared by sidecars, schemas,
//! sources and `path_defaults`.

use toml_edit::TableLike;

use super::reader::Reader;
use super::{Access, Audit, AuditArg, Column, ColumnDocs, Contract, ModelProps};
use crate::diagnostics::{Code, Diagnostic};
use crate::source::Spanned;

pub(super) const MATERIALIZATIONS: &[&str] =
    &["view", "table", "incremental", "snapshot", "custom"];
pub(super) const COLUMN_KEYS: &[&str] = &[
    "type",
    "nullable",
    "description",
    "audits",
    "tags",
    "meta",
    "deprecated",
    "deprecation_date",
];

/// The values of `on_schema_change`: what an incremental run does when the model's output
/// gains or loses columns (dbt's config of the same name).
pub(super) const ON_SCHEMA_CHANGE: &[&str] =
    &["ignore", "fail", "append_new_columns", "sync_all_columns"];

/// Reads the model-level keys present in `t` (the caller checks which keys are allowed).
pub(super) fn read_model_props(r: &mut Reader<'_>, t: &dyn TableLike) -> ModelProps {
    let contract = r.choice(t, "contract", &["enforced", "none"]).map(|c| {
        let value = if c.value == "enforced" {
            Contract::Enforced
        } else {
            Contract::None
        };
        Spanned::new(value, c.loc)
    });
    if t.contains_key("meta") {
        r.table(t, "meta");
    }
    ModelProps {
        materialized: r.choice(t, "materialized", MATERIALIZATIONS),
        contract,
        tags: r.strings(t, "tags", false),
        description: r.string(t, "description"),
        model_schema: r.string(t, "model_schema"),
        alias: r.string(t, "alias"),
        unique_key: r.strings(t, "unique_key", true),
        cursor: r.strings(t, "cursor", true),
        updated_at: r.strings(t, "updated_at", true),
        check_columns: r.strings(t, "check_columns", true),
        snapshot_schema_change: r.choice(
            t,
            "snapshot_schema_change",
            &["fail", "append_new_columns"],
        ),
        on_schema_change: r.choice(t, "on_schema_change", ON_SCHEMA_CHANGE),
        promotion: r.choice(t, "promotion", &["staged", "immediate"]),
        sql_analysis: r.boolean(t, "sql_analysis"),
        audits: None,
        access: r
            .choice(t, "access", &["public", "protected", "private"])
            .map(|a| {
                let value = match a.value.as_str() {
                    "public" => Access::Public,
                    "private" => Access::Private,
                    _ => Access::Protected,
                };
                Spanned::new(value, a.loc)
            }),
    }
}

/// Reads the `columns` table of `parent`, in file order, reporting names that repeat up to case.
pub(super) fn read_columns(r: &mut Reader<'_>, parent: &dyn TableLike, owner: &str) -> Vec<Column> {
    let Some(columns) = r.table(parent, "columns") else {
        return Vec::new();
    };
    let mut out: Vec<Column> = Vec::with_capacity(columns.len());
    for (name, _) in columns.iter() {
        let name_loc = r.key_loc(columns, name);
        let Some(t) = r.table(columns, name) else {
            continue;
        };
        if let Some(first) = out.iter().find(|c| c.name.value.eq_ignore_ascii_case(name)) {
            r.diags.push(
                Diagnostic::error(
                    Code::DuplicateColumn,
                    format!(
                        "column `{name}` of {owner} is declared twice (names differ only by case)"
                    ),
                )
                .at(name_loc.clone(), "declared again here")
                .related(
                    first.name.loc.clone(),
                    format!("`{}` declared here", first.name.value),
                )
                .hint("column names are compared case-insensitively; keep one declaration"),
            );
        }
        out.push(read_column(r, t, Spanned::new(name.to_string(), name_loc)));
    }
    out
}

fn read_column(r: &mut Reader<'_>, t: &dyn TableLike, name: Spanned<String>) -> Column {
    r.check_keys(t, COLUMN_KEYS, &format!("column `{}`", name.value));
    if t.contains_key("meta") {
        r.table(t, "meta");
    }
    let docs = ColumnDocs {
        description: r.string(t, "description"),
        audits: read_audits(r, t),
        tags: r
            .strings(t, "tags", false)
            .map(|s| s.value)
            .unwrap_or_default(),
        deprecated: r.string(t, "deprecated"),
        deprecation_date: r.date(t, "deprecation_date"),
    };
    let has_docs = docs.description.is_some()
        || !docs.audits.is_empty()
        || !docs.tags.is_empty()
        || docs.deprecated.is_some()
        || docs.deprecation_date.is_some();
    Column {
        file: r.file,
        type_text: r
            .string(t, "type")
            .map(|s| Spanned::new(super::spelling::shared(&s.value), s.loc)),
        ty: None,
        nullable: r.boolean(t, "nullable"),
        docs: has_docs.then(|| Box::new(docs)),
        name,
    }
}

pub(super) fn read_audits(r: &mut Reader<'_>, t: &dyn TableLike) -> Vec<Audit> {
    let Some(item) = t.get("audits") else {
        return Vec::new();
    };
    let Some(array) = item.as_array() else {
        r.diags.push(
            Diagnostic::error(Code::WrongValueType, "`audits` must be an array")
                .at(r.value_loc(t, "audits"), "expected an array")
                .hint("write `audits = [\"unique\", { accepted_values = [\"a\", \"b\"] }]`"),
        );
        return Vec::new();
    };
    let mut audits = Vec::new();
    for value in array.iter() {
        let loc = r.loc(value.span());
        if let Some(name) = value.as_str() {
            audits.push(Audit {
                name: name.to_string(),
                loc,
                args: Vec::new(),
            });
        } else if let Some(table) = value.as_inline_table().filter(|t| t.len() == 1) {
            let (name, value) = table.iter().next().expect("one entry");
            let args = match value {
                toml_edit::Value::InlineTable(inner) => inner
                    .iter()
                    .map(|(k, v)| (k.to_string(), AuditArg::of(v)))
                    .collect(),
                toml_edit::Value::Array(_) => vec![("values".to_string(), AuditArg::of(value))],
                other => vec![("value".to_string(), AuditArg::of(other))],
            };
            audits.push(Audit {
                name: name.to_string(),
                loc,
                args,
            });
        } else {
            r.diags.push(
                Diagnostic::error(
                    Code::WrongValueType,
                    "an audit must be a name or a table with one key",
                )
                .at(loc, "not an audit")
                .hint("write `\"unique\"` or `{ accepted_values = [\"a\", \"b\"] }`"),
            );
        }
    }
    audits
}
