//! `[imports]`: each vendored snapshot of another team's published models, read and checked
//! against its recorded digest.

#[allow(clippy::wildcard_imports)]
use super::*;

/// Reads each import's snapshot and baseline. A file that is missing, unreadable, not a
/// snapshot, edited, or too new is an error at the import's key (never a silent skip), as is a
/// snapshot that does not match a concrete `pin`.
pub(super) fn load_imports(
    loader: &mut Loader,
    decls: &[crate::project::ImportDecl],
) -> Vec<crate::project::Import> {
    decls
        .iter()
        .map(|decl| {
            let dir = loader.root.join(&decl.path.value);
            let mut fingerprint = String::new();
            // The baseline is most often the snapshot itself: the same bytes are parsed once.
            let mut last: Option<(String, crate::team_contracts::snapshot::Snapshot)> = None;
            let mut baseline_missing = false;
            let mut read = |file: &Spanned<String>, role: &str| {
                let path = dir.join(&file.value);
                let shown = crate::project::rel_path(&loader.root, &path);
                let failed = |code, message: String, hint: &str| {
                    Diagnostic::error(code, message)
                        .at(file.loc.clone(), format!("the {role} of import `{}`", decl.name))
                        .hint(hint.to_string())
                };
                let bytes = match std::fs::read(&path) {
                    Ok(bytes) => bytes,
                    Err(e) => {
                        fingerprint.push_str(&format!("{e};"));
                        let first = role == "baseline" && e.kind() == std::io::ErrorKind::NotFound;
                        let hint = match first {
                            true => format!("a new import has no baseline yet: `sqb imports update {}` takes the snapshot as the first one", decl.name),
                            false => "vendor the producer's `sqb publish` output there".to_string(),
                        };
                        baseline_missing |= first;
                        loader.diags.push(failed(
                            Code::ImportUnreadable,
                            format!("cannot read {shown}, the {role} of import `{}`: {e}", decl.name),
                            &hint,
                        ));
                        return None;
                    }
                };
                let digest = crate::team_contracts::snapshot::digest(&bytes);
                fingerprint.push_str(&format!("{}:{digest};", bytes.len()));
                if let Some((_, parsed)) = last.as_ref().filter(|(d, _)| *d == digest) {
                    return Some(parsed.clone());
                }
                match crate::team_contracts::snapshot::parse(&bytes) {
                    Ok(snapshot) => {
                        last = Some((digest, snapshot.clone()));
                        Some(snapshot)
                    }
                    Err(crate::team_contracts::snapshot::SnapshotError::TooNew { needed }) => {
                        loader.diags.push(failed(
                            Code::ImportTooNew,
                            format!("{shown}, the {role} of import `{}`, needs snapshot reader version {needed}", decl.name),
                            "upgrade sqb to read it",
                        ));
                        None
                    }
                    Err(e) => {
                        loader.diags.push(failed(
                            Code::ImportUnreadable,
                            format!("{shown}, the {role} of import `{}`, is unusable: {e}", decl.name),
                            "vendor the producer's `sqb publish` output again, unedited",
                        ));
                        None
                    }
                }
            };
            let snapshot = read(&decl.snapshot, "snapshot");
            let baseline = read(&decl.baseline, "baseline");
            if let (Some(pin), Some(snapshot)) = (&decl.pin, &snapshot) {
                if pin.value != "*" && pin.value != snapshot.content_hash {
                    loader.diags.push(
                        Diagnostic::error(
                            Code::ImportPinMismatch,
                            format!(
                                "the snapshot of import `{}` is {}, not the pinned {}",
                                decl.name, snapshot.content_hash, pin.value
                            ),
                        )
                        .at(pin.loc.clone(), "pinned here")
                        .hint("review the change (`sqb compile` lists what it breaks), then update the pin"),
                    );
                }
            }
            crate::project::Import {
                decl: decl.clone(),
                snapshot,
                baseline,
                baseline_missing,
                fingerprint,
            }
        })
        .collect()
}
