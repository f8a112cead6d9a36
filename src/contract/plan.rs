//! Planning `contract generate`: which declaration edits the warehouse evidence calls for.
//!
//! Pure: it reads findings from the diff core and the physical columns, and returns proposals
//! (what to change in which file) and what it refused to change and why. It never edits. Each
//! finding kind has one rule ([`Rules`]).

use std::sync::OnceLock;

use serde::Serialize;

use crate::catalog::{PhysicalColumn, PhysicalRelation};
use crate::contract::adoption::{SourceNames, Undeclared};
use crate::contract::diff::{diff, type_agrees, Declared, FindingKind};
use crate::contract::matching::Inspected;
use crate::engine::Engine;
use crate::project::{is_generated, Column, Home, Model, Project, Resource};
use crate::semantic::Uses;
use crate::types::{self, DataType};

/// One declaration edit. The action names are part of the JSON output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, strum::IntoStaticStr)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Action {
    /// Declare a relation of an adopted schema as a new source (its columns follow as
    /// `add_column`s).
    AddSource,
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
    /// The name used in the JSON output and in messages.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
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
    /// For `add_source`: the relation's schema.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// For `add_source`: the relation's name, where the source's name differs from it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table: Option<String>,
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
    /// `--overwrite` would rename a column to a spelling that models reading its old name do
    /// not find (the engine compares names exactly).
    BreakingRename {
        resource: String,
        column: String,
        new: String,
        /// Each model that reads the old name, with its SQL file.
        read_by: Vec<String>,
    },
    /// An open source declares every column of its relation: `complete = true` would make a
    /// new column drift, and reading an undeclared one an error.
    CouldBeComplete { resource: String, file: String },
    /// `--overwrite` would remove a column that semantic contracts use.
    SemanticUse {
        resource: String,
        column: String,
        /// Each use, with where it is declared.
        used_by: Vec<String>,
    },
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
            Skipped::BreakingRename { resource, column, new, read_by } => format!(
                "column `{column}` of `{resource}` was not renamed to `{new}`: {} {} `{column}`, which no longer names it (the warehouse's rename broke {}); quote \"{new}\" in {} SQL, or rename the column back in the warehouse",
                read_by.join(", "),
                if read_by.len() == 1 { "reads" } else { "read" },
                if read_by.len() == 1 { "it" } else { "them" },
                if read_by.len() == 1 { "its" } else { "their" },
            ),
            Skipped::CouldBeComplete { resource, file } => format!(
                "source `{resource}` declares every column of its relation: `complete = true` under [{resource}] ({file}) would make a new column drift and reading an undeclared one an error (sqb leaves that to you)"
            ),
            Skipped::SemanticUse { resource, column, used_by } => format!(
                "column `{column}` of `{resource}` was not removed: {} {} it; change {} first",
                used_by.join(", "),
                if used_by.len() == 1 { "uses" } else { "use" },
                if used_by.len() == 1 { "that" } else { "those" },
            ),
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
    // Built on the first removal that asks where a column is used.
    let uses = OnceLock::new();
    // Each resource is planned on its own, on every core, in input order.
    let parts = crate::parallel::map(items, |item| {
        let mut part = Plan::default();
        plan_resource(project, &uses, item, overwrite, &mut part);
        part
    });
    let mut out = Plan {
        proposals: Vec::with_capacity(parts.iter().map(|p| p.proposals.len()).sum()),
        skipped: Vec::new(),
    };
    for part in parts {
        out.proposals.extend(part.proposals);
        out.skipped.extend(part.skipped);
    }
    out
}

/// The file a resource's own declarations live in, and whether it must be created (a model
/// without a sidecar gets one beside its SQL file).
fn own_file(project: &Project, resource: &Resource<'_>) -> (String, bool) {
    let path = &project.sources.get(resource.file()).rel_path;
    match resource {
        Resource::Model(m) if m.sidecar.is_none() => (
            format!("{}.toml", path.strip_suffix(".sql").unwrap_or(path)),
            true,
        ),
        _ => (path.clone(), false),
    }
}

fn plan_resource<'p>(
    project: &'p Project,
    uses: &OnceLock<Uses<'p>>,
    item: &Inspected<'p>,
    overwrite: bool,
    out: &mut Plan,
) {
    let resource = &item.resource;
    let Some(physical) = item.physical.as_ref().filter(|p| p.unavailable.is_none()) else {
        out.skipped.push(Skipped::NoRelation {
            resource: resource.name().to_string(),
            relation: item.relation.clone(),
        });
        return;
    };
    let (file, creates_file) = own_file(project, resource);
    if !creates_file && is_generated(project.sources.get(resource.file()).text()) {
        out.skipped.push(Skipped::GeneratedFile {
            resource: resource.name().to_string(),
            file,
        });
        return;
    }
    let rules = Rules {
        project,
        uses,
        resource,
        physical,
        declared: Declared::of(project, resource),
        base: Proposal {
            file,
            creates_file,
            resource_type: resource.resource_type(),
            resource: resource.name().to_string(),
            column: String::new(),
            action: Action::SetType,
            old: None,
            new: None,
            not_null: false,
            schema: None,
            table: None,
            home: resource.home(),
        },
    };
    for finding in diff(&rules.declared, Some(physical), &item.relation, None) {
        let Some(name) = finding.column.as_deref() else {
            continue;
        };
        match finding.kind {
            FindingKind::UndeclaredPhysicalColumn => rules.add_column(name, out),
            // Fill a missing type always; replace a conflicting one only with --overwrite.
            FindingKind::MissingType => rules.retype(name, Action::SetType, out),
            FindingKind::TypeMismatch if overwrite => rules.retype(name, Action::ReplaceType, out),
            FindingKind::NameConflict if overwrite => {
                rules.rename(name, finding.physical_column.as_deref(), out)
            }
            FindingKind::MissingPhysicalColumn if overwrite => rules.remove(name, out),
            _ => {}
        }
    }
    rules.suggest_complete(out);
}

/// The rules for one resource: its physical relation, its declarations, and the proposal every
/// edit of its file starts from.
struct Rules<'a, 'p> {
    project: &'p Project,
    uses: &'a OnceLock<Uses<'p>>,
    resource: &'a Resource<'p>,
    physical: &'a PhysicalRelation,
    declared: Declared<'p>,
    base: Proposal,
}

impl Rules<'_, '_> {
    /// An open source that declares exactly its relation's columns could say `complete = true`:
    /// said, not written, since how strict a declaration is stays an authored decision.
    fn suggest_complete(&self, out: &mut Plan) {
        let Resource::Source(source) = self.resource else {
            return;
        };
        let declared = &self.declared.columns;
        let exact = declared.len() == self.physical.columns.len()
            && declared
                .iter()
                .all(|d| self.physical_named(&d.name.value).is_some());
        if !source.complete && exact && !declared.is_empty() {
            out.skipped.push(Skipped::CouldBeComplete {
                resource: source.name.value.clone(),
                file: self.base.file.clone(),
            });
        }
    }

    fn physical_named(&self, name: &str) -> Option<&PhysicalColumn> {
        self.physical.columns.iter().find(|c| c.name == name)
    }

    fn declared_named(&self, name: &str) -> Option<&Column> {
        self.declared
            .columns
            .iter()
            .copied()
            .find(|c| c.name.value == name)
    }

    fn proposal(
        &self,
        column: &str,
        action: Action,
        old: Option<String>,
        new: Option<String>,
    ) -> Proposal {
        Proposal {
            column: column.to_string(),
            action,
            old,
            new,
            ..self.base.clone()
        }
    }

    /// An undeclared physical column is appended, `nullable = false` where the catalog knows.
    fn add_column(&self, name: &str, out: &mut Plan) {
        let Some(pc) = self.physical_named(name) else {
            return;
        };
        let mut p = self.proposal(
            name,
            Action::AddColumn,
            None,
            Some(canonical_type(self.project, pc)),
        );
        p.not_null = self.physical.kind.knows_nullability() && pc.nullable == Some(false);
        out.proposals.push(p);
    }

    /// A missing type is filled (`SetType`) or a conflicting one replaced (`ReplaceType`) with
    /// the physical type.
    fn retype(&self, name: &str, action: Action, out: &mut Plan) {
        let (Some(decl), Some(pc)) = (self.declared_named(name), self.physical_named(name)) else {
            return;
        };
        let old = match action {
            Action::ReplaceType => decl.type_text.as_ref().map(|t| t.value.to_string()),
            _ => None,
        };
        let new = Some(canonical_type(self.project, pc));
        self.push_or_conflict(decl, self.proposal(name, action, old, new), out);
    }

    /// A declaration spelled differently from its physical column takes the physical spelling,
    /// and then the physical type where its own disagrees or is missing.
    fn rename(&self, name: &str, physical_name: Option<&str>, out: &mut Plan) {
        let (Some(decl), Some(pc)) = (
            self.declared_named(name),
            physical_name.and_then(|n| self.physical_named(n)),
        ) else {
            return;
        };
        let renamed = self.proposal(
            name,
            Action::RenameColumn,
            Some(name.to_string()),
            Some(pc.name.clone()),
        );
        if self.push_or_conflict(decl, renamed, out) {
            self.type_after_rename(decl, pc, out);
        }
    }

    /// A declaration absent physically is removed, unless a semantic contract uses it.
    fn remove(&self, name: &str, out: &mut Plan) {
        let Some(decl) = self.declared_named(name) else {
            return;
        };
        let uses = self
            .uses
            .get_or_init(|| Uses::new(self.project))
            .of(self.resource.name(), name);
        if !uses.is_empty() {
            let sources = &self.project.sources;
            let used_by = uses
                .into_iter()
                .map(|u| {
                    let file = sources.get(u.loc.file);
                    let (line, _) = file.line_col(u.loc.span().start);
                    format!("{} ({}:{line})", u.what, file.rel_path)
                })
                .collect();
            out.skipped.push(Skipped::SemanticUse {
                resource: self.resource.name().to_string(),
                column: name.to_string(),
                used_by,
            });
            return;
        }
        let old = decl.type_text.as_ref().map(|t| t.value.to_string());
        self.push_or_conflict(
            decl,
            self.proposal(name, Action::RemoveColumn, old, None),
            out,
        );
    }

    /// After a rename, the column's type still has to agree.
    fn type_after_rename(&self, decl: &Column, pc: &PhysicalColumn, out: &mut Plan) {
        let base = self.proposal(&pc.name, Action::SetType, None, None);
        let new = Some(canonical_type(self.project, pc));
        match (&decl.ty, &decl.type_text) {
            (Some(ty), Some(text)) if !type_agrees(&self.declared, ty, pc) => {
                out.proposals.push(Proposal {
                    action: Action::ReplaceType,
                    old: Some(text.value.to_string()),
                    new,
                    ..base
                });
            }
            (None, None) => out.proposals.push(Proposal { new, ..base }),
            _ => {}
        }
    }

    /// Adds the proposal, or an ownership conflict when the column lives in a shared schema.
    /// Returns whether the proposal was added.
    fn push_or_conflict(&self, decl: &Column, proposal: Proposal, out: &mut Plan) -> bool {
        let project = self.project;
        let Resource::Model(model) = self.resource else {
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
}

/// New sources for the relations of adopted schemas that nothing declares: one `add_source`
/// and an `add_column` per column, in the file [`Undeclared::file`] names. A relation whose
/// columns were not read is skipped, and said so.
pub fn plan_new_sources(
    project: &Project,
    undeclared: &[Undeclared],
    read: &[(String, Vec<PhysicalRelation>)],
    out: &mut Plan,
) {
    let mut names = SourceNames::new(project.source_tables.iter().map(|s| s.name.value.clone()));
    for u in undeclared {
        let relation = read
            .iter()
            .filter(|(schema, _)| *schema == u.schema)
            .flat_map(|(_, relations)| relations)
            .find(|r| r.name == u.relation && r.unavailable.is_none());
        let Some(relation) = relation else {
            out.skipped.push(Skipped::NoRelation {
                resource: format!("{}.{}", u.schema, u.relation),
                relation: format!("{}.{}", u.schema, u.relation),
            });
            continue;
        };
        let name = names.name(&u.schema, &u.relation);
        let creates_file = !project.sources.files().any(|(_, f)| f.rel_path == u.file);
        let proposal = |column: String, action, new: Option<String>, not_null| Proposal {
            file: u.file.clone(),
            creates_file,
            resource_type: "source",
            resource: name.clone(),
            column,
            action,
            old: None,
            new,
            not_null,
            schema: None,
            table: None,
            home: Home::Source(name.clone()),
        };
        out.proposals.push(Proposal {
            schema: Some(u.schema.clone()),
            table: (name != u.relation).then(|| u.relation.clone()),
            ..proposal(String::new(), Action::AddSource, None, false)
        });
        for column in &relation.columns {
            out.proposals.push(proposal(
                column.name.clone(),
                Action::AddColumn,
                Some(canonical_type(project, column)),
                column.nullable == Some(false),
            ));
        }
    }
}

/// The type to write for a physical column: the canonical portable spelling, a project enum's
/// name where the engine's enum has the same members, and user-defined types schema-qualified
/// where the catalog printed them bare.
pub fn canonical_type(project: &Project, column: &PhysicalColumn) -> String {
    written_type(project.engine(), Some(project), column)
}

/// [`canonical_type`] for a project that does not exist yet (`sqb init`): no project enums.
pub fn portable_type(engine: Engine, column: &PhysicalColumn) -> String {
    written_type(engine, None, column)
}

fn written_type(engine: Engine, project: Option<&Project>, column: &PhysicalColumn) -> String {
    let ty = types::parse(&column.type_text, engine)
        .unwrap_or_else(|_| DataType::Named(column.type_text.to_lowercase()));
    rewrite(engine, project, ty, column).to_string()
}

fn rewrite(
    engine: Engine,
    project: Option<&Project>,
    ty: DataType,
    column: &PhysicalColumn,
) -> DataType {
    match ty {
        DataType::Array { element, size } => DataType::Array {
            element: Box::new(rewrite(engine, project, *element, column)),
            size,
        },
        DataType::Enum(members) => match project.and_then(|p| enum_with_members(p, &members, None))
        {
            Some(name) => DataType::Named(name),
            None => DataType::Enum(members),
        },
        DataType::Named(name) => {
            let last = name.rsplit('.').next().unwrap_or(&name).to_string();
            if let Some(found) = project.and_then(|p| {
                column
                    .enum_members()
                    .and_then(|m| enum_with_members(p, m, Some(&last)))
            }) {
                return DataType::Named(found);
            }
            let known = types::is_recognized_named(&name, engine)
                || project.is_some_and(|p| p.enum_named(&name).is_some());
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
