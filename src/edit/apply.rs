//! Applying a plan in memory: each file's proposals become its new content, with the
//! format-preserving editor. Nothing is written here; the transaction puts the contents on disk.

use std::collections::{BTreeMap, HashMap};

use super::toml::{EditError, Editor};
use super::transaction::FileChange;
use crate::contract::plan::{Action, Plan, Proposal};
use crate::source::SourceMap;

/// The first lines of a sidecar that sqb creates. Not `# @generated`: people edit it after.
const NEW_SIDECAR_HEADER: &str =
    "# Declared from the warehouse by `sqb contract generate`; edit freely.\n";

/// The order a file's proposals are applied in: renames first, so that types and removals find
/// the new names; additions last, in physical order.
const ORDER: [Action; 5] = [
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
/// (the contents the plan was made from).
pub fn file_changes(sources: &SourceMap, plan: &Plan) -> Result<Vec<FileChange>, ApplyError> {
    let mut by_file: BTreeMap<&str, Vec<&Proposal>> = BTreeMap::new();
    for p in &plan.proposals {
        by_file.entry(p.file.as_str()).or_default().push(p);
    }
    let texts: HashMap<&str, &str> = sources
        .files()
        .map(|(_, f)| (f.rel_path.as_str(), f.text()))
        .collect();
    // Each file is edited on its own: on every core, in path order.
    let files: Vec<(&str, Vec<&Proposal>)> = by_file.into_iter().collect();
    let edited = crate::parallel::map(&files, |(file, proposals)| {
        let prior = match proposals[0].creates_file {
            true => None,
            false => texts.get(file).map(|t| t.to_string()),
        };
        let content = edit_file(prior.as_deref(), proposals).map_err(|reason| ApplyError {
            file: file.to_string(),
            reason,
        })?;
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
            }
        }
    }
    Ok(editor.render())
}
