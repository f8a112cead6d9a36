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
//! It lives in `.sqb/cache/` under the project root, which holds a `.gitignore` and a
//! `CACHEDIR.TAG` so that neither git nor backup tools pick it up. `--no-cache` (or
//! `SQB_NO_CACHE=1`) neither reads nor writes it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::deps::Graph;
use super::Options;
use crate::diagnostics::Diagnostic;
use crate::project::Project;

/// The cache directory, relative to the project root.
pub const DIR: &str = ".sqb/cache";
/// Bumped whenever the stored layout changes.
const FILE: &str = "compile-v1.json";

/// A stored verdict.
#[derive(Serialize, Deserialize)]
struct Entry {
    key: String,
    diagnostics: Vec<Diagnostic>,
    parents: Vec<Vec<usize>>,
}

/// Where a project's cache file is.
pub fn path(root: &Path) -> PathBuf {
    root.join(DIR).join(FILE)
}

/// The key of a project's compile: its build, its options, and every file it read.
pub fn key(project: &Project, options: Options) -> String {
    let files: Vec<_> = project.sources.files().map(|(_, f)| f).collect();
    let digests: Vec<[u8; 32]> = crate::parallel::map(&files, |f| {
        let mut h = Sha256::new();
        h.update((f.rel_path.len() as u64).to_le_bytes());
        h.update(f.rel_path.as_bytes());
        h.update((f.text.len() as u64).to_le_bytes());
        h.update(f.text.as_bytes());
        h.finalize().into()
    });
    let mut h = Sha256::new();
    h.update(build_identity().as_bytes());
    h.update([u8::from(options.sql_analysis)]);
    h.update((digests.len() as u64).to_le_bytes());
    for d in &digests {
        h.update(d);
    }
    // Vendored snapshots are read too, outside the project's source files.
    for import in &project.imports {
        h.update(import.decl.name.as_bytes());
        h.update(import.fingerprint.as_bytes());
    }
    // A deprecation date or a waiver's expiry can pass between two runs on the same files.
    if !project.imports.is_empty() {
        h.update(super::imports::today().as_bytes());
    }
    h.finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>()
}

/// The sqb version and, for builds between releases, the executable's size and modification
/// time, so that a rebuilt binary never trusts another build's verdict.
fn build_identity() -> String {
    let exe = std::env::current_exe()
        .and_then(std::fs::metadata)
        .ok()
        .map(|m| {
            let modified = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            format!("{}:{modified}", m.len())
        })
        .unwrap_or_default();
    format!("sqb {} {exe}", env!("CARGO_PKG_VERSION"))
}

/// The stored verdict for `key`, if there is one.
pub fn load(root: &Path, key: &str, resources: usize) -> Option<(Vec<Diagnostic>, Graph)> {
    let path = path(root);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(err) => {
            tracing::debug!("compile cache not read from {}: {err}", path.display());
            return None;
        }
    };
    let entry: Entry = match serde_json::from_slice(&bytes) {
        Ok(entry) => entry,
        Err(err) => {
            tracing::debug!("compile cache {} ignored: {err}", path.display());
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
pub fn store(root: &Path, key: String, diagnostics: &[Diagnostic], graph: &Graph) {
    if diagnostics.iter().any(Diagnostic::is_error) {
        return;
    }
    let entry = Entry {
        key,
        diagnostics: diagnostics.to_vec(),
        parents: graph.parents.clone(),
    };
    if let Err(err) = write(root, &entry) {
        tracing::debug!("compile cache not written: {err:#}");
    }
}

fn write(root: &Path, entry: &Entry) -> anyhow::Result<()> {
    use anyhow::Context;
    let dir = root.join(DIR);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for (name, text) in [
        (".gitignore", "# Written by sqb: the compile cache, safe to delete.\n*\n"),
        (
            "CACHEDIR.TAG",
            "Signature: 8a477f597d28d172789f06886806bc55\n# sqb's compile cache; see https://bford.info/cachedir/\n",
        ),
    ] {
        let path = dir.join(name);
        if !path.exists() {
            std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        }
    }
    let json = serde_json::to_vec(entry).context("cannot serialise the verdict")?;
    crate::atomic::write_atomic(&path(root), &json)?;
    Ok(())
}
