//! `sqb contract diff`: the report of where declarations and a target's relations disagree.

use std::path::Path;
use std::sync::OnceLock;

use anyhow::Context;

use super::inspect::{inspect, InspectOptions, ReadTarget, Texts};
use crate::contract::diff::{diff as diff_resource, Declared, Finding, FindingKind};
use crate::contract::matching;
use crate::diagnostics::JsonLocation;
use crate::project::{Project, Resource};
use crate::report::diff::{DiffReport, FindingReport, NamespaceInfo, ResourceReport};
use crate::semantic::Uses;

/// Reads the target and compares every selected resource with its declaration.
pub fn diff(root: &Path, options: &InspectOptions) -> anyhow::Result<DiffReport> {
    let (project, report) = inspect(root, options, Texts::Release, |inspected| {
        let compared = tracing::debug_span!("findings compared");
        Ok(compared.in_scope(|| report(&options.from, inspected)))
    })?;
    // The command prints the report and ends.
    crate::memory::leave_to_exit(project);
    Ok(report)
}

fn report(from: &str, inspected: ReadTarget<'_>) -> DiffReport {
    let ReadTarget {
        project,
        target,
        inspection,
    } = inspected;
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
    let resources = crate::parallel::map(&inspection.items, |item| {
        resource_report(project, &uses, item)
    });
    // The catalog's rows were allocated on the session's thread: freeing them from this one
    // took a third of the comparing's time, just before the command ends.
    crate::memory::leave_to_exit(inspection);
    let mut report = DiffReport::new(from.to_string(), namespace, resources);
    report.summary.type_sizes_compared = project.config.settings.compares_type_size();
    report
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

/// The project root relative to the working directory, so that GitHub annotations made from
/// the repository root land on the right files.
pub fn github_prefix(root: &Path) -> anyhow::Result<String> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let cwd = std::fs::canonicalize(&cwd).unwrap_or(cwd);
    Ok(match root.strip_prefix(&cwd) {
        Ok(rel) if rel.as_os_str().is_empty() => String::new(),
        Ok(rel) => format!("{}/", crate::project::rel_path(Path::new(""), rel)),
        Err(_) => String::new(),
    })
}
