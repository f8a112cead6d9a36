//! `sqb lineage`: column-level lineage of one model, from the offline SQL analysis.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::cli::{CompileFormat, GlobalArgs, LineageArgs};
use crate::commands::{data, project_root};
use crate::compile::lineage::{ColumnRef, Use};
use crate::compile::{analyze, Options};
use crate::diagnostics::{self, did_you_mean};
use crate::error::UserError;
use crate::exit::ExitStatus;
use crate::project::Project;

#[derive(Serialize)]
struct LineageReport<'a> {
    schema_version: u32,
    model: &'a str,
    file: &'a str,
    columns: Vec<ColumnLineage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    semantic_uses: Option<BTreeMap<&'static str, Vec<ColumnRef>>>,
}

#[derive(Serialize)]
struct ColumnLineage {
    name: String,
    #[serde(rename = "type")]
    ty: Option<String>,
    nullable: Option<bool>,
    upstream: Vec<ColumnRef>,
}

pub fn run(global: &GlobalArgs, args: &LineageArgs) -> anyhow::Result<ExitStatus> {
    let root = project_root(global)?;
    let project = Project::load(&root)?;
    let compiled = analyze(&project, Options::default());
    let errors: Vec<_> = compiled
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .collect();
    if !errors.is_empty() {
        for d in &errors {
            anstream::eprintln!("{}\n", diagnostics::render_text(d, &project.sources));
        }
        return Err(UserError::new("the project does not compile")
            .with_hint("fix the errors above; `sqb compile` lists them")
            .into());
    }
    let Some(model) = project.model(&args.model) else {
        let error = UserError::new(format!("no model named `{}`", args.model));
        return Err(
            match did_you_mean(&args.model, project.models.iter().map(|m| m.name.as_str())) {
                Some(close) => error.with_hint(format!("did you mean `{close}`?")),
                None => error.with_hint("model names are the stems of models/**/*.sql"),
            }
            .into(),
        );
    };
    let analysis = compiled.models.get(&model.name);
    let Some(columns) = analysis.and_then(|a| a.shape.as_ref()) else {
        let reason = if analysis.is_none() {
            "SQL analysis is off for it"
        } else {
            "its output cannot be inferred"
        };
        return Err(UserError::new(format!("no lineage for model `{}`: {reason}", model.name))
            .with_hint("name computed columns with AS, and read `*` only from models whose shape is known")
            .into());
    };
    let report = LineageReport {
        schema_version: 1,
        model: &model.name,
        file: &project.sources.get(model.sql_file).rel_path,
        columns: columns
            .iter()
            .map(|c| ColumnLineage {
                name: c.name.clone(),
                ty: c.ty.as_ref().map(|t| t.to_string()),
                nullable: c.nullable,
                upstream: c.lineage.clone(),
            })
            .collect(),
        semantic_uses: args
            .include_uses
            .then(|| group_uses(analysis.map_or(&[][..], |a| &a.uses))),
    };
    match args.format {
        CompileFormat::Json => data(&serde_json::to_string_pretty(&report)?),
        CompileFormat::Text => data(&text(&report)),
    }
    Ok(ExitStatus::Success)
}

fn group_uses(uses: &[Use]) -> BTreeMap<&'static str, Vec<ColumnRef>> {
    let mut out: BTreeMap<&'static str, Vec<ColumnRef>> = BTreeMap::new();
    for u in uses {
        out.entry(u.context).or_default().push(u.column.clone());
    }
    out
}

fn show(r: &ColumnRef) -> String {
    format!("{} {}.{}", r.resource_type, r.resource, r.column)
}

fn text(report: &LineageReport<'_>) -> String {
    let mut out = format!("{} ({})\n", report.model, report.file);
    let width = report
        .columns
        .iter()
        .map(|c| c.name.chars().count())
        .max()
        .unwrap_or(0);
    let type_width = report
        .columns
        .iter()
        .map(|c| c.ty.as_deref().unwrap_or("?").len())
        .max()
        .unwrap_or(1);
    for c in &report.columns {
        let upstream = if c.upstream.is_empty() {
            "(no upstream column)".to_string()
        } else {
            c.upstream.iter().map(show).collect::<Vec<_>>().join(", ")
        };
        out.push_str(&format!(
            "  {:width$}  {:type_width$}  ← {upstream}\n",
            c.name,
            c.ty.as_deref().unwrap_or("?")
        ));
    }
    if let Some(uses) = &report.semantic_uses {
        out.push_str("semantic uses:\n");
        if uses.is_empty() {
            out.push_str("  (none)\n");
        }
        for (context, refs) in uses {
            out.push_str(&format!(
                "  {context}: {}\n",
                refs.iter().map(show).collect::<Vec<_>>().join(", ")
            ));
        }
    }
    out.trim_end().to_string()
}
