//! Finding the project root and listing the files of each project folder.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use walkdir::WalkDir;

/// The project file's name.
pub const PROJECT_FILE: &str = "sqb.toml";
/// The optional, git-ignored override of the project file.
pub const LOCAL_FILE: &str = "sqb.local.toml";

/// Walks up from `start` to the first directory holding `sqb.toml`.
pub fn find_root(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|dir| dir.join(PROJECT_FILE).is_file())
        .map(Path::to_path_buf)
}

/// A file found under a project folder.
#[derive(Debug, Clone)]
pub struct Found {
    pub abs: PathBuf,
    /// Relative to the project root, `/`-separated.
    pub rel: String,
    pub stem: String,
    pub ext: String,
}

/// Every file under `root/folder` with one of `exts`, sorted by path. Hidden entries are skipped;
/// symlinks are followed (loops are reported by walkdir and skipped).
pub fn list(root: &Path, folder: &str, exts: &[&str]) -> Vec<Found> {
    let dir = root.join(folder);
    if !dir.is_dir() {
        return Vec::new();
    }
    // Not sorted while walking: the list is sorted by path once at the end (a sorted walk
    // compares file names, each taken apart from its path again, 130,000 times for 10,000).
    let mut out: Vec<Found> = WalkDir::new(&dir)
        .follow_links(true)
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().as_encoded_bytes().starts_with(b"."))
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy();
            // The extension and stem as `Path` defines them: split at the last dot, which a
            // stem must precede (a name that starts with its only dot was skipped above).
            let (stem, ext) = name.rsplit_once('.').filter(|(stem, _)| !stem.is_empty())?;
            if !exts.contains(&ext) {
                return None;
            }
            Some(Found {
                rel: walked_rel_path(root, e.path()),
                stem: stem.to_string(),
                ext: ext.to_string(),
                abs: e.into_path(),
            })
        })
        .collect();
    out.sort_unstable_by(|a, b| a.rel.cmp(&b.rel));
    out
}

/// The files of `root/models` (SQL and sidecars), listed once for the first to ask: the
/// warehouse session's read-ahead (the model names, while it connects) or the loader, whichever
/// gets there first; the other waits for that listing instead of making its own.
#[derive(Debug)]
pub struct ModelFiles {
    root: PathBuf,
    files: OnceLock<Vec<Found>>,
}

impl ModelFiles {
    pub(super) fn new(root: &Path) -> Arc<Self> {
        Arc::new(Self {
            root: root.to_path_buf(),
            files: OnceLock::new(),
        })
    }

    /// Every SQL file and sidecar under `models/`, as [`list`] gives them.
    pub(super) fn get(&self) -> &[Found] {
        self.files
            .get_or_init(|| list(&self.root, "models", &["sql", "toml"]))
    }

    /// The names of the models (their SQL files' stems), without reading them: the relation
    /// names a full selection will want, unless a sidecar sets an `alias`.
    pub fn stems(&self) -> Vec<String> {
        self.get()
            .iter()
            .filter(|f| f.ext == "sql")
            .map(|f| f.stem.clone())
            .collect()
    }
}

/// A path walkdir joined under `root`, relative to it: the rest is file names joined with the
/// separator, so on Unix it is already `/`-separated (listing 10,000 models, this is measurable).
fn walked_rel_path(root: &Path, path: &Path) -> String {
    match (cfg!(unix), path.strip_prefix(root)) {
        (true, Ok(rel)) => rel.to_string_lossy().into_owned(),
        _ => rel_path(root, path),
    }
}

/// `path` relative to `root`, with `/` separators.
pub fn rel_path(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// The read-ahead's names and the loader's files come from one listing: the model names
    /// are the SQL files' stems, in the loader's order, and asking again lists nothing anew.
    #[test]
    fn model_files_are_listed_once_for_names_and_files() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/sql_project");
        let files = super::ModelFiles::new(&root);
        let stems = files.stems();
        let listed = files.get();
        let expected: Vec<&str> = listed
            .iter()
            .filter(|f| f.ext == "sql")
            .map(|f| f.stem.as_str())
            .collect();
        assert_eq!(stems, expected);
        assert_eq!(stems.len(), 6);
        assert!(listed.iter().any(|f| f.ext == "toml"));
        assert!(std::ptr::eq(files.get(), listed));
        let direct = super::list(&root, "models", &["sql", "toml"]);
        let rels = |f: &[super::Found]| f.iter().map(|f| f.rel.clone()).collect::<Vec<_>>();
        assert_eq!(rels(listed), rels(&direct));
    }
}
