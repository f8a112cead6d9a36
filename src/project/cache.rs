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
//! [`crate::cache_dir`]), never a wrong declaration. A new parse is encoded on the core that
//! made it, and the file is written on a thread of its own while the command goes on.

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

/// The cache file: the entries as read ([`CachedParse`]) or as written ([`EntryOut`]).
#[derive(Serialize, Deserialize)]
struct Stored<'a, E> {
    build: &'a str,
    entries: Vec<E>,
}

#[derive(Serialize, Deserialize)]
struct CachedParse<'a> {
    path: &'a str,
    model: &'a str,
    digest: Digest,
    /// The parse, postcard-encoded on its own so that a hit decodes only what it uses.
    #[serde(with = "serde_bytes")]
    parse: &'a [u8],
}

/// An entry as it is written: [`CachedParse`], owned, so that a thread of its own writes it
/// while the command goes on.
#[derive(Serialize)]
struct EntryOut {
    path: String,
    model: String,
    digest: Digest,
    #[serde(with = "serde_bytes")]
    parse: Vec<u8>,
}

/// Parses every sidecar with `parse`, on every core, except those the cache holds unchanged;
/// then stores the parses when any changed. `use_cache` false neither reads nor writes it.
pub(super) fn parse_all<P>(
    file_name: &'static str,
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
    // The file an earlier load of this process is still writing is the one to read.
    crate::cache_dir::wait_for_writes_of(file_name);
    let bytes = crate::cache_dir::read(root, file_name);
    let stored = bytes.as_deref().and_then(decode);
    let index: HashMap<&str, &CachedParse<'_>> = stored
        .iter()
        .flat_map(|s| s.entries.iter())
        .map(|e| (e.path, e))
        .collect();
    // A new parse is encoded for the cache where it is made, on every core.
    let results = crate::parallel::map(sidecars, |s| {
        let file = sources.get(s.file);
        let hit = index
            .get(file.rel_path.as_str())
            .filter(|e| e.model == s.model && &e.digest == file.digest())
            .and_then(|e| as_file(s.file, || postcard::from_bytes::<P>(e.parse)).ok());
        match hit {
            Some(parsed) => (parsed, None),
            None => {
                let parsed = parse(s);
                let encoded = postcard::to_allocvec(&parsed).ok();
                (parsed, Some(encoded))
            }
        }
    });
    let misses = results.iter().filter(|(_, fresh)| fresh.is_some()).count();
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
    let mut parses = Vec::with_capacity(results.len());
    let mut fresh = Vec::with_capacity(results.len());
    for (parsed, encoded) in results {
        parses.push(parsed);
        fresh.push(encoded);
    }
    if misses > 0 || index.len() != sidecars.len() {
        let entries = entries_out(sources, sidecars, &index, fresh);
        let (root, file_name) = (root.to_path_buf(), file_name);
        crate::cache_dir::write_in_background(file_name, move || {
            store(file_name, &root, entries);
        });
    }
    parses
}

/// A cache file written by this build, or `None` (logged).
fn decode(bytes: &[u8]) -> Option<Stored<'_, CachedParse<'_>>> {
    crate::cache_dir::decode(
        bytes,
        "declarations cache",
        |stored: &Stored<'_, CachedParse<'_>>| stored.build,
    )
}

/// Every sidecar's entry: a hit's as the cache held it, a new parse as it was encoded (one that
/// could not be encoded is left out: a miss next time).
fn entries_out(
    sources: &SourceMap,
    sidecars: &[Sidecar<'_>],
    index: &HashMap<&str, &CachedParse<'_>>,
    fresh: Vec<Option<Option<Vec<u8>>>>,
) -> Vec<EntryOut> {
    sidecars
        .iter()
        .zip(fresh)
        .filter_map(|(s, fresh)| {
            let file = sources.get(s.file);
            let parse = match fresh {
                None => index.get(file.rel_path.as_str())?.parse.to_vec(),
                Some(encoded) => encoded?,
            };
            Some(EntryOut {
                path: file.rel_path.clone(),
                model: s.model.to_string(),
                digest: *file.digest(),
                parse,
            })
        })
        .collect()
}

/// Writes the cache file `file_name` of `entries`.
fn store(file_name: &'static str, root: &Path, entries: Vec<EntryOut>) {
    let what = match file_name == CONTRACTS {
        true => "contracts cache",
        false => "declarations cache",
    };
    crate::cache_dir::write_framed(
        root,
        file_name,
        what,
        &Stored {
            build: crate::cache_dir::build_identity(),
            entries,
        },
    );
}
