//! `sqb contract diff`: compare declarations with a target's physical relations.

use std::path::Path;

use anyhow::Context;

use crate::cli::{DiffArgs, Format, GlobalArgs};
use crate::commands::{compile_and_inspect, output_report, project_root, start_session};
use crate::contract::diff::{diff, Declared, Shape};
use crate::contract::inspect::{Inspected, Inspection};
use crate::exit::ExitStatus;
use crate::project::{Policy, Project, Target};
use crate::report::{self, DiffReport, FindingReport, NamespaceInfo, ResourceReport};
use crate::select::Resource;
use crate::source::Loc;

pub fn run(global: &GlobalArgs, args: &DiffArgs) -> anyhow::Result<ExitStatus> {
    let root = project_root(global)?;
    let session = start_session(&root, &args.from, &args.selection, &args.connect);
    let project = crate::logging::timed("project loaded", || Project::load(&root))?;
    let (target, inspection) = compile_and_inspect(
        global,
        &project,
        &args.from,
        &args.selection,
        &args.connect,
        session,
    )?;
    crate::logging::timed("report rendered", || {
        report(&project, args, target, &inspection)
    })
}

fn report(
    project: &Project,
    args: &DiffArgs,
    target: &Target,
    inspection: &Inspection<'_>,
) -> anyhow::Result<ExitStatus> {
    let namespace = NamespaceInfo {
        engine: project.engine(),
        database: inspection.database.clone(),
        schema: target
            .schema
            .as_ref()
            .map_or(String::new(), |s| s.value.clone()),
    };
    let resources = crate::parallel::map(&inspection.items, |item| resource_report(project, item));
    let report = DiffReport::new(args.from.clone(), namespace, resources);
    let format = if args.json { Format::Json } else { args.format };
    let text = match format {
        Format::Text => report::text::render(&report),
        Format::Json => report.to_json(),
        Format::Markdown => report::markdown::render(&report),
        Format::Junit => report::junit::render(&report),
        Format::Github => report::github::render(&report, &github_prefix(&project.root)?),
    };
    output_report(&text, args.output.as_deref())?;
    Ok(if report.has_differences() {
        ExitStatus::Failure
    } else {
        ExitStatus::Success
    })
}

/// The declaration side of a resource and how its contract policy shapes the findings.
fn resource_report(project: &Project, item: &Inspected<'_>) -> ResourceReport {
    let (columns, shape, policy, file_id) = match item.resource {
        Resource::Model(m) => {
            let policy = project.policy(m);
            let shape = match policy {
                Policy::Enforced => Shape::Closed,
                Policy::Implicit => Shape::Open,
                Policy::Explicit | Policy::None => Shape::Metadata,
            };
            (
                project.effective_columns(m),
                shape,
                policy.as_str(),
                m.sidecar.unwrap_or(m.sql_file),
            )
        }
        Resource::Source(s) => (s.columns.iter().collect(), Shape::Open, "source", s.file),
    };
    let enums = |name: &str| project.enum_named(name);
    let resource_loc = match item.resource {
        Resource::Source(s) => s.name.loc.clone(),
        Resource::Model(_) => Loc::file_start(file_id),
    };
    let declared = Declared {
        engine: project.engine(),
        shape,
        columns: &columns,
        enums: &enums,
        resource_loc,
    };
    let findings = diff(
        &declared,
        item.physical.as_ref(),
        &item.relation,
        item.case_only.as_deref(),
    )
    .into_iter()
    .map(|f| FindingReport::from_finding(f, &project.sources))
    .collect();
    ResourceReport::new(
        item.resource.resource_type(),
        item.resource.name().to_string(),
        item.relation.clone(),
        project.sources.get(file_id).rel_path.clone(),
        policy,
        findings,
    )
}

/// The project root relative to the working directory, so that GitHub annotations made from
/// the repository root land on the right files.
fn github_prefix(root: &Path) -> anyhow::Result<String> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let cwd = std::fs::canonicalize(&cwd).unwrap_or(cwd);
    Ok(match root.strip_prefix(&cwd) {
        Ok(rel) if rel.as_os_str().is_empty() => String::new(),
        Ok(rel) => format!("{}/", crate::project::rel_path(Path::new(""), rel)),
        Err(_) => String::new(),
    })
}
