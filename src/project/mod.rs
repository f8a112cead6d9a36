//! The project model: `sqb.toml`, models and their sidecars, schemas, enums and sources.
//!
//! [`Project::load`] reads every file of a project into these types, keeping the location of
//! each value for diagnostics. Loading never stops at the first problem: it returns the project
//! it could read together with every diagnostic found on the way.

mod cache;
mod columns;
mod config;
pub mod contracts;
mod discover;
mod load;
pub mod metrics;
mod plain;
pub mod policies;
mod reader;
mod resource;
pub mod semantic;
mod spelling;
mod stamps;

pub use config::{Config, Connection, ContractMode, ImportDecl, Serve, Settings, Target};
pub use discover::{find_root, rel_path, ModelFiles, LOCAL_FILE, PROJECT_FILE};
pub use load::{LoadError, ProjectFile};
pub use resource::{all_resources, resource_at, Home, Resource};

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::diagnostics::Diagnostic;
use crate::engine::Engine;
use crate::source::{FileId, Loc, SourceMap, Spanned};
use crate::types::DataType;

/// A loaded project and the diagnostics found while loading it.
#[derive(Debug)]
pub struct Project {
    pub root: PathBuf,
    pub sources: SourceMap,
    pub config: Config,
    pub models: Vec<Model>,
    pub schemas: BTreeMap<String, ColumnSet>,
    pub enums: BTreeMap<String, EnumDef>,
    pub source_tables: Vec<SourceTable>,
    pub imports: Vec<Import>,
    /// `contracts/metrics/*.toml`, in path order.
    pub metrics: Vec<metrics::MetricBinding>,
    /// The rest of `contracts/`: guardrails, finality rules, assertions and policies.
    pub contracts: Contracts,
    /// `audits/**/<name>.sql`, in path order.
    pub audit_defs: Vec<AuditDef>,
    pub diagnostics: Vec<Diagnostic>,
}

/// A user-defined audit: `audits/<name>.sql`, a query returning the failing rows.
#[derive(Debug, Clone)]
pub struct AuditDef {
    pub name: String,
    pub file: FileId,
}

/// `contracts/` beyond the metric bindings, each kind in path order.
#[derive(Debug, Default)]
pub struct Contracts {
    pub guardrails: Vec<contracts::Guardrail>,
    pub finality: Vec<contracts::Finality>,
    pub assertions: Vec<contracts::Assertion>,
    pub saved_queries: Vec<contracts::SavedQuery>,
    pub tenancy: Option<policies::Tenancy>,
    pub roles: Option<policies::Roles>,
}

/// An import and its vendored files, where they could be read (reported otherwise).
#[derive(Debug)]
pub struct Import {
    pub decl: ImportDecl,
    pub snapshot: Option<crate::team_contracts::snapshot::Snapshot>,
    pub baseline: Option<crate::team_contracts::snapshot::Snapshot>,
    /// The baseline file does not exist (E035): `imports update` writes the first one.
    pub baseline_missing: bool,
    /// What was read (each file's bytes, or why it could not be), for the compile cache's key.
    pub fingerprint: String,
}

impl Project {
    /// The file `audits/<name>.sql`, the first in path order (`audit::spec::custom` leaves
    /// out those with a built-in audit's name).
    pub fn audit_def(&self, name: &str) -> Option<&AuditDef> {
        self.audit_defs.iter().find(|d| d.name == name)
    }

    pub fn engine(&self) -> Engine {
        self.config.connection.engine
    }

    /// The enum declared under `enums/` with this name (compared case-insensitively, since
    /// unquoted type names are folded to lower case).
    pub fn enum_named(&self, name: &str) -> Option<&EnumDef> {
        self.enums.get(name).or_else(|| {
            self.enums
                .values()
                .find(|e| e.name.eq_ignore_ascii_case(name))
        })
    }

    /// The relation an imported model names (`import.model`), from its vendored snapshot.
    pub fn imported_relation(
        &self,
        qualified: &str,
    ) -> Option<&crate::team_contracts::snapshot::Relation> {
        let (import, model) = qualified.split_once('.')?;
        let import = self.imports.iter().find(|i| i.decl.name == import)?;
        let snapshot = import.snapshot.as_ref().or(import.baseline.as_ref())?;
        snapshot
            .models
            .iter()
            .find(|m| m.name == model)
            .map(|m| &m.relation)
    }

    pub fn model(&self, name: &str) -> Option<&Model> {
        self.models.iter().find(|m| m.name == name)
    }

    /// A model's effective declaration: its `model_schema` columns, then its own.
    pub fn effective_columns<'a>(&'a self, model: &'a Model) -> Vec<&'a Column> {
        let schema = model
            .props
            .model_schema
            .as_ref()
            .and_then(|s| self.schemas.get(&s.value));
        schema
            .into_iter()
            .flat_map(|s| s.columns.iter())
            .chain(model.columns.iter())
            .collect()
    }

    /// The contract policy in force for a model.
    pub fn policy(&self, model: &Model) -> Policy {
        if model.unreadable {
            return Policy::None;
        }
        match model.props.contract.as_ref().map(|c| c.value) {
            Some(Contract::Enforced) => Policy::Enforced,
            Some(Contract::None) => Policy::None,
            None => match self.config.settings.column_contract_mode {
                ContractMode::Implicit => Policy::Implicit,
                ContractMode::Explicit => Policy::Explicit,
            },
        }
    }
}

/// A model's `contract` key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Contract {
    Enforced,
    None,
}

/// The contract policy in force for a model, after the project mode is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr)]
#[strum(serialize_all = "lowercase")]
pub enum Policy {
    /// The declared columns are the complete output shape.
    Enforced,
    /// The declared columns are validated as an open shape.
    Implicit,
    /// Declared columns are metadata and audit attachment only.
    Explicit,
    /// No shape or nullability validation; declared types are still enforced.
    None,
}

impl Policy {
    /// The name used in reports.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A model: `models/**/<name>.sql` and its optional sidecar.
#[derive(Debug)]
pub struct Model {
    pub name: String,
    pub sql_file: FileId,
    pub sidecar: Option<FileId>,
    /// The model's own keys merged over its folder's `path_defaults`.
    pub props: ModelProps,
    pub columns: Vec<Column>,
    /// `[measures.*]`, `[dimensions.*]`, `[joins.*]`, `grain`, when the sidecar has any.
    pub semantic: Option<Box<semantic::Semantic>>,
    /// Its sidecar is not valid TOML (reported once): the rules that need what the sidecar
    /// says are skipped for it, as if it declared no contract.
    pub unreadable: bool,
}

impl Model {
    /// The relation name in the warehouse: the alias, else the model name.
    pub fn relation_name(&self) -> &str {
        self.props.alias.as_ref().map_or(&self.name, |a| &a.value)
    }
}

/// A list of names as written, such as `unique_key = ["a", "b"]`.
pub type NameList = Spanned<Vec<Spanned<String>>>;

/// Model-level keys, as written in a sidecar or in `path_defaults`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ModelProps {
    pub materialized: Option<Spanned<String>>,
    pub contract: Option<Spanned<Contract>>,
    pub tags: Option<NameList>,
    pub description: Option<Spanned<String>>,
    pub model_schema: Option<Spanned<String>>,
    pub alias: Option<Spanned<String>>,
    pub unique_key: Option<NameList>,
    pub cursor: Option<NameList>,
    pub updated_at: Option<NameList>,
    pub check_columns: Option<NameList>,
    pub snapshot_schema_change: Option<Spanned<String>>,
    /// Incremental models: `ignore` | `fail` | `append_new_columns` | `sync_all_columns`.
    pub on_schema_change: Option<Spanned<String>>,
    pub promotion: Option<Spanned<String>>,
    pub sql_analysis: Option<Spanned<bool>>,
    pub access: Option<Spanned<Access>>,
    /// The model's own audits, of the relation rather than one column
    /// (`unique_combination_of_columns`, `recency`, `expression`).
    pub audits: Option<Vec<Audit>>,
}

/// Who may read a model from another project: `public` models are published by `sqb publish`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Access {
    Public,
    #[default]
    Protected,
    Private,
}

impl ModelProps {
    /// `self` with every key it leaves unset taken from `defaults`.
    pub fn over(self, defaults: &ModelProps) -> ModelProps {
        macro_rules! pick {
            ($($field:ident),*) => {
                ModelProps { $($field: self.$field.or_else(|| defaults.$field.clone()),)* }
            };
        }
        pick!(
            materialized,
            contract,
            tags,
            description,
            model_schema,
            alias,
            unique_key,
            cursor,
            updated_at,
            check_columns,
            snapshot_schema_change,
            on_schema_change,
            promotion,
            sql_analysis,
            access,
            audits
        )
    }

    pub fn tag_names(&self) -> impl Iterator<Item = &str> {
        self.tags
            .iter()
            .flat_map(|t| t.value.iter().map(|s| s.value.as_str()))
    }
}

/// A reusable column set, `schemas/<name>.toml`.
#[derive(Debug)]
pub struct ColumnSet {
    pub name: String,
    pub file: FileId,
    pub description: Option<Spanned<String>>,
    pub columns: Vec<Column>,
}

/// A declared column.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Column {
    pub name: Spanned<String>,
    pub file: FileId,
    /// The declared type as written (shared between the columns that spell it alike); `ty`
    /// holds it parsed when it parses.
    #[serde(deserialize_with = "spelling::deserialize")]
    pub type_text: Option<Spanned<Arc<str>>>,
    /// Resolved after loading (it depends on the project's enums), so never stored. Shared
    /// between the columns that spell their type alike: a large project declares hundreds of
    /// thousands of columns with a few dozen types.
    #[serde(skip)]
    pub ty: Option<Arc<DataType>>,
    pub nullable: Option<Spanned<bool>>,
    /// Description, audits and tags: kept out of line, since a large project holds hundreds
    /// of thousands of columns and most declare none of them.
    pub docs: Option<Box<ColumnDocs>>,
}

/// The documentation and checks of a declared column.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ColumnDocs {
    pub description: Option<Spanned<String>>,
    pub audits: Vec<Audit>,
    pub tags: Vec<Spanned<String>>,
    /// `deprecated = "reason"`: readers should stop relying on the column.
    pub deprecated: Option<Spanned<String>>,
    /// `deprecation_date`, a `YYYY-MM-DD` date.
    pub deprecation_date: Option<Spanned<String>>,
}

impl Column {
    /// Whether the column may hold nulls: `nullable` defaults to true.
    pub fn is_nullable(&self) -> bool {
        self.nullable.as_ref().is_none_or(|n| n.value)
    }
}

/// An audit attached to a column: a name, or a table such as `{ accepted_values = [..] }`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Audit {
    pub name: String,
    pub loc: Loc,
    /// Its arguments as written: `{ name = { key = value } }` gives each key;
    /// `{ accepted_values = [..] }` gives `values`; `{ name = value }` gives `value`.
    pub args: Vec<(String, AuditArg)>,
}

/// An audit argument's value, as TOML wrote it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum AuditArg {
    Text(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    List(Vec<AuditArg>),
    /// A table, a date or anything else no audit takes.
    Other(String),
}

impl AuditArg {
    /// An argument as TOML wrote it.
    pub fn of(value: &toml_edit::Value) -> Self {
        match value {
            toml_edit::Value::String(s) => AuditArg::Text(s.value().clone()),
            toml_edit::Value::Integer(i) => AuditArg::Int(*i.value()),
            toml_edit::Value::Float(f) => AuditArg::Float(*f.value()),
            toml_edit::Value::Boolean(b) => AuditArg::Bool(*b.value()),
            toml_edit::Value::Array(items) => AuditArg::List(items.iter().map(Self::of).collect()),
            other => AuditArg::Other(other.to_string().trim().to_string()),
        }
    }
}

/// What an enum's members resolve to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnumBase {
    Varchar,
    Integer,
}

/// An enum domain, `enums/<name>.toml`.
#[derive(Debug)]
pub struct EnumDef {
    pub name: String,
    pub file: FileId,
    pub description: Option<Spanned<String>>,
    /// Member names and their values (as text), in file order.
    pub members: Vec<(Spanned<String>, Spanned<String>)>,
    pub base: Option<EnumBase>,
}

impl EnumDef {
    pub fn values(&self) -> Vec<String> {
        self.members.iter().map(|(_, v)| v.value.clone()).collect()
    }

    /// The type the enum resolves to: VARCHAR or INTEGER.
    pub fn base_type(&self) -> DataType {
        match self.base {
            Some(EnumBase::Integer) => DataType::Integer,
            _ => DataType::Varchar(None),
        }
    }
}

/// A raw source table, one top-level table of a `sources/*.toml` file.
#[derive(Debug)]
pub struct SourceTable {
    pub name: Spanned<String>,
    pub file: FileId,
    pub database: Option<Spanned<String>>,
    pub schema: Option<Spanned<String>>,
    pub table: Option<Spanned<String>>,
    pub tags: Vec<Spanned<String>>,
    pub description: Option<Spanned<String>>,
    pub columns: Vec<Column>,
    /// `[NAME.measures.*]` and the other semantic keys, when the source has any.
    pub semantic: Option<Box<semantic::Semantic>>,
    /// The source's own audits, of the relation rather than one column.
    pub audits: Vec<Audit>,
    /// `complete = true`: the declared columns are the table's whole shape (compile reads
    /// `*` over it and rejects references to other columns; diff reports undeclared columns).
    pub complete: bool,
}

impl SourceTable {
    pub fn relation_name(&self) -> &str {
        self.table.as_ref().map_or(&self.name.value, |t| &t.value)
    }
}

/// Files of a project whose first line starts with this marker (alone, or followed by a space
/// and any text) are machine-written; sqb never edits them.
pub const GENERATED_MARKER: &str = "# @generated";

pub fn is_generated(text: &str) -> bool {
    text.lines()
        .next()
        .and_then(|l| l.strip_prefix(GENERATED_MARKER))
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(char::is_whitespace))
}
