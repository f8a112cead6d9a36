//! Applying a plan in memory: each file's proposals become its new content, with the
//! format-preserving editor. Nothing is written here; the transaction puts the contents on disk.

use std::collections::{BTreeMap, HashMap};

use super::toml::{new_columns_file, EditError, Editor};
use super::transaction::FileChange;
use crate::contract::plan::{Action, Plan, Proposal};
use crate::project::Home;
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
    if let Some(text) = prior
        .is_none()
        .then(|| new_model_sidecar(proposals))
        .flatten()
    {
        return Ok(text);
    }
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

/// A new model sidecar that only declares columns (what `generate` writes for each model of
/// a project adopting contracts), rendered directly: building a document per file was most of
/// the edit's time for thousands of new files.
fn new_model_sidecar(proposals: &[&Proposal]) -> Option<String> {
    let only_columns = proposals
        .iter()
        .all(|p| p.action == Action::AddColumn && p.home == Home::Root);
    if !only_columns {
        return None;
    }
    let columns: Vec<(&str, &str, bool)> = proposals
        .iter()
        .map(|p| {
            (
                p.column.as_str(),
                p.new.as_deref().unwrap_or_default(),
                p.not_null,
            )
        })
        .collect();
    new_columns_file(NEW_SIDECAR_HEADER, &columns)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    fn through_the_editor(columns: &[(&str, &str, bool)]) -> Result<String, EditError> {
        let mut editor = Editor::new_file(NEW_SIDECAR_HEADER);
        for &(name, ty, not_null) in columns {
            editor.add_column(&Home::Root, name, ty, not_null)?;
        }
        Ok(editor.render())
    }

    /// A new sidecar rendered directly is byte for byte what the editor writes, for names and
    /// types that need quoting, escapes or a literal string.
    #[test]
    fn a_new_sidecar_is_rendered_as_the_editor_renders_it() {
        let columns: &[(&str, &str, bool)] = &[
            ("id", "BIGINT", true),
            ("Order Date", "TIMESTAMP WITH TIME ZONE", false),
            ("a.b", "NUMERIC(38,9)", true),
            ("quote\"d", "VARCHAR(10)", false),
            ("it's", "\"weird\" type", false),
            ("tab\there", "both ' and \"", true),
            ("line\nbreak", "back\\slash", false),
            ("ünï", "STRUCT(\"a b\" INTEGER)", false),
            ("", "INTEGER", false),
            ("-_09", "\u{7f}\u{1}", true),
        ];
        assert_eq!(
            new_columns_file(NEW_SIDECAR_HEADER, columns).unwrap(),
            through_the_editor(columns).unwrap()
        );
        assert_eq!(
            new_columns_file(NEW_SIDECAR_HEADER, &[]).unwrap(),
            NEW_SIDECAR_HEADER
        );
    }

    /// A name given twice is left to the editor, which refuses it.
    #[test]
    fn a_name_given_twice_is_left_to_the_editor() {
        let columns = &[("id", "INTEGER", false), ("id", "BIGINT", false)];
        assert!(new_columns_file(NEW_SIDECAR_HEADER, columns).is_none());
        let proposals: Vec<Proposal> = columns
            .iter()
            .map(|(name, ty, _)| Proposal {
                creates_file: true,
                column: name.to_string(),
                action: Action::AddColumn,
                new: Some(ty.to_string()),
                ..set_type("m.toml")
            })
            .collect();
        let refs: Vec<&Proposal> = proposals.iter().collect();
        let err = edit_file(None, &refs).unwrap_err();
        assert!(err.to_string().contains("already declared"), "{err}");
    }

    /// Printable ASCII (what most names and types are spelled in) or anything printable.
    const ODD: &str = "[ -~]{0,12}|\\PC{0,12}";

    proptest::proptest! {
        #[test]
        fn any_new_sidecar_is_rendered_as_the_editor_renders_it(
            columns in proptest::collection::vec(
                (ODD, ODD, proptest::bool::ANY), 0..6
            )
        ) {
            let columns: Vec<(&str, &str, bool)> =
                columns.iter().map(|(n, t, b)| (n.as_str(), t.as_str(), *b)).collect();
            match new_columns_file(NEW_SIDECAR_HEADER, &columns) {
                Some(text) => proptest::prop_assert_eq!(text, through_the_editor(&columns).unwrap()),
                None => proptest::prop_assert!(through_the_editor(&columns).is_err()),
            }
        }
    }
}
