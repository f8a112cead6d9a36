//! `sqb contract diff`: the report of where declarations and a target's relations disagree,
//! compared with a baseline report when one is given, and appended to a drift history once
//! printed.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::Context;

use super::inspect::{inspect, InspectOptions, ReadTarget, Texts};
use crate::contract::diff::{diff as diff_resource, Declared, Finding, FindingKind};
use crate::contract::{adoption, cause, matching};
use crate::diagnostics::{Code, Diagnostic, JsonLocation, Severity};
use crate::error::UserError;
use crate::ident::quote_ident;
use crate::project::{Project, Resource};
use crate::report::diff::baseline::Baseline;
use crate::report::diff::{DiffReport, FindingReport, NamespaceInfo, ResourceReport};
use crate::semantic::Uses;

/// What `contract diff` does besides reading the target.
pub struct DiffOptions {
    pub inspect: InspectOptions,
    /// A previous JSON report of the same target: each finding is marked new or known.
    pub baseline: Option<PathBuf>,
    /// A drift history the run is appended to, once the report is printed.
    pub history: Option<super::drift::HistoryOptions>,
}

/// The report, and the history run it was recorded as.
pub struct DiffOutcome {
    pub report: DiffReport,
    pub recorded: Option<i64>,
}

/// Reads the target, compares every selected resource with its declaration and with the
/// baseline, hands the report to `print`, and then appends it to the history: a history that
/// cannot be written never loses the report (but fails the run). A baseline that cannot be used
/// stops the run before the warehouse is read.
pub fn run(
    root: &Path,
    options: &DiffOptions,
    print: impl FnOnce(&DiffReport) -> anyhow::Result<()>,
) -> anyhow::Result<DiffOutcome> {
    let baseline = options
        .baseline
        .as_deref()
        .map(|path| read_baseline(path, &options.inspect.from))
        .transpose()?;
    let mut report = diff(root, &options.inspect)?;
    if report.resources.is_empty() {
        // A check with nothing to check must not pass.
        let error = match report.compile_errors_text.is_empty() {
            true => UserError::new(format!(
                "nothing was compared with target `{}`: the project declares no model or source",
                report.target
            ))
            .with_hint("`sqb init` declares a warehouse's relations as sources; `sqb contract generate --write` fills a model's columns"),
            false => UserError::new(format!(
                "nothing was compared with target `{}`: the project does not compile ({})",
                report.target,
                crate::report::count(report.compile_errors_text.len(), "error", "errors")
            ))
            .with_hint("fix the errors above; `sqb compile` lists them")
            .with_diagnostics(report.compile_errors_text.join("\n\n")),
        };
        return Err(error.into());
    }
    if let Some((path, b)) = &baseline {
        report
            .compare(b)
            .map_err(|e| unusable(path, &e.to_string()))?;
    }
    print(&report)?;
    let recorded = match &options.history {
        Some(h) => Some(super::drift::record(&h.path, &report, root, h.timeout)?),
        None => None,
    };
    Ok(DiffOutcome { report, recorded })
}

/// The baseline at `path`, refused unless it is a report of target `from`.
fn read_baseline<'a>(path: &'a Path, from: &str) -> anyhow::Result<(&'a Path, Baseline)> {
    let bytes = std::fs::read(path)
        .with_context(|| format!("could not read the baseline {}", path.display()))?;
    let baseline = Baseline::parse(&bytes).map_err(|e| unusable(path, &e.to_string()))?;
    baseline
        .check_target(from)
        .map_err(|e| unusable(path, &e.to_string()))?;
    Ok((path, baseline))
}

fn unusable(path: &Path, why: &str) -> UserError {
    UserError::new(format!("{} cannot be the baseline: {why}", path.display())).with_hint(
        "pass a report this target wrote with `sqb contract diff --from TARGET --format json`",
    )
}

/// Reads the target and compares every selected resource with its declaration.
fn diff(root: &Path, options: &InspectOptions) -> anyhow::Result<DiffReport> {
    let (project, report) = inspect(root, options, Texts::Release, |inspected| {
        let compared = tracing::debug_span!("findings compared");
        compared.in_scope(|| report(&options.from, inspected))
    })?;
    // The command prints the report and ends.
    crate::memory::leave_to_exit(project);
    Ok(report)
}

fn report(from: &str, inspected: ReadTarget<'_>) -> anyhow::Result<DiffReport> {
    let ReadTarget {
        project,
        target,
        mut inspection,
        mut errors,
    } = inspected;
    // A model whose sidecar does not parse has no declarations to compare: its error says why.
    inspection
        .items
        .retain(|item| !matches!(item.resource, Resource::Model(m) if m.unreadable));
    let namespace = NamespaceInfo {
        engine: project.engine(),
        database: inspection.database.clone(),
        schema: target
            .schema
            .as_ref()
            .map_or(String::new(), |s| s.value.clone()),
    };
    // Built on the first finding that asks where a column is used.
    let uses = std::sync::OnceLock::new();
    let mut resources = tracing::debug_span!("resources compared").in_scope(|| {
        crate::parallel::map(&inspection.items, |item| {
            resource_report(project, &uses, item)
        })
    });
    let undeclared =
        adoption::undeclared(project, target, &inspection.schemas, &inspection.database).map_err(
            |e| {
                UserError::new(e.to_string()).with_hint(
                "fix `adopted_schemas` under [settings] in sqb.toml: an adopted schema must exist",
            )
            },
        )?;
    resources.extend(
        undeclared
            .into_iter()
            .map(|u| undeclared_report(project, &inspection.database, u)),
    );
    // The catalog's rows were allocated on the session's thread: freeing them from this one
    // took a third of the comparing's time, just before the command ends.
    crate::memory::leave_to_exit(inspection);
    explain_errors(project, &resources, &mut errors);
    let mut report = DiffReport::new(from.to_string(), namespace, resources);
    report.summary.type_sizes_compared = project.config.settings.compares_type_size();
    report.compile_errors = errors
        .iter()
        .map(|d| crate::diagnostics::to_json(d, &project.sources))
        .collect();
    report.compile_errors_text = crate::diagnostics::render_errors(&errors, &project.sources);
    Ok(report)
}

/// Marks the E052s that follow from a source declaration the warehouse proves wrong. The
/// lineage this needs is computed only when there are both.
fn explain_errors(project: &Project, resources: &[ResourceReport], errors: &mut [Diagnostic]) {
    if !errors.iter().any(|d| d.code == Code::ProvenTypeMismatch) {
        return;
    }
    let wrong = wrong_sources(project, resources);
    if wrong.is_empty() {
        return;
    }
    let analysis = tracing::debug_span!("lineage of the errors")
        .in_scope(|| crate::compile::analyze(project, Default::default()));
    cause::explain(project, &analysis, &wrong, errors);
}

/// The source columns whose declared type the warehouse contradicts.
fn wrong_sources(project: &Project, resources: &[ResourceReport]) -> cause::WrongSources {
    let mut wrong = cause::WrongSources::new();
    for r in resources.iter().filter(|r| r.resource_type == "source") {
        let source = project
            .source_tables
            .iter()
            .find(|s| s.name.value == r.resource_name);
        for f in r
            .findings
            .iter()
            .filter(|f| f.kind == FindingKind::TypeMismatch)
        {
            let Some(column) = &f.column else {
                continue;
            };
            let loc = source
                .and_then(|s| s.columns.iter().find(|c| &c.name.value == column))
                .and_then(|c| c.type_text.as_ref())
                .map(|t| t.loc.clone());
            wrong.insert(
                (r.resource_name.clone(), column.clone()),
                cause::WrongSource {
                    declared: f.declared_type.clone().unwrap_or_default(),
                    physical: f.physical_type.clone().unwrap_or_default(),
                    loc,
                },
            );
        }
    }
    wrong
}

/// A relation of an adopted schema that nothing declares, as a resource of its own.
fn undeclared_report(project: &Project, database: &str, u: adoption::Undeclared) -> ResourceReport {
    let finding = Finding {
        kind: FindingKind::UndeclaredRelation,
        severity: Severity::Warning,
        column: None,
        physical_column: None,
        declared_type: None,
        physical_type: None,
        message: format!(
            "relation `{}.{}` is in adopted schema `{}`, and no source or model declares it",
            u.schema, u.relation, u.schema
        ),
        loc: Some(u.loc),
        nullable: None,
    };
    let relation = [database, u.schema.as_str(), u.relation.as_str()]
        .map(quote_ident)
        .join(".");
    ResourceReport::new(
        "relation",
        format!("{}.{}", u.schema, u.relation),
        relation,
        u.file,
        "adopted",
        vec![FindingReport::from_finding(finding, &project.sources)],
    )
}

/// One resource's findings, located in its files.
fn resource_report<'p>(
    project: &'p Project,
    uses: &OnceLock<Uses<'p>>,
    item: &matching::Inspected<'_>,
) -> ResourceReport {
    let resource = &item.resource;
    let policy = match resource {
        Resource::Model(m) => project.policy(m).as_str(),
        Resource::Source(_) => "source",
    };
    let findings = diff_resource(
        &Declared::of(project, resource),
        item.physical.as_ref(),
        &item.relation,
        item.case_only.as_deref(),
    )
    .into_iter()
    .map(|f| {
        let uses = semantic_uses(project, uses, resource.name(), &f);
        let mut report = FindingReport::from_finding(f, &project.sources);
        report.semantic_uses = uses;
        report
    })
    .collect();
    ResourceReport::new(
        resource.resource_type(),
        resource.name().to_string(),
        item.relation.clone(),
        project.sources.get(resource.file()).rel_path.clone(),
        policy,
        findings,
    )
}

/// What the semantic contracts do with a column that is gone, retyped or renamed.
fn semantic_uses<'p>(
    project: &'p Project,
    uses: &OnceLock<Uses<'p>>,
    resource: &str,
    finding: &Finding,
) -> Vec<JsonLocation> {
    let affects = matches!(
        finding.kind,
        FindingKind::MissingPhysicalColumn | FindingKind::TypeMismatch | FindingKind::NameConflict
    );
    let Some(column) = finding.column.as_deref().filter(|_| affects) else {
        return Vec::new();
    };
    uses.get_or_init(|| Uses::new(project))
        .of(resource, column)
        .into_iter()
        .map(|u| JsonLocation::from_loc(&u.loc, &project.sources, Some(u.what)))
        .collect()
}
