//! The files of the repository's test projects and example, for the tests that hold a fast path
//! to the general one on every real file.

use std::path::{Path, PathBuf};

/// Every file under `testdata/` and `examples/` whose extension is `ext`.
pub fn with_extension(ext: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    ["testdata", "examples"]
        .iter()
        .flat_map(|dir| walkdir::WalkDir::new(root.join(dir)))
        .map(|entry| {
            entry
                .expect("the repository's files are readable")
                .into_path()
        })
        .filter(|path| path.extension().is_some_and(|e| e == ext))
        .collect()
}
