//! The pure diff core: declared columns × a physical relation × an engine → findings.
//!
//! No I/O happens here. Names are matched exactly first, then up to case (a `name_conflict`,
//! not a missing plus an undeclared column); types with the engine-aware type system; enum
//! columns against VARCHAR/INTEGER or an enum with the same members.

use std::sync::Arc;

use foldhash::HashMap;

use serde::Serialize;

use crate::catalog::{PhysicalColumn, PhysicalRelation};
use crate::diagnostics::Severity;
use crate::engine::Engine;
use crate::project::{Column, EnumBase, EnumDef, Policy, Project, Resource};
use crate::source::Loc;
use crate::types::{self, DataType};

/// What kind of disagreement a finding reports. The names are part of the JSON wire format.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    strum::IntoStaticStr,
    strum::EnumIter,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum FindingKind {
    RelationMissing,
    MissingPhysicalColumn,
    UndeclaredPhysicalColumn,
    TypeMismatch,
    MissingType,
    NameConflict,
    NullabilityMismatch,
    InspectionUnavailable,
    /// A relation of an adopted schema that no source or model declares.
    UndeclaredRelation,
    /// `contract check`: the target's engine would not run the model's SQL.
    SqlRejected,
    /// `contract check`: sqb's offline analysis proved a column other than the engine describes
    /// it (a defect of sqb's analysis, reported so that it can be fixed).
    AnalysisDisagreement,
}

impl FindingKind {
    /// The name used in the JSON report.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// A kind only `contract check` finds, from a model's SQL as the engine describes it.
    pub fn checks_sql(self) -> bool {
        matches!(
            self,
            FindingKind::SqlRejected | FindingKind::AnalysisDisagreement
        )
    }
}

/// How much of the declared shape the contract policy validates: its coverage of the relation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coverage {
    /// `enforced`, and sources marked `complete = true`: the declared columns are the
    /// complete shape.
    Closed,
    /// implicit mode, and sources not marked complete: declared columns must exist; others may.
    Open,
    /// explicit mode and `contract = "none"`: declarations are metadata; types still enforced.
    Metadata,
}

impl Coverage {
    /// The coverage a model's contract policy gives its declared columns.
    pub fn of(policy: Policy) -> Self {
        match policy {
            Policy::Enforced => Coverage::Closed,
            Policy::Implicit => Coverage::Open,
            Policy::Explicit | Policy::None => Coverage::Metadata,
        }
    }

    pub fn severity(self, kind: FindingKind) -> Severity {
        use FindingKind::*;
        use Severity::*;
        match (kind, self) {
            (RelationMissing | TypeMismatch | SqlRejected, _) => Error,
            (InspectionUnavailable | UndeclaredRelation | AnalysisDisagreement, _) => Warning,
            (UndeclaredPhysicalColumn, Coverage::Closed) => Error,
            (UndeclaredPhysicalColumn, _) => Info,
            (MissingType, Coverage::Metadata) => Info,
            (MissingType, _) => Warning,
            (MissingPhysicalColumn | NameConflict | NullabilityMismatch, Coverage::Metadata) => {
                Warning
            }
            (MissingPhysicalColumn | NameConflict | NullabilityMismatch, _) => Error,
        }
    }
}

/// One disagreement between a declaration and its physical relation.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub kind: FindingKind,
    pub severity: Severity,
    /// The column as declared (or, for undeclared columns, as stored).
    pub column: Option<String>,
    /// The physical spelling, for name conflicts.
    pub physical_column: Option<String>,
    pub declared_type: Option<String>,
    pub physical_type: Option<String>,
    pub message: String,
    /// The declaration's location, where one exists.
    pub loc: Option<Loc>,
    /// For `nullability_mismatch`: whether the declaration and the catalog say nullable.
    pub nullable: Option<(bool, bool)>,
}

/// Looks up the project's enums by type name.
pub type Enums<'a> = Box<dyn Fn(&str) -> Option<&'a EnumDef> + 'a>;

/// The declaration side of one resource.
pub struct Declared<'a> {
    pub engine: Engine,
    /// Compare lengths, precisions and scales (`settings.compare_type_size`, default true).
    pub compare_sizes: bool,
    pub coverage: Coverage,
    pub columns: Vec<&'a Column>,
    pub enums: Enums<'a>,
    /// Where to point findings that have no declaration (a source's name; a model's sidecar, or
    /// its SQL file).
    pub resource_loc: Loc,
}

impl<'a> Declared<'a> {
    /// The declaration side of `resource`: its effective columns, and the coverage its contract
    /// policy gives them (sources are open).
    pub fn of(project: &'a Project, resource: &Resource<'a>) -> Self {
        let (columns, coverage, resource_loc) = match *resource {
            Resource::Model(m) => (
                project.effective_columns(m),
                Coverage::of(project.policy(m)),
                Loc::file_start(resource.file()),
            ),
            Resource::Source(s) => (
                s.columns.iter().collect(),
                match s.complete {
                    true => Coverage::Closed,
                    false => Coverage::Open,
                },
                s.name.loc.clone(),
            ),
        };
        Self {
            engine: project.engine(),
            compare_sizes: project.config.settings.compares_type_size(),
            coverage,
            columns,
            enums: Box::new(|name| project.enum_named(name)),
            resource_loc,
        }
    }
}

/// Findings for a resource whose relation was (or was not) found.
pub fn diff(
    declared: &Declared<'_>,
    physical: Option<&PhysicalRelation>,
    relation: &str,
    case_only_match: Option<&str>,
) -> Vec<Finding> {
    let Some(physical) = physical else {
        let mut message = format!("relation {relation} does not exist");
        if let Some(other) = case_only_match {
            message.push_str(&format!("; `{other}` differs from it only by case"));
        }
        return vec![finding(
            declared,
            FindingKind::RelationMissing,
            message,
            Some(declared.resource_loc.clone()),
        )];
    };
    if let Some(reason) = &physical.unavailable {
        let message = format!("relation {relation} exists but could not be inspected: {reason}");
        return vec![finding(
            declared,
            FindingKind::InspectionUnavailable,
            message,
            Some(declared.resource_loc.clone()),
        )];
    }
    let mut out = Vec::new();
    let exact = Exact::new(&physical.columns);
    let matched: Vec<Option<usize>> = declared
        .columns
        .iter()
        .enumerate()
        .map(|(position, c)| exact.find(&c.name.value, position))
        .collect();
    // Names up to case, needed only when a declared name has no exact match.
    let folded = std::cell::OnceCell::new();
    let folded = || {
        folded.get_or_init(|| {
            let mut folded: HashMap<String, Vec<usize>> = HashMap::default();
            for (i, c) in physical.columns.iter().enumerate() {
                folded.entry(c.name.to_lowercase()).or_default().push(i);
            }
            folded
        })
    };
    let mut used = vec![false; physical.columns.len()];
    for &i in matched.iter().flatten() {
        used[i] = true;
    }
    for (column, matched) in declared.columns.iter().zip(matched) {
        let name = column.name.value.as_str();
        if let Some(i) = matched {
            compare_column(
                declared,
                column,
                &physical.columns[i],
                physical.kind.knows_nullability(),
                &mut out,
            );
            continue;
        }
        let candidate = folded()
            .get(&name.to_lowercase())
            .and_then(|ids| ids.iter().copied().find(|&i| !used[i]));
        match candidate {
            Some(i) => {
                used[i] = true;
                out.push(name_conflict(declared, column, &physical.columns[i]));
            }
            None => out.push(
                finding(
                    declared,
                    FindingKind::MissingPhysicalColumn,
                    format!("column `{name}` is declared but the relation has no such column"),
                    Some(column.name.loc.clone()),
                )
                .with_types(column.type_text.as_ref().map(|t| t.value.to_string()), None)
                .with_column(name),
            ),
        }
    }
    for (c, _) in physical
        .columns
        .iter()
        .zip(&used)
        .filter(|(_, used)| !**used)
    {
        out.push(
            finding(
                declared,
                FindingKind::UndeclaredPhysicalColumn,
                format!("column `{}` is in the relation but not declared", c.name),
                Some(declared.resource_loc.clone()),
            )
            .with_types(None, Some(c.type_text.to_string()))
            .with_column(&c.name),
        );
    }
    out
}

/// The physical columns by exact name. A declared column is looked for first at its own
/// position (sidecars written by `generate` follow the catalog's order), and the columns are
/// indexed by name only when one is not there.
struct Exact<'p> {
    columns: &'p [PhysicalColumn],
    by_name: std::cell::OnceCell<HashMap<&'p str, usize>>,
}

impl<'p> Exact<'p> {
    fn new(columns: &'p [PhysicalColumn]) -> Self {
        Self {
            columns,
            by_name: std::cell::OnceCell::new(),
        }
    }

    /// The index of the column named exactly `name` (a catalog's names are unique within a
    /// relation), trying `position` first.
    fn find(&self, name: &str, position: usize) -> Option<usize> {
        if self.columns.get(position).is_some_and(|c| c.name == name) {
            return Some(position);
        }
        let by_name = self.by_name.get_or_init(|| {
            self.columns
                .iter()
                .enumerate()
                .map(|(i, c)| (c.name.as_str(), i))
                .collect()
        });
        by_name.get(name).copied()
    }
}

fn finding(
    declared: &Declared<'_>,
    kind: FindingKind,
    message: String,
    loc: Option<Loc>,
) -> Finding {
    Finding {
        kind,
        severity: declared.coverage.severity(kind),
        column: None,
        physical_column: None,
        declared_type: None,
        physical_type: None,
        message,
        loc,
        nullable: None,
    }
}

impl Finding {
    fn with_nullable(mut self, declared: bool, physical: bool) -> Self {
        self.nullable = Some((declared, physical));
        self
    }

    fn with_types(mut self, declared: Option<String>, physical: Option<String>) -> Self {
        self.declared_type = declared;
        self.physical_type = physical;
        self
    }

    fn with_column(mut self, name: &str) -> Self {
        self.column = Some(name.to_string());
        self
    }
}

fn name_conflict(declared: &Declared<'_>, column: &Column, physical: &PhysicalColumn) -> Finding {
    let name = &column.name.value;
    let mut f = finding(
        declared,
        FindingKind::NameConflict,
        format!(
            "column `{name}` is declared, but the relation spells it `{}`",
            physical.name
        ),
        Some(column.name.loc.clone()),
    )
    .with_types(
        column.type_text.as_ref().map(|t| t.value.to_string()),
        Some(physical.type_text.to_string()),
    )
    .with_column(name);
    f.physical_column = Some(physical.name.clone());
    f
}

fn compare_column(
    declared: &Declared<'_>,
    column: &Column,
    physical: &PhysicalColumn,
    knows_nullability: bool,
    out: &mut Vec<Finding>,
) {
    let name = &column.name.value;
    let declared_text = || column.type_text.as_ref().map(|t| t.value.to_string());
    match (&column.ty, &column.type_text) {
        (Some(ty), Some(text)) if !type_agrees_remembered(declared, ty, physical) => {
            out.push(
                finding(
                    declared,
                    FindingKind::TypeMismatch,
                    format!(
                        "column `{name}` is declared {} but is {}",
                        text.value, physical.type_text
                    ),
                    Some(text.loc.clone()),
                )
                .with_types(declared_text(), Some(physical.type_text.to_string()))
                .with_column(name),
            );
        }
        (None, None) => out.push(
            finding(
                declared,
                FindingKind::MissingType,
                format!(
                    "column `{name}` is declared without a type; it is {}",
                    physical.type_text
                ),
                Some(column.name.loc.clone()),
            )
            .with_types(None, Some(physical.type_text.to_string()))
            .with_column(name),
        ),
        // A type that did not parse is a compile error, reported before any diff.
        _ => {}
    }
    if !knows_nullability {
        return;
    }
    let (Some(stated), Some(physical_nullable)) = (&column.nullable, physical.nullable) else {
        return;
    };
    if stated.value != physical_nullable {
        let message = if stated.value {
            format!("column `{name}` is declared nullable but is NOT NULL")
        } else {
            format!("column `{name}` is declared NOT NULL but accepts nulls")
        };
        out.push(
            finding(
                declared,
                FindingKind::NullabilityMismatch,
                message,
                Some(stated.loc.clone()),
            )
            .with_types(declared_text(), Some(physical.type_text.to_string()))
            .with_column(name)
            .with_nullable(stated.value, physical_nullable),
        );
    }
}

/// [`type_agrees`], remembered on each thread for a declared type and a catalog spelling that
/// hundreds of thousands of columns share (the project's `Arc`, the catalog's `TypeText`).
///
/// Only what is a function of the two values alone is remembered: a declared type that names
/// one of the project's enums, or a catalog type with enum members or a domain base, is compared
/// each time. An entry holds the declared type's `Arc`, and a type text is never freed, so no
/// other type or spelling can come to have the addresses it is keyed by.
fn type_agrees_remembered(
    declared: &Declared<'_>,
    ty: &Arc<DataType>,
    physical: &PhysicalColumn,
) -> bool {
    type Key = (usize, usize, usize, bool);
    type Remembered = HashMap<Key, (Arc<DataType>, bool)>;
    /// Beyond this many entries a thread starts again (a long-lived process reloads projects).
    const MAX: usize = 4096;
    thread_local! {
        static REMEMBERED: std::cell::RefCell<Remembered> = Default::default();
    }
    if physical.user_type.is_some() || contains_enum(declared, ty) {
        return type_agrees(declared, ty, physical);
    }
    let key = (
        Arc::as_ptr(ty) as usize,
        // A type text is the process's one copy of its spelling (`TypeText`).
        physical.type_text.as_str().as_ptr() as usize,
        declared.engine.index(),
        declared.compare_sizes && !physical.size_unknown,
    );
    if let Some(agrees) = REMEMBERED.with_borrow(|r| r.get(&key).map(|e| e.1)) {
        return agrees;
    }
    let agrees = type_agrees(declared, ty, physical);
    REMEMBERED.with_borrow_mut(|r| {
        if r.len() >= MAX {
            r.clear();
        }
        r.insert(key, (Arc::clone(ty), agrees));
    });
    agrees
}

/// Whether a physical column satisfies a declared type, enums and domains included.
pub fn type_agrees(declared: &Declared<'_>, ty: &DataType, physical: &PhysicalColumn) -> bool {
    let engine = declared.engine;
    let mut physical_ty = parsed_physical(&physical.type_text, engine);
    let sizeless;
    let compare_sizes = declared.compare_sizes && !physical.size_unknown;
    let ty = match compare_sizes {
        true => ty,
        false => {
            physical_ty = types::without_sizes(&physical_ty);
            sizeless = types::without_sizes(ty);
            &sizeless
        }
    };
    if agrees(declared, ty, &physical_ty, physical.enum_members()) {
        return true;
    }
    physical
        .domain_base()
        .and_then(|base| types::parse(base, engine).ok())
        .map(|base| match compare_sizes {
            true => base,
            false => types::without_sizes(&base),
        })
        .is_some_and(|base| agrees(declared, ty, &base, None))
}

/// A catalog's type text as a type (a name of its own when it does not parse). A warehouse
/// spells a few dozen types hundreds of thousands of times: each thread parses each spelling
/// once.
fn parsed_physical(text: &str, engine: Engine) -> DataType {
    type Parsed = HashMap<String, DataType>;
    thread_local! {
        /// Each engine's spellings.
        static PARSED: std::cell::RefCell<[Parsed; Engine::ALL.len()]> = Default::default();
    }
    PARSED.with_borrow_mut(|parsed| {
        let parsed = &mut parsed[engine.index()];
        if let Some(ty) = parsed.get(text) {
            return ty.clone();
        }
        let ty =
            types::parse(text, engine).unwrap_or_else(|_| DataType::Named(text.to_lowercase()));
        parsed.insert(text.to_string(), ty.clone());
        ty
    })
}

fn agrees(
    declared: &Declared<'_>,
    ty: &DataType,
    physical: &DataType,
    members: Option<&[String]>,
) -> bool {
    match (ty, physical) {
        (DataType::Named(name), _) if (declared.enums)(name).is_some() => {
            let def = (declared.enums)(name).expect("checked above");
            enum_agrees(def, physical, members, declared.engine)
        }
        (
            DataType::Array {
                element: de,
                size: ds,
            },
            DataType::Array {
                element: pe,
                size: ps,
            },
        ) if contains_enum(declared, de) => {
            (ds.is_none() || !declared.engine.keeps_array_sizes() || ds == ps)
                && agrees(declared, de, pe, members)
        }
        _ => types::equivalent(ty, physical, declared.engine),
    }
}

fn contains_enum(declared: &Declared<'_>, ty: &DataType) -> bool {
    match ty {
        DataType::Named(name) => (declared.enums)(name).is_some(),
        DataType::Array { element, .. } => contains_enum(declared, element),
        _ => false,
    }
}

/// An enum column agrees with its base type, or with an engine enum of the same members.
fn enum_agrees(
    def: &EnumDef,
    physical: &DataType,
    members: Option<&[String]>,
    engine: Engine,
) -> bool {
    let values = def.values();
    if let Some(members) = members {
        return crate::types::same_members(members, &values);
    }
    match physical {
        DataType::Enum(m) => crate::types::same_members(m, &values),
        DataType::Integer | DataType::BigInt | DataType::SmallInt => {
            def.base == Some(EnumBase::Integer)
        }
        other => {
            def.base == Some(EnumBase::Varchar)
                && types::equivalent(&DataType::Varchar(None), other, engine)
        }
    }
}

#[cfg(test)]
mod tests;
