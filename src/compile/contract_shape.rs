//! Checking each model's inferred output against its declaration, in dependency order so that
//! upstream shapes are known before the models that read them.

use std::collections::HashMap;

use sqlparser::ast::{Ident, Statement};

use super::deps::{Graph, Reference};
use super::memo;
use super::sql::shape::infer;
use super::sql::{same_column, Interface, Issue, OutColumn, Shape, Upstream, Use};
use super::team_models::{Imported, Imports};
use crate::diagnostics::{did_you_mean, Code, Diagnostic};
use crate::project::{Column, Model, Policy, Project, SourceTable};
use crate::source::{Loc, Spanned};
use crate::types::DataType;

pub struct Known<'a> {
    project: &'a Project,
    shapes: HashMap<&'a str, Vec<OutColumn>>,
    by_name: HashMap<&'a str, &'a Model>,
    by_folded: HashMap<String, &'a Model>,
    sources: HashMap<String, &'a SourceTable>,
    tables: HashMap<(String, String), &'a SourceTable>,
    pub imports: &'a Imports,
}

impl<'a> Known<'a> {
    pub fn new(project: &'a Project, imports: &'a Imports) -> Self {
        let mut sources = HashMap::new();
        let mut tables = HashMap::new();
        for s in &project.source_tables {
            sources.entry(s.name.value.to_lowercase()).or_insert(s);
            if let Some(schema) = &s.schema {
                tables
                    .entry((
                        schema.value.to_lowercase(),
                        s.relation_name().to_lowercase(),
                    ))
                    .or_insert(s);
            }
        }
        Known {
            imports,
            project,
            shapes: HashMap::new(),
            by_name: project
                .models
                .iter()
                .map(|m| (m.name.as_str(), m))
                .collect(),
            by_folded: project
                .models
                .iter()
                .map(|m| (m.name.to_lowercase(), m))
                .collect(),
            sources,
            tables,
        }
    }

    fn model(&self, parts: &[Ident]) -> Option<&'a Model> {
        let [name] = parts else { return None };
        self.by_name
            .get(name.value.as_str())
            .or_else(|| match name.quote_style {
                None => self.by_folded.get(&name.value.to_lowercase()),
                Some(_) => None,
            })
            .copied()
    }

    /// The imported model a reference names by its published relation.
    pub fn imported(&self, parts: &[Ident]) -> Option<&Imported> {
        self.imports.find(parts, self.project.engine())
    }

    fn source(&self, parts: &[Ident]) -> Option<&'a SourceTable> {
        match parts {
            [name] => self.sources.get(&name.value.to_lowercase()).copied(),
            [.., schema, table] => self
                .tables
                .get(&(schema.value.to_lowercase(), table.value.to_lowercase()))
                .copied(),
            _ => None,
        }
    }

    /// Declared columns as facts: their types, and NOT NULL where validated. A type naming a
    /// project enum is left out (it is VARCHAR, INTEGER or an engine enum in the warehouse);
    /// other named types (`oid`, `inet`, a domain) are the engine's own and kept.
    fn declared(&self, columns: &[&Column], nullability_validated: bool) -> Vec<OutColumn> {
        let no_enum = |t: &DataType| {
            t.named_types()
                .iter()
                .all(|n| self.project.enum_named(n).is_none())
        };
        columns
            .iter()
            .map(|c| OutColumn {
                name: c.name.value.clone(),
                position: None,
                ty: c.ty.as_deref().cloned().filter(no_enum),
                nullable: (nullability_validated && !c.is_nullable()).then_some(false),
                lineage: Default::default(),
            })
            .collect()
    }
}

impl Upstream for Known<'_> {
    /// A model's inferred shape, else its enforced declaration; a source's declaration where it
    /// is marked complete. Other sources and external relations have no known shape.
    fn shape(&self, parts: &[Ident]) -> Shape {
        let complete = match self.model(parts) {
            Some(model) => {
                self.shapes.contains_key(model.name.as_str())
                    || self.project.policy(model) == Policy::Enforced
            }
            None => {
                self.source(parts).is_some_and(|s| s.complete)
                    || (self.source(parts).is_none() && self.imported(parts).is_some())
            }
        };
        complete.then(|| self.facts(parts))
    }

    fn interface(&self, parts: &[Ident]) -> Option<Interface> {
        if let Some(model) = self.model(parts) {
            return (self.project.policy(model) == Policy::Enforced)
                .then(|| Interface::Model(model.name.clone()));
        }
        if let Some(source) = self.source(parts) {
            return source
                .complete
                .then(|| Interface::Source(source.name.value.clone()));
        }
        self.imported(parts)
            .map(|i| Interface::Import(i.label.clone()))
    }

    fn origin(&self, parts: &[Ident]) -> (&'static str, String) {
        if let Some(model) = self.model(parts) {
            return ("model", model.name.clone());
        }
        if let Some(source) = self.source(parts) {
            return ("source", source.name.value.clone());
        }
        if let Some(imported) = self.imported(parts) {
            return ("import", imported.label.clone());
        }
        (
            "external",
            parts
                .iter()
                .map(|p| p.value.as_str())
                .collect::<Vec<_>>()
                .join("."),
        )
    }

    fn facts(&self, parts: &[Ident]) -> Vec<OutColumn> {
        if let Some(model) = self.model(parts) {
            let validated = matches!(
                self.project.policy(model),
                Policy::Enforced | Policy::Implicit
            );
            let declared = self.declared(&self.project.effective_columns(model), validated);
            let Some(inferred) = self.shapes.get(model.name.as_str()) else {
                return declared;
            };
            // What the model's own contract guarantees fills what its SQL did not prove.
            return inferred
                .iter()
                .map(|c| {
                    let d = declared
                        .iter()
                        .find(|d| same_column(&d.name, &c.name, self.project.engine()));
                    OutColumn {
                        ty: c.ty.clone().or_else(|| d.and_then(|d| d.ty.clone())),
                        nullable: c.nullable.or_else(|| d.and_then(|d| d.nullable)),
                        ..c.clone()
                    }
                })
                .collect();
        }
        match (self.source(parts), self.imported(parts)) {
            (Some(source), _) => self.declared(&source.columns.iter().collect::<Vec<_>>(), true),
            (None, Some(imported)) => imported.columns.clone(),
            (None, None) => Vec::new(),
        }
    }
}

/// Models in an order where every model comes after the models it reads (cycles left out).
fn dependency_order(project: &Project, graph: &Graph) -> Vec<usize> {
    let n = project.models.len();
    let mut pending: Vec<usize> = (0..n)
        .map(|i| graph.parents[i].iter().filter(|&&p| p < n).count())
        .collect();
    let mut ready: Vec<usize> = (0..n).filter(|&i| pending[i] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(i) = ready.pop() {
        order.push(i);
        for &child in &graph.children[i] {
            if child < n {
                pending[child] -= 1;
                if pending[child] == 0 {
                    ready.push(child);
                }
            }
        }
    }
    order
}

pub fn analysis_enabled(project: &Project, model: &Model) -> bool {
    model
        .props
        .sql_analysis
        .as_ref()
        .or(project.config.settings.sql_analysis.as_ref())
        .is_none_or(|s| s.value)
}

/// Infers every model's output and checks it against the declaration where shape validation is
/// active (implicit mode, or an enforced contract).
/// What the analysis found for one model: its output (where inferred) and its column uses.
#[derive(Debug, Clone, Default)]
pub struct ModelAnalysis {
    pub shape: Shape,
    pub uses: Vec<Use>,
}

/// Infers one model's output and checks it against its declaration. `known` must hold the
/// shapes of the models it reads. Lineage is computed only when `lineage` is set. With `memo`
/// (its key and references), the analysis is remembered for a later compile ([`memo`]).
pub fn analyze_one(
    project: &Project,
    known: &Known<'_>,
    model: &Model,
    statement: &Statement,
    diags: &mut Vec<Diagnostic>,
    lineage: bool,
    memo: Option<(memo::Key, &[Reference])>,
) -> Option<ModelAnalysis> {
    if !analysis_enabled(project, model) {
        return None;
    }
    // The imports check reads each model's lineage: what it reads of them.
    let imports = !project.imports.is_empty();
    let (shape, issues, mut uses) = match memo {
        Some((key, references)) => {
            let recorder = memo::Recorder::new(known);
            let found = infer(statement, project.engine(), &recorder, lineage || imports);
            memo::store(
                &model.name,
                key,
                references,
                recorder,
                (&found.0, &found.1, &found.2),
            );
            found
        }
        None => infer(statement, project.engine(), known, lineage || imports),
    };
    report_issues(project, model, &issues, diags);
    if imports {
        super::team_changes::check(
            project,
            known.imports,
            model,
            statement,
            (shape.as_deref(), &uses),
            diags,
        );
        if !lineage {
            uses = Vec::new();
        }
    }
    Some(checked(project, model, shape, uses, diags))
}

/// A remembered analysis, checked against the model's declaration as it is now.
pub(super) fn reuse(
    project: &Project,
    model: &Model,
    entry: std::sync::Arc<memo::MemoEntry>,
    diags: &mut Vec<Diagnostic>,
) -> ModelAnalysis {
    report_issues(project, model, &entry.issues, diags);
    // A looked-up entry is this model's alone: its shape is taken, not copied.
    let (shape, uses) = match std::sync::Arc::try_unwrap(entry) {
        Ok(entry) => (entry.shape, entry.uses),
        Err(shared) => (shared.shape.clone(), shared.uses.clone()),
    };
    checked(project, model, shape, uses, diags)
}

/// The inferred output checked against the declaration where shape validation is active.
fn checked(
    project: &Project,
    model: &Model,
    shape: Shape,
    uses: Vec<Use>,
    diags: &mut Vec<Diagnostic>,
) -> ModelAnalysis {
    let policy = project.policy(model);
    if matches!(policy, Policy::Enforced | Policy::Implicit) {
        match &shape {
            Some(columns) => compare(project, model, policy, columns, diags),
            None => diags.push(
                Diagnostic::info(Code::ShapeUnknown, format!("the output of model `{}` cannot be inferred; its shape checks were skipped", model.name))
                    .at(Loc::file_start(model.sql_file), "shape not proven")
                    .hint("name computed columns with AS, and read `*` only from models whose shape is known"),
            ),
        }
    }
    ModelAnalysis { shape, uses }
}

/// What the second pass gets of a model that reads models.
pub enum Deferred {
    /// Its statement, to analyse; with its memo key and references, to remember it by.
    Statement(Box<Statement>, Option<(memo::Key, Vec<Reference>)>),
    /// A remembered analysis, reused if every answer it was made from still holds; otherwise
    /// the SQL is parsed and analysed again.
    Remembered(std::sync::Arc<memo::MemoEntry>, memo::Key, Vec<Reference>),
}

/// Analyses the models that read other models, in dependency order, after `analyses` holds
/// those of the models that read none. Each statement is dropped once analysed; lineage is
/// computed only with `keep_lineage`.
pub fn check_dependents(
    project: &Project,
    imports: &Imports,
    mut deferred: Vec<Option<Deferred>>,
    graph: &Graph,
    analyses: &mut HashMap<String, ModelAnalysis>,
    diags: &mut Vec<Diagnostic>,
    keep_lineage: bool,
) {
    let n = project.models.len();
    // Only the shapes of models that other models read are needed here; copying every
    // model's shape would double the analyses' memory on a large project.
    let read_by_models = |i: usize| graph.children[i].iter().any(|&c| c < n);
    let mut known = Known::new(project, imports);
    for (i, model) in project.models.iter().enumerate() {
        if !read_by_models(i) {
            continue;
        }
        if let Some(shape) = analyses.get(&model.name).and_then(|a| a.shape.as_ref()) {
            known.shapes.insert(&model.name, shape.clone());
        }
    }
    for i in dependency_order(project, graph) {
        let model = &project.models[i];
        let Some(item) = deferred[i].take() else {
            continue;
        };
        let analysis = match item {
            Deferred::Remembered(entry, ..) if entry.holds(&known) => {
                Some(reuse(project, model, entry, diags))
            }
            other => {
                let (statement, memo) = match other {
                    // The same text parsed before, so it parses again without a diagnostic.
                    Deferred::Remembered(_, key, references) => {
                        let parsed =
                            super::sql::parse::check_model(project, model, &mut Vec::new());
                        let Some(statement) = parsed else { continue };
                        (statement, Some((key, references)))
                    }
                    Deferred::Statement(statement, memo) => (statement, memo),
                };
                let memo = memo.as_ref().map(|(k, r)| (k.clone(), r.as_slice()));
                analyze_one(
                    project,
                    &known,
                    model,
                    &statement,
                    diags,
                    keep_lineage,
                    memo,
                )
            }
        };
        let Some(analysis) = analysis else {
            continue;
        };
        if let Some(columns) = analysis.shape.as_ref().filter(|_| read_by_models(i)) {
            known.shapes.insert(&model.name, columns.clone());
        }
        analyses.insert(model.name.clone(), analysis);
    }
}

fn compare(
    project: &Project,
    model: &Model,
    policy: Policy,
    output: &[OutColumn],
    diags: &mut Vec<Diagnostic>,
) {
    let engine = project.engine();
    let declared = project.effective_columns(model);
    if declared.is_empty() && policy == Policy::Enforced {
        return; // E020 already says the enforced contract declares nothing.
    }
    for column in &declared {
        if let Some(out) = output
            .iter()
            .find(|o| same_column(&o.name, &column.name.value, engine))
        {
            check_proven(project, model, column, out, diags);
            continue;
        }
        let names: Vec<&str> = output.iter().map(|o| o.name.as_str()).collect();
        let mut diag = Diagnostic::error(
            Code::DeclaredColumnNotInOutput,
            format!(
                "column `{}` is declared, but the SQL of model `{}` does not output it",
                column.name.value, model.name
            ),
        )
        .at(column.name.loc.clone(), "declared here")
        .related(Loc::file_start(model.sql_file), "the model's SQL");
        diag = match did_you_mean(&column.name.value, names.iter().copied()) {
            Some(close) if engine.folds_unquoted_names() && close.eq_ignore_ascii_case(&column.name.value) => diag.hint(format!(
                "the SQL outputs `{close}`: {} folds unquoted names to lower case; quote the alias or rename the declaration",
                engine.title()
            )),
            Some(close) => diag.hint(format!("did you mean `{close}`? the SQL outputs: {}", names.join(", "))),
            None => diag.hint(format!("the SQL outputs: {}", names.join(", "))),
        };
        diags.push(diag);
    }
    if policy != Policy::Enforced {
        return;
    }
    let file = project.sources.get(model.sql_file);
    for out in output {
        if declared
            .iter()
            .any(|c| same_column(&out.name, &c.name.value, engine))
        {
            continue;
        }
        let loc = match out.position {
            Some((line, col)) => {
                let start = file.offset_of(line, col);
                Loc::new(model.sql_file, start..start)
            }
            None => Loc::file_start(model.sql_file),
        };
        diags.push(
            Diagnostic::error(
                Code::OutputColumnNotDeclared,
                format!(
                    "model `{}` outputs `{}`, which its enforced contract does not declare",
                    model.name, out.name
                ),
            )
            .at(loc, "not declared")
            .related(
                Loc::file_start(model.sidecar.unwrap_or(model.sql_file)),
                "the enforced declaration",
            )
            .hint(format!(
                "declare [columns.{}], or leave it out of the SELECT",
                out.name
            )),
        );
    }
}

/// A declared column against what its SQL proves: an incompatible proven type or a proven
/// nullable value under `nullable = false` is an error; an unprovable type is a warning.
fn check_proven(
    project: &Project,
    model: &Model,
    column: &Column,
    out: &OutColumn,
    diags: &mut Vec<Diagnostic>,
) {
    let engine = project.engine();
    if let (Some(declared), Some(text)) = (&column.ty, &column.type_text) {
        let is_enum = declared
            .named_types()
            .iter()
            .any(|n| project.enum_named(n).is_some());
        // A user-defined name (a domain, say) may stand for another spelling of the same type:
        // a difference involving one is not proven, never a mismatch. Built-in names (`oid`,
        // `inet`) are types of their own.
        let user_defined = |t: &DataType| {
            t.named_types()
                .iter()
                .any(|n| !crate::types::is_builtin_named(n, engine))
        };
        let opaque = user_defined(declared) || out.ty.as_ref().is_some_and(user_defined);
        match &out.ty {
            Some(proven) if crate::types::equivalent(declared, proven, engine) => {}
            Some(_) if opaque && !is_enum => {
                diags.push(not_proven(project, model, column, out, text))
            }
            Some(proven) if !is_enum => diags.push(
                Diagnostic::error(
                    Code::ProvenTypeMismatch,
                    format!(
                        "column `{}` is declared {} but the SQL of model `{}` produces {proven}",
                        column.name.value, text.value, model.name
                    ),
                )
                .at(text.loc.clone(), format!("{PRODUCES}{proven}"))
                .related(sql_loc(model, out, project), "this expression")
                .hint(format!(
                    "cast it in the SQL (CAST(… AS {})), or declare {proven}",
                    text.value
                )),
            ),
            None if !is_enum => diags.push(not_proven(project, model, column, out, text)),
            _ => {}
        }
    }
    if let Some(stated) = column.nullable.as_ref().filter(|n| !n.value) {
        if out.nullable == Some(true) {
            diags.push(
                Diagnostic::error(
                    Code::ProvenNullable,
                    format!("column `{}` is declared NOT NULL but the SQL of model `{}` can produce nulls", column.name.value, model.name),
                )
                .at(stated.loc.clone(), "declared NOT NULL")
                .related(sql_loc(model, out, project), "this expression can be null (an outer join, a grouping set that rolls it up, or NULL)")
                .hint("wrap it in coalesce(…, default), filter the nulls out, or declare it nullable"),
            );
        }
    }
}

/// The label of an E052 at the declared type, before the proven type.
const PRODUCES: &str = "the SQL produces ";

/// The type an E052 says the SQL produces (in the canonical spelling).
pub fn proven_type(error: &Diagnostic) -> Option<&str> {
    match error.code {
        Code::ProvenTypeMismatch => error.primary.as_ref()?.text.strip_prefix(PRODUCES),
        _ => None,
    }
}

fn not_proven(
    project: &Project,
    model: &Model,
    column: &Column,
    out: &OutColumn,
    text: &Spanned<std::sync::Arc<str>>,
) -> Diagnostic {
    Diagnostic::warning(
        Code::TypeNotProven,
        format!(
            "the type of column `{}` of model `{}` cannot be proven from its SQL",
            column.name.value, model.name
        ),
    )
    .at(text.loc.clone(), format!("declared {}", text.value))
    .related(sql_loc(model, out, project), "this expression")
    .hint(format!(
        "cast the expression (CAST(… AS {})) so that the type is certain",
        text.value
    ))
}

fn sql_loc(model: &Model, out: &OutColumn, project: &Project) -> Loc {
    match out.position {
        Some((line, col)) => {
            let start = project.sources.get(model.sql_file).offset_of(line, col);
            Loc::new(model.sql_file, start..start)
        }
        None => Loc::file_start(model.sql_file),
    }
}

/// The interfaces an undeclared column breaks, for a message.
fn bound_by(interfaces: &[Interface]) -> String {
    let one = |i: &Interface| match i {
        Interface::Model(name) => format!("the enforced contract of `{name}`"),
        Interface::Source(name) => format!("the complete declaration of source `{name}`"),
        Interface::Import(name) => format!("the published snapshot of `{name}`"),
    };
    match interfaces {
        [single] => one(single),
        many => {
            let all: Vec<String> = many.iter().map(one).collect();
            format!("none of {}", all.join(", "))
        }
    }
}

fn report_issues(project: &Project, model: &Model, issues: &[Issue], diags: &mut Vec<Diagnostic>) {
    let file = project.sources.get(model.sql_file);
    let loc = |position: &Option<(usize, usize)>| match position {
        Some((line, col)) => {
            let start = file.offset_of(*line, *col);
            let end = file.text()[start..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '"'))
                .map_or(file.text().len(), |i| start + i);
            Loc::new(model.sql_file, start..end.max(start))
        }
        None => Loc::file_start(model.sql_file),
    };
    for issue in issues {
        diags.push(match issue {
            Issue::Undeclared {
                interfaces,
                column,
                position,
            } => Diagnostic::error(
                Code::UndeclaredUpstreamColumn,
                format!(
                    "model `{}` reads `{column}`, which {} does not declare",
                    model.name,
                    bound_by(interfaces)
                ),
            )
            .at(loc(position), "not in the upstream interface")
            .hint(match interfaces.as_slice() {
                [Interface::Source(name)] => {
                    format!("declare `{column}` in source `{name}`, or read a declared column")
                }
                [Interface::Model(name)] => {
                    format!("declare `{column}` in `{name}`'s contract, or read a declared column")
                }
                _ => format!("declare `{column}` upstream, or read a declared column"),
            }),
            Issue::Ambiguous {
                column,
                relations,
                position,
            } => Diagnostic::error(
                Code::AmbiguousColumn,
                format!(
                    "`{column}` in model `{}` is ambiguous: {} all have it",
                    model.name,
                    relations.join(", ")
                ),
            )
            .at(loc(position), "ambiguous")
            .hint(format!("qualify it, such as `{}.{column}`", relations[0])),
        });
    }
}
