//! `sqb ls`: what a selection picks, offline, as `dbt ls` does: each model and source with its
//! relation and the file that declares it.

use std::path::Path;

use super::inspect::SelectOptions;
use crate::compile::compile_cached;
use crate::project::Project;
use crate::report::ls::Listed;

pub struct LsOptions {
    pub selection: SelectOptions,
    pub use_cache: bool,
}

/// The selected resources, in project order (models by path, then sources), and how many
/// errors the project has (the DAG graph operators follow is built all the same).
pub fn ls(root: &Path, options: &LsOptions) -> anyhow::Result<(Vec<Listed>, usize)> {
    let project = Project::load_cached(root, options.use_cache)?;
    let selection = options.selection.load()?;
    let (diags, graph) = compile_cached(&project, Default::default(), options.use_cache);
    let errors = diags.iter().filter(|d| d.is_error()).count();
    let resources = selection.resolve(&project, &graph)?;
    let listed = resources
        .iter()
        .map(|r| Listed {
            resource_type: r.resource_type(),
            name: r.name().to_string(),
            relation: relation(r),
            file: project.sources.get(r.file()).rel_path.clone(),
        })
        .collect();
    Ok((listed, errors))
}

/// `schema.relation` for a source; a model's relation name (its schema is the target's).
fn relation(resource: &crate::project::Resource<'_>) -> String {
    match resource {
        crate::project::Resource::Source(s) => match &s.schema {
            Some(schema) => format!("{}.{}", schema.value, s.relation_name()),
            None => s.relation_name().to_string(),
        },
        crate::project::Resource::Model(m) => m.relation_name().to_string(),
    }
}
