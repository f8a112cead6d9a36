//! Applying a plan in memory: each file's proposals become its new content, with the
//! format-preserving editor. Nothing is written here; the transaction puts the contents on disk.

use std::collections::{BTreeMap, HashMap};

use super::toml::{EditError, Editor};
use super::transaction::FileChange;
use crate::contract::plan::{Action, Plan, Proposal};
use crate::source::{SourceFile, SourceMap};

/// The first lines of a sidecar that sqb creates. Not `# @generated`: people edit it after.
const NEW_SIDECAR_HEADER: &str =
    "# Declared from the warehouse by `sqb contract generate`; edit freely.\n";

/// The order a file's proposals are applied in: renames first, so that types and removals find
/// the new names; additions last, in physical order.
const ORDER: [Action; 6] = [
    Action::AddSource,
    Action::RenameColumn,
    Action::SetType,
    Action::ReplaceType,
    Action::RemoveColumn,
    Action::AddColumn,
];

/// A file whose proposals could not be applied.
#[derive(Debug, thiserror::Error)]
#[error("could not edit {file}: {reason}")]
pub struct ApplyError {
    pub file: String,
    pub reason: EditError,
}

/// Every changed file's new content, in path order. `sources` holds the files as they were read
/// (the contents the plan was made from); a file whose text was released and has changed on
/// disk since is an error, never edited from its new content.
pub fn file_changes(sources: &SourceMap, plan: &Plan) -> Result<Vec<FileChange>, ApplyError> {
    let mut by_file: BTreeMap<&str, Vec<&Proposal>> = BTreeMap::new();
    for p in &plan.proposals {
        by_file.entry(p.file.as_str()).or_default().push(p);
    }
    let known: HashMap<&str, &SourceFile> = sources
        .files()
        .map(|(_, f)| (f.rel_path.as_str(), f))
        .collect();
    // Each file is edited on its own: on every core, in path order.
    let files: Vec<(&str, Vec<&Proposal>)> = by_file.into_iter().collect();
    let edited = crate::parallel::map(&files, |(file, proposals)| {
        let failed = |reason| ApplyError {
            file: file.to_string(),
            reason,
        };
        let prior = match (proposals[0].creates_file, known.get(file)) {
            (false, Some(source)) => Some(
                source
                    .loaded_text()
                    .ok_or_else(|| failed(EditError("it changed since sqb read it".into())))?
                    .to_string(),
            ),
            _ => None,
        };
        let content = edit_file(prior.as_deref(), proposals).map_err(failed)?;
        Ok(
            (prior.as_deref() != Some(content.as_str())).then(|| FileChange {
                rel_path: file.to_string(),
                expected_prior: prior,
                content,
            }),
        )
    });
    edited.into_iter().filter_map(Result::transpose).collect()
}

/// Applies one file's proposals to its prior content (`None`: a new sidecar).
fn edit_file(prior: Option<&str>, proposals: &[&Proposal]) -> Result<String, EditError> {
    let mut editor = match prior {
        Some(text) => Editor::parse(text)?,
        None => Editor::new_file(NEW_SIDECAR_HEADER),
    };
    for action in ORDER {
        for p in proposals.iter().filter(|p| p.action == action) {
            let new = p.new.as_deref().unwrap_or_default();
            match action {
                Action::RenameColumn => editor.rename_column(&p.home, &p.column, new)?,
                Action::SetType | Action::ReplaceType => {
                    editor.set_type(&p.home, &p.column, new)?
                }
                Action::RemoveColumn => editor.remove_column(&p.home, &p.column)?,
                Action::AddColumn => editor.add_column(&p.home, &p.column, new, p.not_null)?,
                Action::AddSource => editor.add_source(
                    &p.resource,
                    p.schema.as_deref().unwrap_or_default(),
                    p.table.as_deref(),
                )?,
            }
        }
    }
    Ok(editor.render())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::Home;

    fn set_type(file: &str) -> Proposal {
        Proposal {
            file: file.to_string(),
            creates_file: false,
            resource_type: "model",
            resource: "m".to_string(),
            column: "id".to_string(),
            action: Action::SetType,
            old: Some("integer".to_string()),
            new: Some("bigint".to_string()),
            not_null: false,
            schema: None,
            table: None,
            home: Home::Root,
        }
    }

    /// A sidecar is edited from the text the plan was made from: read again after its text was
    /// released, it is edited when unchanged and refused when it changed on disk meanwhile.
    #[test]
    fn a_released_sidecar_is_edited_only_as_it_was_loaded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.toml");
        let loaded = "[columns.id]\ntype = \"integer\"\n";
        std::fs::write(&path, loaded).unwrap();
        let mut sources = SourceMap::default();
        let id = sources.add("m.toml".into(), &path, loaded.into());
        sources.get(id).digest();
        sources.release_texts();
        let plan = Plan {
            proposals: vec![set_type("m.toml")],
            skipped: Vec::new(),
        };

        let changes = file_changes(&sources, &plan).unwrap();
        assert_eq!(changes[0].expected_prior.as_deref(), Some(loaded));
        assert!(changes[0].content.contains("type = \"bigint\""));

        let mut sources = SourceMap::default();
        let id = sources.add("m.toml".into(), &path, loaded.into());
        sources.get(id).digest();
        sources.release_texts();
        std::fs::write(&path, "[columns.id]\ntype = \"text\"\n").unwrap();
        let error = file_changes(&sources, &plan).unwrap_err();
        assert_eq!(
            error.to_string(),
            "could not edit m.toml: it changed since sqb read it"
        );
    }
}
