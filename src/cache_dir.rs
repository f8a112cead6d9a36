//! The project's cache directory, `.sqb/cache/`: what every cache of sqb shares.
//!
//! Each cache is one file in it, written atomically and read whole; a cache is an optimisation
//! only, so a file that cannot be read, is foreign or is from another sqb build is a miss, and any
//! problem writing one is logged at debug level. The directory holds a `.gitignore` and a
//! `CACHEDIR.TAG` so that neither git nor backup tools pick it up, and is safe to delete.

use std::path::{Path, PathBuf};

use anyhow::Context;

/// The cache directory, relative to the project root.
pub const DIR: &str = ".sqb/cache";

/// Where the cache file `name` of the project at `root` is.
pub fn path(root: &Path, name: &str) -> PathBuf {
    root.join(DIR).join(name)
}

/// The sqb version and, for builds between releases, the executable's size and modification
/// time, so that a rebuilt binary never trusts what another build stored.
pub fn build_identity() -> &'static str {
    static IDENTITY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    IDENTITY.get_or_init(|| {
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
    })
}

/// The bytes of the cache file `name`, or `None` (logged) when there is none to read.
pub fn read(root: &Path, name: &str) -> Option<Vec<u8>> {
    let path = path(root, name);
    match std::fs::read(&path) {
        Ok(bytes) => Some(bytes),
        Err(err) => {
            tracing::debug!("cache not read from {}: {err}", path.display());
            None
        }
    }
}

/// The payload of a framed cache file (the SHA-256 of the rest, then the rest), or `None`
/// (logged) when the checksum does not match: a damaged or foreign file is never decoded.
pub fn unframe<'b>(bytes: &'b [u8], what: &str) -> Option<&'b [u8]> {
    use sha2::Digest as _;
    let (sum, payload) = bytes.split_at_checked(32)?;
    if sha2::Sha256::digest(payload).as_slice() != sum {
        tracing::debug!("{what} ignored: its checksum does not match");
        return None;
    }
    Some(payload)
}

/// A framed cache file's payload decoded as `T`, when the sqb build that `build` says wrote it
/// is this one; `None` (logged, naming the cache as `what`) when it is damaged, foreign or
/// another build's.
pub fn decode<'b, T: serde::Deserialize<'b>>(
    bytes: &'b [u8],
    what: &str,
    build: impl FnOnce(&T) -> &str,
) -> Option<T> {
    let payload = unframe(bytes, what)?;
    match postcard::from_bytes::<T>(payload) {
        Ok(stored) if build(&stored) == build_identity() => Some(stored),
        Ok(_) => {
            tracing::debug!("{what} ignored: written by another sqb build");
            None
        }
        Err(err) => {
            tracing::debug!("{what} ignored: {err}");
            None
        }
    }
}

/// A buffer for a framed cache file: room for the checksum, and `capacity` more bytes.
pub fn frame_buffer(capacity: usize) -> Vec<u8> {
    let mut buffer = Vec::with_capacity(32 + capacity);
    buffer.extend_from_slice(&[0; 32]);
    buffer
}

/// Writes a [`frame_buffer`] whose payload follows the checksum's room, with its checksum.
pub fn write_framed(root: &Path, name: &str, mut bytes: Vec<u8>) {
    use sha2::Digest as _;
    let sum = sha2::Sha256::digest(&bytes[32..]);
    bytes[..32].copy_from_slice(&sum);
    write(root, name, &bytes);
}

/// Replaces the cache file `name` with `bytes`; a failure is only logged.
pub fn write(root: &Path, name: &str, bytes: &[u8]) {
    if let Err(err) = try_write(root, name, bytes) {
        tracing::debug!("cache {name} not written: {err:#}");
    }
}

fn try_write(root: &Path, name: &str, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = root.join(DIR);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for (file, text) in [
        (".gitignore", "# Written by sqb: its caches, safe to delete.\n*\n"),
        (
            "CACHEDIR.TAG",
            "Signature: 8a477f597d28d172789f06886806bc55\n# sqb's caches; see https://bford.info/cachedir/\n",
        ),
    ] {
        let path = dir.join(file);
        if !path.exists() {
            std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        }
    }
    crate::atomic::write_atomic(&dir.join(name), bytes)?;
    Ok(())
}
