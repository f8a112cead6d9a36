//! `sqb contract check`: each selected model's SQL described by the target's engine without
//! running it (Postgres prepares it, DuckDB binds it), with every reference rewritten to the
//! relation it names in that target, and the description compared with the model's
//! declarations through `contract diff`'s core. Each column is marked as proven by sqb's own
//! offline analysis or by the warehouse only; where the two disagree, a finding says so.

use std::path::Path;

use super::inspect::SelectOptions;
use crate::catalog::{Described, PhysicalColumn, PhysicalRelation, RelationKind};
use crate::compile::contract_shape::ModelAnalysis;
use crate::compile::deps::Resolver;
use crate::compile::target_sql::{rewrite, TargetSql};
use crate::contract::diff::{diff as diff_resource, type_agrees, Declared, Finding, FindingKind};
use crate::diagnostics::Severity;
use crate::error::UserError;
use crate::ident::quoted;
use crate::project::{Model, Project, Resource, Target};
use crate::report::diff::{DiffReport, FindingReport, NamespaceInfo, Proof, ResourceReport};
use crate::source::Loc;
use crate::warehouse::{session, Timeouts};

pub struct CheckOptions {
    pub from: String,
    pub selection: SelectOptions,
    pub timeouts: Timeouts,
    pub use_cache: bool,
    /// How many connections describe at once.
    pub workers: usize,
}

/// One model, ready to be described.
struct Planned<'p> {
    model: &'p Model,
    sql: TargetSql,
}

pub fn check(root: &Path, options: &CheckOptions) -> anyhow::Result<DiffReport> {
    let project = Project::load_cached(root, options.use_cache)?;
    let selection = options.selection.load()?;
    // The verdict (cached when nothing changed) decides; the analysis runs beside the warehouse.
    let (diags, graph) =
        crate::compile::compile_cached(&project, Default::default(), options.use_cache);
    super::ensure_compiles(&project, &diags)?;
    let target = super::inspect::target(&project, &options.from)?;
    let models: Vec<&Model> = selection
        .resolve(&project, &graph)?
        .into_iter()
        .filter_map(|r| match r {
            Resource::Model(m) => Some(m),
            Resource::Source(_) => None,
        })
        .collect();
    if models.is_empty() {
        return Err(
            UserError::new("no model to check: the selection holds no model")
                .with_hint(
                    "`contract check` describes models' SQL; `contract diff` compares sources",
                )
                .into(),
        );
    }
    if options.use_cache {
        crate::compile::remember_analyses(&project);
    }
    let resolver = Resolver::new(&project);
    let planned: Vec<Planned<'_>> =
        crate::parallel::map(&models, |m| plan(&project, &resolver, target, m));
    let connect = super::connection(&project.config, &project.root, options.timeouts)?;
    let queries = planned.iter().map(|p| p.sql.text.clone()).collect();
    let database = target.database.as_ref().map(|d| d.value.clone());
    // sqb's own analysis of every model, while the warehouse describes them.
    let (analysis, described) = std::thread::scope(|scope| {
        let analysis = scope.spawn(|| {
            tracing::debug_span!("models analysed offline")
                .in_scope(|| crate::compile::analyze_remembered(&project))
        });
        let described = tracing::debug_span!("models described by the warehouse")
            .in_scope(|| session::describe(connect, database.clone(), queries, options.workers));
        (analysis.join(), described)
    });
    let analysis = analysis.map_err(|_| anyhow::anyhow!("the analysis thread stopped"))?;
    let (default_database, described) = described?;
    let resources = planned
        .iter()
        .zip(described)
        .map(|(p, d)| resource_report(&project, &analysis.models, target, p, d))
        .collect();
    let namespace = NamespaceInfo {
        engine: project.engine(),
        database: database.unwrap_or(default_database),
        schema: target
            .schema
            .as_ref()
            .map_or(String::new(), |s| s.value.clone()),
    };
    let mut report = DiffReport::new(options.from.clone(), namespace, resources);
    report.summary.type_sizes_compared = project.config.settings.compares_type_size();
    report.counts_checks();
    Ok(report)
}

fn plan<'p>(
    project: &'p Project,
    resolver: &Resolver<'_>,
    target: &Target,
    model: &'p Model,
) -> Planned<'p> {
    // The project compiles: its SQL parses (or was parsed for an analysis the cache holds).
    let sql = match crate::compile::model_references(project, model) {
        Some(references) => rewrite(project, resolver, model, references, |r| {
            relation_parts(r, target)
                .into_iter()
                .map(quoted)
                .collect::<Vec<_>>()
                .join(".")
        }),
        None => rewrite_nothing(project, model),
    };
    Planned { model, sql }
}

/// The model's SQL as written, for a statement sqb cannot parse (the engine then says why).
fn rewrite_nothing(project: &Project, model: &Model) -> TargetSql {
    TargetSql::verbatim(project.sources.get(model.sql_file).text())
}

/// The relation a resource names in `target`: a source's own `schema.table` (and database,
/// where it names one), a model's relation in the target's namespace.
fn relation_parts<'p>(resource: Resource<'p>, target: &'p Target) -> Vec<&'p str> {
    let parts: Vec<&str> = match resource {
        Resource::Source(s) => s
            .database
            .iter()
            .map(|d| d.value.as_str())
            .chain(s.schema.iter().map(|x| x.value.as_str()))
            .chain([s.relation_name()])
            .collect(),
        Resource::Model(m) => target
            .database
            .iter()
            .chain(target.schema.iter())
            .map(|x| x.value.as_str())
            .chain([m.relation_name()])
            .collect(),
    };
    parts.into_iter().filter(|p| !p.is_empty()).collect()
}

fn resource_report(
    project: &Project,
    analyses: &std::collections::HashMap<String, ModelAnalysis>,
    target: &Target,
    planned: &Planned<'_>,
    described: Described,
) -> ResourceReport {
    let model = planned.model;
    let resource = Resource::Model(model);
    let shown = relation_parts(resource, target).join(".");
    let declared = Declared::of(project, &resource);
    let (findings, proof) = match described {
        Ok(columns) => {
            let relation = PhysicalRelation {
                name: model.relation_name().to_string(),
                kind: RelationKind::Query,
                columns,
                unavailable: None,
            };
            let mut findings = diff_resource(&declared, Some(&relation), &shown, None);
            let offline = analyses.get(&model.name).and_then(|a| a.shape.as_deref());
            let proof = prove(
                project,
                &declared,
                model,
                offline,
                &relation.columns,
                &mut findings,
            );
            (findings, Some(proof))
        }
        Err(rejected) => {
            let offset = rejected.offset.map_or(0, |o| planned.sql.file_offset(o));
            let finding = Finding {
                kind: FindingKind::SqlRejected,
                severity: declared.coverage.severity(FindingKind::SqlRejected),
                column: None,
                physical_column: None,
                declared_type: None,
                physical_type: None,
                message: format!(
                    "the target's engine rejected the model's SQL: {}",
                    rejected.message
                ),
                loc: Some(Loc::new(model.sql_file, offset..offset)),
                nullable: None,
            };
            (vec![finding], None)
        }
    };
    let mut report = ResourceReport::new(
        "model",
        model.name.clone(),
        shown,
        project.sources.get(resource.file()).rel_path.clone(),
        project.policy(model).as_str(),
        findings
            .into_iter()
            .map(|f| FindingReport::from_finding(f, &project.sources))
            .collect(),
    );
    report.proof = proof;
    report
}

/// Which described columns sqb's analysis proved, and where it disagrees with the warehouse.
fn prove(
    project: &Project,
    declared: &Declared<'_>,
    model: &Model,
    offline: Option<&[crate::compile::sql::OutColumn]>,
    columns: &[PhysicalColumn],
    findings: &mut Vec<Finding>,
) -> Proof {
    let mut proof = Proof::default();
    if let Some(shape) = offline.filter(|shape| !same_names(shape, columns)) {
        findings.push(names_disagree(model, shape, columns));
    }
    let offline = offline.unwrap_or_default();
    for (i, column) in columns.iter().enumerate() {
        let found = offline
            .get(i)
            .filter(|o| o.name.eq_ignore_ascii_case(&column.name))
            .or_else(|| {
                offline
                    .iter()
                    .find(|o| o.name.eq_ignore_ascii_case(&column.name))
            });
        let Some((out, ty)) = found.and_then(|o| Some((o, o.ty.as_ref()?))) else {
            proof.warehouse_only.push(column.name.clone());
            continue;
        };
        if type_agrees(declared, ty, column) {
            proof.offline.push(column.name.clone());
            continue;
        }
        proof.disagreeing.push(column.name.clone());
        let loc = out
            .position
            .map(|(line, col)| {
                let at = project.sources.get(model.sql_file).offset_of(line, col);
                Loc::new(model.sql_file, at..at)
            })
            .unwrap_or_else(|| Loc::file_start(model.sql_file));
        findings.push(Finding {
            kind: FindingKind::AnalysisDisagreement,
            severity: Severity::Warning,
            column: Some(column.name.clone()),
            physical_column: None,
            declared_type: Some(ty.to_string()),
            physical_type: Some(column.type_text.to_string()),
            message: format!(
                "sqb's analysis proved `{}` is {ty}, and the warehouse describes it as {}: a source declaration it reads may be wrong (`sqb contract diff` compares them), else please report this defect of sqb's analysis",
                column.name, column.type_text
            ),
            loc: Some(loc),
            nullable: None,
        });
    }
    proof
}

/// Whether sqb's analysis named the model's columns as the engine does, in its order.
fn same_names(shape: &[crate::compile::sql::OutColumn], columns: &[PhysicalColumn]) -> bool {
    shape.len() == columns.len()
        && shape
            .iter()
            .zip(columns)
            .all(|(o, c)| o.name.eq_ignore_ascii_case(&c.name))
}

fn names_disagree(
    model: &Model,
    shape: &[crate::compile::sql::OutColumn],
    columns: &[PhysicalColumn],
) -> Finding {
    let list = |names: Vec<&str>| names.join(", ");
    Finding {
        kind: FindingKind::AnalysisDisagreement,
        severity: Severity::Warning,
        column: None,
        physical_column: None,
        declared_type: None,
        physical_type: None,
        message: format!(
            "sqb's analysis found the columns ({}), and the warehouse describes ({}): please report this defect of sqb's analysis",
            list(shape.iter().map(|o| o.name.as_str()).collect()),
            list(columns.iter().map(|c| c.name.as_str()).collect()),
        ),
        loc: Some(Loc::file_start(model.sql_file)),
        nullable: None,
    }
}
