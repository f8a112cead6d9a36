//! The compile cache: a project's verdict, remembered by the exact bytes of every file it read.
//!
//! Compiling is deterministic and offline: when no file, no option and not the sqb build itself
//! has changed since the last compile, that compile's diagnostics and dependency graph are the
//! answer, and no model's SQL needs parsing again. The key is a SHA-256 over the sqb build, the
//! options, and every file's path and bytes, so an edit anywhere, a new or removed file, or
//! another sqb binary is a miss. Only verdicts without errors are stored (a failing project is
//! recompiled each time, so its messages are always fresh). The cache is an optimisation only:
//! any problem reading or writing it is logged at debug level and the project is compiled.
//!
//! It is one file of the project's cache directory (see [`crate::cache_dir`]). `--no-cache` (or
//! `SQB_NO_CACHE=1`) neither reads nor writes it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::deps::Graph;
use super::Options;
use crate::diagnostics::Diagnostic;
use crate::project::Project;

/// Bumped whenever the stored layout changes.
const FILE: &str = "compile-v1.json";

/// A stored verdict.
#[derive(Serialize, Deserialize)]
struct CachedVerdict {
    key: String,
    diagnostics: Vec<Diagnostic>,
    parents: Vec<Vec<usize>>,
}

/// Where a project's cache file is.
pub fn path(root: &Path) -> PathBuf {
    crate::cache_dir::path(root, FILE)
}

/// The key of a project's compile: its build, its options, and every file it read.
pub fn key(project: &Project, options: Options) -> String {
    let files: Vec<_> = project.sources.files().map(|(_, f)| f).collect();
    // The digests the project load took already are reused; the others are taken on every core.
    crate::parallel::map(&files, |f| *f.digest());
    let mut h = Sha256::new();
    h.update(crate::cache_dir::build_identity().as_bytes());
    h.update([u8::from(options.sql_analysis)]);
    h.update((files.len() as u64).to_le_bytes());
    for f in &files {
        h.update((f.rel_path.len() as u64).to_le_bytes());
        h.update(f.rel_path.as_bytes());
        h.update(f.digest());
    }
    // Vendored snapshots are read too, outside the project's source files.
    for import in &project.imports {
        h.update(import.decl.name.as_bytes());
        h.update(import.fingerprint.as_bytes());
    }
    // A deprecation date or a waiver's expiry can pass between two runs on the same files.
    if !project.imports.is_empty() {
        h.update(super::team_changes::today().as_bytes());
    }
    h.finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>()
}

/// The stored verdict for `key`, if there is one.
pub fn load(root: &Path, key: &str, resources: usize) -> Option<(Vec<Diagnostic>, Graph)> {
    let bytes = crate::cache_dir::read(root, FILE)?;
    let entry: CachedVerdict = match serde_json::from_slice(&bytes) {
        Ok(entry) => entry,
        Err(err) => {
            tracing::debug!("compile cache {} ignored: {err}", path(root).display());
            return None;
        }
    };
    if entry.key != key {
        tracing::debug!("compile cache miss: the project or sqb changed");
        return None;
    }
    if entry.parents.len() != resources || entry.parents.iter().flatten().any(|&p| p >= resources) {
        tracing::debug!("compile cache ignored: its graph does not fit the project");
        return None;
    }
    tracing::debug!("compile cache hit");
    Some((entry.diagnostics, Graph::from_parents(entry.parents)))
}

/// Stores a verdict without errors; failures are only logged.
pub fn store(root: &Path, key: String, diagnostics: Vec<Diagnostic>, parents: Vec<Vec<usize>>) {
    if diagnostics.iter().any(Diagnostic::is_error) {
        return;
    }
    let entry = CachedVerdict {
        key,
        diagnostics,
        parents,
    };
    match serde_json::to_vec(&entry) {
        Ok(json) => crate::cache_dir::write(root, FILE, &json),
        Err(err) => tracing::debug!("compile cache not written: {err}"),
    }
}
