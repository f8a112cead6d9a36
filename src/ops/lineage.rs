//! `sqb lineage`: one model's column-level lineage, from the offline SQL analysis.

use std::collections::BTreeMap;
use std::path::Path;

use crate::compile::sql::{ColumnRef, Use};
use crate::compile::{analyze, Options};
use crate::diagnostics::did_you_mean;
use crate::error::UserError;
use crate::project::Project;
use crate::report::lineage::{ColumnLineage, LineageReport};

pub struct LineageOptions {
    pub model: String,
    /// Also list the columns used in joins, filters, grouping, windows and ordering.
    pub include_uses: bool,
    /// Read and write the declarations cache (.sqb/cache/).
    pub use_cache: bool,
}

pub fn lineage(root: &Path, options: &LineageOptions) -> anyhow::Result<LineageReport> {
    let project = Project::load_cached(root, options.use_cache)?;
    let compiled = analyze(&project, Options::default());
    super::ensure_compiles(&project, &compiled.diagnostics)?;
    let Some(model) = project.model(&options.model) else {
        return Err(no_model(&project, &options.model).into());
    };
    let analysis = compiled.models.get(&model.name);
    let Some(columns) = analysis.and_then(|a| a.shape.as_ref()) else {
        let reason = match analysis {
            None => "SQL analysis is off for it",
            Some(_) => "its output cannot be inferred",
        };
        return Err(UserError::new(format!("no lineage for model `{}`: {reason}", model.name))
            .with_hint("name computed columns with AS, and read `*` only from models whose shape is known")
            .into());
    };
    Ok(LineageReport {
        schema_version: 1,
        model: model.name.clone(),
        file: project.sources.get(model.sql_file).rel_path.clone(),
        columns: columns
            .iter()
            .map(|c| ColumnLineage {
                name: c.name.clone(),
                ty: c.ty.as_ref().map(|t| t.to_string()),
                nullable: c.nullable,
                upstream: c.lineage.columns.clone(),
                unattributed: c.lineage.unattributed.clone(),
            })
            .collect(),
        semantic_uses: options
            .include_uses
            .then(|| group_uses(analysis.map_or(&[][..], |a| &a.uses))),
    })
}

fn no_model(project: &Project, name: &str) -> UserError {
    let error = UserError::new(format!("no model named `{name}`"));
    match did_you_mean(name, project.models.iter().map(|m| m.name.as_str())) {
        Some(close) => error.with_hint(format!("did you mean `{close}`?")),
        None => error.with_hint("model names are the stems of models/**/*.sql"),
    }
}

fn group_uses(uses: &[Use]) -> BTreeMap<&'static str, Vec<ColumnRef>> {
    let mut out: BTreeMap<&'static str, Vec<ColumnRef>> = BTreeMap::new();
    for u in uses {
        out.entry(u.context).or_default().push(u.column.clone());
    }
    out
}
