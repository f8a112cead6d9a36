//! Resources: the models and sources of a project, each with a declaration and a physical
//! relation. Selection, the DAG and the contract commands all speak of them.

use super::{Model, Project, SourceTable};
use crate::source::FileId;

/// Where a resource's `columns` live in its file: the root of a model sidecar (or schema file), or
/// a source's table in a `sources/*.toml` file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "name")]
pub enum Home {
    Root,
    Source(String),
}

/// A model or a source: something with a declaration and a physical relation.
#[derive(Debug, Clone, Copy)]
pub enum Resource<'p> {
    Model(&'p Model),
    Source(&'p SourceTable),
}

impl<'p> Resource<'p> {
    pub fn name(&self) -> &'p str {
        match self {
            Resource::Model(m) => &m.name,
            Resource::Source(s) => &s.name.value,
        }
    }

    /// The relation's name in the warehouse.
    pub fn relation_name(&self) -> &'p str {
        match self {
            Resource::Model(m) => m.relation_name(),
            Resource::Source(s) => s.relation_name(),
        }
    }

    pub fn resource_type(&self) -> &'static str {
        match self {
            Resource::Model(_) => "model",
            Resource::Source(_) => "source",
        }
    }

    pub fn tags(&self) -> Vec<&'p str> {
        match self {
            Resource::Model(m) => m.props.tag_names().collect(),
            Resource::Source(s) => s.tags.iter().map(|t| t.value.as_str()).collect(),
        }
    }

    /// The file that holds the resource's declarations: a model's sidecar (its SQL file when it
    /// has none), a source's file.
    pub fn file(&self) -> FileId {
        match self {
            Resource::Model(m) => m.sidecar.unwrap_or(m.sql_file),
            Resource::Source(s) => s.file,
        }
    }

    /// Where its columns live in [`Resource::file`].
    pub fn home(&self) -> Home {
        match self {
            Resource::Model(_) => Home::Root,
            Resource::Source(s) => Home::Source(s.name.value.clone()),
        }
    }

    /// The files that define the resource, relative to the project root.
    pub fn paths<'a>(&self, project: &'a Project) -> Vec<&'a str> {
        match self {
            Resource::Model(m) => {
                let mut paths = vec![project.sources.get(m.sql_file).rel_path.as_str()];
                paths.extend(m.sidecar.map(|f| project.sources.get(f).rel_path.as_str()));
                paths
            }
            Resource::Source(s) => vec![project.sources.get(s.file).rel_path.as_str()],
        }
    }
}

/// The resource at `index` in [`all_resources`] order, `None` past the end.
pub fn resource_at(project: &Project, index: usize) -> Option<Resource<'_>> {
    match project.models.get(index) {
        Some(model) => Some(Resource::Model(model)),
        None => project
            .source_tables
            .get(index - project.models.len())
            .map(Resource::Source),
    }
}

/// Every model and source of a project, models first, each in project order.
pub fn all_resources(project: &Project) -> Vec<Resource<'_>> {
    project
        .models
        .iter()
        .map(Resource::Model)
        .chain(project.source_tables.iter().map(Resource::Source))
        .collect()
}
