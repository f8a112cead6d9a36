//! The files of the repository's test projects and example, for the tests that hold a fast path
//! to the general one on every real file.

use std::path::PathBuf;

/// Every file under `testdata/` and `examples/` whose extension is `ext`.
pub fn with_extension(ext: &str) -> Vec<PathBuf> {
    // At run time: a test binary built for a checkout elsewhere (a shared target directory
    // whose fingerprints match) must still read this checkout's files.
    let root = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
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
