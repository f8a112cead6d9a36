//! `sqb lineage`: one model's column-level lineage, from the offline SQL analysis.

use std::collections::BTreeMap;
use std::path::Path;

use crate::compile::sql::{ColumnRef, Use};
use crate::compile::{analyze, Analysis, Options};
use crate::diagnostics::did_you_mean;
use crate::error::UserError;
use crate::project::{Project, SourceTable};
use crate::report::lineage::{
    ColumnLineage, Lineage, LineageReport, SourceColumnLineage, SourceLineage, SourceUse,
};

pub struct LineageOptions {
    /// `NAME` or `model:NAME` for a model, `source:NAME` for a source.
    pub node: String,
    /// Also list the columns used in joins, filters, grouping, windows and ordering.
    pub include_uses: bool,
    /// Read and write the declarations cache (.sqb/cache/).
    pub use_cache: bool,
}

/// A model's lineage (its columns and what each reads), or a source's (its columns and the
/// model columns that read each).
pub fn lineage(root: &Path, options: &LineageOptions) -> anyhow::Result<Lineage> {
    let project = Project::load_cached(root, options.use_cache)?;
    let compiled = analyze(&project, Options::default());
    super::ensure_compiles(&project, &compiled.diagnostics)?;
    match options.node.split_once(':') {
        Some(("source", name)) => {
            let Some(source) = project.source_tables.iter().find(|s| s.name.value == name) else {
                return Err(no_source(&project, name).into());
            };
            Ok(Lineage::Source(source_lineage(
                &project,
                &compiled,
                source,
                options.include_uses,
            )))
        }
        Some(("model", name)) => model_lineage(&project, &compiled, name, options.include_uses),
        Some((method, _)) => Err(UserError::new(format!(
            "lineage takes a model or a source, not `{method}:`"
        ))
        .with_hint("write `NAME` or `model:NAME` for a model, `source:NAME` for a source")
        .into()),
        None => model_lineage(&project, &compiled, &options.node, options.include_uses),
    }
}

fn model_lineage(
    project: &Project,
    compiled: &Analysis,
    name: &str,
    include_uses: bool,
) -> anyhow::Result<Lineage> {
    let Some(model) = project.model(name) else {
        return Err(no_model(project, name).into());
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
    Ok(Lineage::Model(LineageReport {
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
        semantic_uses: include_uses.then(|| group_uses(analysis.map_or(&[][..], |a| &a.uses))),
    }))
}

fn no_model(project: &Project, name: &str) -> UserError {
    let error = UserError::new(format!("no model named `{name}`"));
    if project.source_tables.iter().any(|s| s.name.value == name) {
        return error.with_hint(format!("`{name}` is a source: write `source:{name}`"));
    }
    match did_you_mean(name, project.models.iter().map(|m| m.name.as_str())) {
        Some(close) => error.with_hint(format!("did you mean `{close}`?")),
        None => error.with_hint("model names are the stems of models/**/*.sql"),
    }
}

fn no_source(project: &Project, name: &str) -> UserError {
    let error = UserError::new(format!("no source named `{name}`"));
    let names = project.source_tables.iter().map(|s| s.name.value.as_str());
    match did_you_mean(name, names) {
        Some(close) => error.with_hint(format!("did you mean `source:{close}`?")),
        None => error.with_hint(
            "source names are the tables of sources/*.toml (`sqb ls -s 'source:*'` lists them)",
        ),
    }
}

/// The source's declared columns, then those the models read that it does not declare (an
/// open source), each with the model columns computed from it.
fn source_lineage(
    project: &Project,
    compiled: &Analysis,
    source: &SourceTable,
    include_uses: bool,
) -> SourceLineage {
    let name = &source.name.value;
    let reads_it = |r: &ColumnRef| r.resource_type == "source" && &r.resource == name;
    let mut columns: Vec<SourceColumnLineage> = source
        .columns
        .iter()
        .map(|c| SourceColumnLineage {
            name: c.name.value.clone(),
            ty: c.type_text.as_ref().map(|t| t.value.to_string()),
            nullable: c.nullable.as_ref().map(|n| n.value),
            declared: true,
            downstream: Vec::new(),
        })
        .collect();
    let mut uses = Vec::new();
    for model in &project.models {
        let Some(analysis) = compiled.models.get(&model.name) else {
            continue;
        };
        for out in analysis.shape.iter().flatten() {
            for read in out.lineage.columns.iter().filter(|r| reads_it(r)) {
                let downstream = ColumnRef {
                    resource_type: "model",
                    resource: model.name.clone(),
                    column: out.name.clone(),
                };
                column_entry(&mut columns, &read.column)
                    .downstream
                    .push(downstream);
            }
        }
        for u in analysis.uses.iter().filter(|u| reads_it(&u.column)) {
            column_entry(&mut columns, &u.column.column);
            uses.push(SourceUse {
                column: u.column.column.clone(),
                model: model.name.clone(),
                context: u.context,
            });
        }
    }
    for c in &mut columns {
        c.downstream.sort();
        c.downstream.dedup();
    }
    uses.sort_by(|a, b| (a.context, &a.column, &a.model).cmp(&(b.context, &b.column, &b.model)));
    uses.dedup();
    let schema = source.schema.as_ref().map(|s| s.value.as_str());
    SourceLineage {
        schema_version: 1,
        source: name.clone(),
        relation: match schema {
            Some(schema) => format!("{schema}.{}", source.relation_name()),
            None => source.relation_name().to_string(),
        },
        file: project.sources.get(source.file).rel_path.clone(),
        columns,
        semantic_uses: include_uses.then_some(uses),
    }
}

/// The entry of column `name` (as the source declares it, in any case), added as undeclared
/// when the source does not declare it.
fn column_entry<'a>(
    columns: &'a mut Vec<SourceColumnLineage>,
    name: &str,
) -> &'a mut SourceColumnLineage {
    let at = match columns
        .iter()
        .position(|c| c.name.eq_ignore_ascii_case(name))
    {
        Some(at) => at,
        None => {
            columns.push(SourceColumnLineage {
                name: name.to_string(),
                ty: None,
                nullable: None,
                declared: false,
                downstream: Vec::new(),
            });
            columns.len() - 1
        }
    };
    &mut columns[at]
}

fn group_uses(uses: &[Use]) -> BTreeMap<&'static str, Vec<ColumnRef>> {
    let mut out: BTreeMap<&'static str, Vec<ColumnRef>> = BTreeMap::new();
    for u in uses {
        out.entry(u.context).or_default().push(u.column.clone());
    }
    out
}
