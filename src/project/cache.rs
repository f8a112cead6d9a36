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

/// An entry as it is written: [`CachedParse`], with a parse made now encoded only as it is written,
/// so that the parses are never held encoded all at once.
#[derive(Serialize)]
struct EntryOut<'a, P> {
    path: &'a str,
    model: &'a str,
    digest: Digest,
    parse: ParseOut<'a, P>,
}

/// Where a sidecar's parse came from: the cache's entry, kept as it is, or parsed now.
enum ParseOut<'a, P> {
    Hit(&'a [u8]),
    Parsed(&'a P),
}

impl<P: Serialize> Serialize for ParseOut<'_, P> {
    /// As [`CachedParse::parse`]: the parse's own postcard encoding, as bytes.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ParseOut::Hit(bytes) => serializer.serialize_bytes(bytes),
            ParseOut::Parsed(parse) => {
                let bytes = postcard::to_allocvec(parse).map_err(serde::ser::Error::custom)?;
                serializer.serialize_bytes(&bytes)
            }
        }
    }
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
    let index: HashMap<&str, &CachedParse<'_>> = stored
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
            Some(parsed) => (parsed, true),
            None => (parse(s), false),
        }
    });
    let misses = results.iter().filter(|(_, hit)| !hit).count();
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
fn decode(bytes: &[u8]) -> Option<Stored<'_, CachedParse<'_>>> {
    crate::cache_dir::decode(
        bytes,
        "declarations cache",
        |stored: &Stored<'_, CachedParse<'_>>| stored.build,
    )
}

/// Writes every sidecar's parse: a hit's entry as the cache held it, a new parse encoded as it
/// is written.
fn store<P: Serialize>(
    file_name: &str,
    root: &Path,
    sources: &SourceMap,
    sidecars: &[Sidecar<'_>],
    index: &HashMap<&str, &CachedParse<'_>>,
    results: &[(P, bool)],
) {
    let entries: Vec<EntryOut<'_, P>> = sidecars
        .iter()
        .zip(results)
        .filter_map(|(s, (parsed, hit))| {
            let file = sources.get(s.file);
            let parse = match hit {
                true => ParseOut::Hit(index.get(file.rel_path.as_str())?.parse),
                false => ParseOut::Parsed(parsed),
            };
            Some(EntryOut {
                path: &file.rel_path,
                model: s.model,
                digest: *file.digest(),
                parse,
            })
        })
        .collect();
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
