//! Planning `contract generate`: which declaration edits the warehouse evidence calls for.
//!
//! Pure: it reads findings from the diff core and the physical columns, and returns proposals
//! (what to change in which file) and what it refused to change and why. It never edits.

use serde::Serialize;

use crate::contract::diff::{diff, type_agrees, Declared, FindingKind, Shape};
use crate::contract::inspect::Inspected;
use crate::project::{is_generated, Column, Model, Policy, Project};
use crate::select::Resource;
use crate::source::FileId;
use crate::types::{self, DataType};
use crate::warehouse::PhysicalColumn;

/// One declaration edit. The action names are part of the JSON output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Fill the `type` of a declared column that has none.
    SetType,
    /// Append a physical column missing from the declaration.
    AddColumn,
    /// `--overwrite`: replace a conflicting type.
    ReplaceType,
    /// `--overwrite`: rename a declaration to the physical spelling.
    RenameColumn,
    /// `--overwrite`: remove a declaration absent physically.
    RemoveColumn,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::SetType => "set_type",
            Action::AddColumn => "add_column",
            Action::ReplaceType => "replace_type",
            Action::RenameColumn => "rename_column",
            Action::RemoveColumn => "remove_column",
        }
    }
}

/// Where in its file a resource's columns live.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "name")]
pub enum Home {
    /// The root of a model sidecar (or schema file).
    Root,
    /// A source's table in a `sources/*.toml` file.
    Source(String),
}

#[derive(Debug, Clone, Serialize)]
pub struct Proposal {
    pub file: String,
    /// The file does not exist yet: a new sidecar.
    pub creates_file: bool,
    pub resource_type: &'static str,
    pub resource: String,
    pub column: String,
    pub action: Action,
    pub old: Option<String>,
    pub new: Option<String>,
    /// For `add_column`: write `nullable = false`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub not_null: bool,
    #[serde(skip)]
    pub home: Home,
}

/// A change the evidence calls for that sqb will not make, and why.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case", tag = "reason")]
pub enum Skipped {
    /// The column is declared in a shared schema: one model's evidence never changes it.
    OwnershipConflict {
        resource: String,
        column: String,
        action: Action,
        schema: String,
        file: String,
        used_by: Vec<String>,
    },
    /// The file starts with `# @generated`.
    GeneratedFile { resource: String, file: String },
    /// The resource has no readable relation in the target.
    NoRelation { resource: String, relation: String },
}

impl Skipped {
    pub fn describe(&self) -> String {
        match self {
            Skipped::OwnershipConflict { resource, column, action, schema, file, used_by } => format!(
                "ownership conflict: {} of column `{column}` of `{resource}` would change schema `{schema}` ({file}), shared by {}; change the schema by hand",
                action.as_str(),
                used_by.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ")
            ),
            Skipped::GeneratedFile { resource, file } => {
                format!("{file} is marked `# @generated`: `{resource}` was not edited")
            }
            Skipped::NoRelation { resource, relation } => {
                format!("`{resource}`: no readable relation {relation}, nothing to generate from")
            }
        }
    }
}

#[derive(Debug, Default)]
pub struct Plan {
    pub proposals: Vec<Proposal>,
    pub skipped: Vec<Skipped>,
}

/// Plans the edits for every inspected resource.
pub fn plan(project: &Project, items: &[Inspected<'_>], overwrite: bool) -> Plan {
    let mut out = Plan::default();
    for item in items {
        plan_resource(project, item, overwrite, &mut out);
    }
    out
}

/// The file a resource's own declarations live in, and whether it must be created.
fn own_file(project: &Project, resource: &Resource<'_>) -> (String, bool, FileId, Home) {
    match resource {
        Resource::Model(m) => match m.sidecar {
            Some(id) => (
                project.sources.get(id).rel_path.clone(),
                false,
                id,
                Home::Root,
            ),
            None => {
                let sql = &project.sources.get(m.sql_file).rel_path;
                let toml = format!("{}.toml", sql.strip_suffix(".sql").unwrap_or(sql));
                (toml, true, m.sql_file, Home::Root)
            }
        },
        Resource::Source(s) => (
            project.sources.get(s.file).rel_path.clone(),
            false,
            s.file,
            Home::Source(s.name.value.clone()),
        ),
    }
}

fn plan_resource(project: &Project, item: &Inspected<'_>, overwrite: bool, out: &mut Plan) {
    let resource = &item.resource;
    let Some(physical) = item.physical.as_ref().filter(|p| p.unavailable.is_none()) else {
        out.skipped.push(Skipped::NoRelation {
            resource: resource.name().to_string(),
            relation: item.relation.clone(),
        });
        return;
    };
    let (file, creates_file, file_id, home) = own_file(project, resource);
    if !creates_file && is_generated(&project.sources.get(file_id).text) {
        out.skipped.push(Skipped::GeneratedFile {
            resource: resource.name().to_string(),
            file,
        });
        return;
    }
    let columns: Vec<&Column> = match resource {
        Resource::Model(m) => project.effective_columns(m),
        Resource::Source(s) => s.columns.iter().collect(),
    };
    let enums = |name: &str| project.enum_named(name);
    let declared = Declared {
        engine: project.engine(),
        shape: shape_of(project, resource),
        columns: &columns,
        enums: &enums,
        resource_loc: crate::source::Loc::file_start(file_id),
    };
    let findings = diff(&declared, Some(physical), &item.relation, None);
    let physical_named = |name: &str| physical.columns.iter().find(|c| c.name == name);
    let declared_named = |name: &str| columns.iter().copied().find(|c| c.name.value == name);
    let proposal =
        |column: &str, action: Action, old: Option<String>, new: Option<String>| Proposal {
            file: file.clone(),
            creates_file,
            resource_type: resource.resource_type(),
            resource: resource.name().to_string(),
            column: column.to_string(),
            action,
            old,
            new,
            not_null: false,
            home: home.clone(),
        };
    for finding in findings {
        let Some(name) = finding.column.as_deref() else {
            continue;
        };
        match finding.kind {
            FindingKind::UndeclaredPhysicalColumn => {
                let Some(pc) = physical_named(name) else {
                    continue;
                };
                let mut p = proposal(
                    name,
                    Action::AddColumn,
                    None,
                    Some(canonical_type(project, pc)),
                );
                p.not_null = physical.kind.knows_nullability() && pc.nullable == Some(false);
                out.proposals.push(p);
            }
            // Fill a missing type always; replace a conflicting one only with --overwrite.
            FindingKind::MissingType | FindingKind::TypeMismatch
                if overwrite || finding.kind == FindingKind::MissingType =>
            {
                let (Some(decl), Some(pc)) = (declared_named(name), physical_named(name)) else {
                    continue;
                };
                let (action, old) = match finding.kind {
                    FindingKind::MissingType => (Action::SetType, None),
                    _ => (
                        Action::ReplaceType,
                        decl.type_text.as_ref().map(|t| t.value.clone()),
                    ),
                };
                push_or_conflict(
                    project,
                    resource,
                    decl,
                    proposal(name, action, old, Some(canonical_type(project, pc))),
                    out,
                );
            }
            FindingKind::NameConflict if overwrite => {
                let (Some(decl), Some(pc)) = (
                    declared_named(name),
                    finding.physical_column.as_deref().and_then(physical_named),
                ) else {
                    continue;
                };
                if push_or_conflict(
                    project,
                    resource,
                    decl,
                    proposal(
                        name,
                        Action::RenameColumn,
                        Some(name.to_string()),
                        Some(pc.name.clone()),
                    ),
                    out,
                ) {
                    type_after_rename(
                        &declared,
                        decl,
                        pc,
                        project,
                        &proposal(&pc.name, Action::SetType, None, None),
                        out,
                    );
                }
            }
            FindingKind::MissingPhysicalColumn if overwrite => {
                let Some(decl) = declared_named(name) else {
                    continue;
                };
                let old = decl.type_text.as_ref().map(|t| t.value.clone());
                push_or_conflict(
                    project,
                    resource,
                    decl,
                    proposal(name, Action::RemoveColumn, old, None),
                    out,
                );
            }
            _ => {}
        }
    }
}

/// After a rename, the column's type still has to agree.
fn type_after_rename(
    declared: &Declared<'_>,
    decl: &Column,
    pc: &PhysicalColumn,
    project: &Project,
    base: &Proposal,
    out: &mut Plan,
) {
    let new = Some(canonical_type(project, pc));
    match (&decl.ty, &decl.type_text) {
        (Some(ty), Some(text)) if !type_agrees(declared, ty, pc) => {
            out.proposals.push(Proposal {
                action: Action::ReplaceType,
                old: Some(text.value.clone()),
                new,
                ..base.clone()
            });
        }
        (None, None) => out.proposals.push(Proposal {
            action: Action::SetType,
            new,
            ..base.clone()
        }),
        _ => {}
    }
}

fn shape_of(project: &Project, resource: &Resource<'_>) -> Shape {
    match resource {
        Resource::Model(m) => match project.policy(m) {
            Policy::Enforced => Shape::Closed,
            Policy::Implicit => Shape::Open,
            Policy::Explicit | Policy::None => Shape::Metadata,
        },
        Resource::Source(_) => Shape::Open,
    }
}

/// Adds the proposal, or an ownership conflict when the column lives in a shared schema.
/// Returns whether the proposal was added.
fn push_or_conflict(
    project: &Project,
    resource: &Resource<'_>,
    decl: &Column,
    proposal: Proposal,
    out: &mut Plan,
) -> bool {
    let Resource::Model(model) = resource else {
        out.proposals.push(proposal);
        return true;
    };
    if Some(decl.file) == model.sidecar {
        out.proposals.push(proposal);
        return true;
    }
    let Some(schema) = project.schemas.values().find(|s| s.file == decl.file) else {
        out.proposals.push(proposal);
        return true;
    };
    let used_by = project
        .models
        .iter()
        .filter(|m: &&Model| {
            m.props
                .model_schema
                .as_ref()
                .is_some_and(|s| s.value == schema.name)
        })
        .map(|m| m.name.clone())
        .collect();
    out.skipped.push(Skipped::OwnershipConflict {
        resource: proposal.resource,
        column: proposal.column,
        action: proposal.action,
        schema: schema.name.clone(),
        file: project.sources.get(schema.file).rel_path.clone(),
        used_by,
    });
    false
}

/// The type to write for a physical column: the canonical portable spelling, a project enum's
/// name where the engine's enum has the same members, and user-defined types schema-qualified
/// where the catalog printed them bare.
pub fn canonical_type(project: &Project, column: &PhysicalColumn) -> String {
    let ty = types::parse(&column.type_text, project.engine())
        .unwrap_or_else(|_| DataType::Named(column.type_text.to_lowercase()));
    rewrite(project, ty, column).to_string()
}

fn rewrite(project: &Project, ty: DataType, column: &PhysicalColumn) -> DataType {
    match ty {
        DataType::Array { element, size } => DataType::Array {
            element: Box::new(rewrite(project, *element, column)),
            size,
        },
        DataType::Enum(members) => match enum_with_members(project, &members, None) {
            Some(name) => DataType::Named(name),
            None => DataType::Enum(members),
        },
        DataType::Named(name) => {
            let last = name.rsplit('.').next().unwrap_or(&name).to_string();
            if let Some(found) = column
                .enum_members()
                .and_then(|m| enum_with_members(project, m, Some(&last)))
            {
                return DataType::Named(found);
            }
            let known = types::is_recognized_named(&name) || project.enum_named(&name).is_some();
            match column.type_schema() {
                Some(schema) if !known => {
                    DataType::Named(format!("{}.{name}", crate::ident::quote_ident(schema)))
                }
                _ => DataType::Named(name),
            }
        }
        other => other,
    }
}

/// A project enum with exactly these members, preferring one named `prefer`.
fn enum_with_members(
    project: &Project,
    members: &[String],
    prefer: Option<&str>,
) -> Option<String> {
    let matching: Vec<&str> = project
        .enums
        .values()
        .filter(|e| types::same_members(&e.values(), members))
        .map(|e| e.name.as_str())
        .collect();
    prefer
        .and_then(|p| matching.iter().find(|n| n.eq_ignore_ascii_case(p)).copied())
        .or(matching.first().copied())
        .map(String::from)
}
