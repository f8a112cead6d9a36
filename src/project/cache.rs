//! The declarations cache: each model sidecar's parse, remembered by its path and bytes.
//!
//! Parsing the sidecars is most of what loading a large project costs. What a sidecar declares
//! (its model keys, its columns, and the diagnostics about them) depends only on its bytes and its
//! model's name, so an unchanged sidecar is read back from `.sqb/cache/declarations-v1.bin`
//! instead of parsed, and a changed or new one is parsed alone. An entry is used only when the
//! path, the model name and the SHA-256 of the file's bytes all match (the digest of the bytes
//! read now, or the one the file stamps vouch for: see [`super::stamps`]), the digest the
//! compile cache keys on too. The file is the SHA-256 of the rest, then postcard headed by the
//! sqb build that wrote it: a file from another build, a damaged or foreign one is a miss (see
//! [`crate::cache_dir`]), never a wrong declaration.

use foldhash::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::source::{as_file, Digest, FileId, SourceMap};

/// The cache of the model sidecars' parses. Bumped whenever the stored layout or what a parse
/// holds changes.
pub(super) const DECLARATIONS: &str = "declarations-v1.bin";
/// The cache of the contract files' parses (`contracts/`), framed the same way.
pub(super) const CONTRACTS: &str = "contracts-v1.bin";

/// A sidecar to parse: its file, and the name of its model.
pub(super) struct Sidecar<'a> {
    pub file: FileId,
    pub model: &'a str,
}

#[derive(Serialize, Deserialize)]
struct Stored<'a> {
    build: &'a str,
    #[serde(borrow)]
    entries: Vec<Entry<'a>>,
}

#[derive(Serialize, Deserialize)]
struct Entry<'a> {
    path: &'a str,
    model: &'a str,
    digest: Digest,
    /// The parse, postcard-encoded on its own so that a hit decodes only what it uses.
    #[serde(with = "serde_bytes")]
    parse: &'a [u8],
}

/// Where a sidecar's parse came from, and so what the cache will hold for it.
enum Outcome {
    /// The cache held it: the entry is kept as it is.
    Hit,
    /// Parsed now, and encoded for the cache.
    Parsed(Vec<u8>),
    /// Parsed now, but it could not be encoded: the cache will not hold it.
    Unstored,
}

/// Parses every sidecar with `parse`, on every core, except those the cache holds unchanged;
/// then stores the parses when any changed. `use_cache` false neither reads nor writes it.
pub(super) fn parse_all<P>(
    file_name: &str,
    root: &Path,
    use_cache: bool,
    sources: &SourceMap,
    sidecars: &[Sidecar<'_>],
    parse: impl Fn(&Sidecar<'_>) -> P + Sync + Send,
) -> Vec<P>
where
    P: Serialize + for<'de> Deserialize<'de> + Send,
{
    if !use_cache {
        return crate::parallel::map(sidecars, parse);
    }
    let bytes = crate::cache_dir::read(root, file_name);
    let stored = bytes.as_deref().and_then(decode);
    let index: HashMap<&str, &Entry<'_>> = stored
        .iter()
        .flat_map(|s| s.entries.iter())
        .map(|e| (e.path, e))
        .collect();
    let results = crate::parallel::map(sidecars, |s| {
        let file = sources.get(s.file);
        let hit = index
            .get(file.rel_path.as_str())
            .filter(|e| e.model == s.model && &e.digest == file.digest())
            .and_then(|e| as_file(s.file, || postcard::from_bytes::<P>(e.parse)).ok());
        match hit {
            Some(parsed) => (parsed, Outcome::Hit),
            None => {
                let parsed = parse(s);
                let outcome = match postcard::to_allocvec(&parsed) {
                    Ok(bytes) => Outcome::Parsed(bytes),
                    Err(_) => Outcome::Unstored,
                };
                (parsed, outcome)
            }
        }
    });
    let misses = results
        .iter()
        .filter(|(_, o)| !matches!(o, Outcome::Hit))
        .count();
    match file_name == CONTRACTS {
        true => tracing::debug!(
            files = sidecars.len(),
            parsed = misses,
            "contracts cache read"
        ),
        false => tracing::debug!(
            sidecars = sidecars.len(),
            parsed = misses,
            "declarations cache read"
        ),
    }
    if misses > 0 || index.len() != sidecars.len() {
        store(file_name, root, sources, sidecars, &index, &results);
    }
    drop(index);
    drop(stored);
    drop(bytes);
    results.into_iter().map(|(parsed, _)| parsed).collect()
}

/// A cache file written by this build, or `None` (logged).
fn decode(bytes: &[u8]) -> Option<Stored<'_>> {
    crate::cache_dir::decode(bytes, "declarations cache", |stored: &Stored<'_>| {
        stored.build
    })
}

fn store<P>(
    file_name: &str,
    root: &Path,
    sources: &SourceMap,
    sidecars: &[Sidecar<'_>],
    index: &HashMap<&str, &Entry<'_>>,
    results: &[(P, Outcome)],
) {
    let entries = sidecars
        .iter()
        .zip(results)
        .filter_map(|(s, (_, outcome))| {
            let file = sources.get(s.file);
            let parse = match outcome {
                Outcome::Parsed(bytes) => bytes.as_slice(),
                Outcome::Hit => index.get(file.rel_path.as_str())?.parse,
                Outcome::Unstored => return None,
            };
            Some(Entry {
                path: &file.rel_path,
                model: s.model,
                digest: *file.digest(),
                parse,
            })
        })
        .collect();
    let stored = Stored {
        build: crate::cache_dir::build_identity(),
        entries,
    };
    // Encoded after room for the checksum, so that the file is never copied whole.
    match postcard::to_extend(&stored, crate::cache_dir::frame_buffer(0)) {
        Ok(bytes) => crate::cache_dir::write_framed(root, file_name, bytes),
        Err(err) => tracing::debug!("declarations cache not written: {err}"),
    }
}
