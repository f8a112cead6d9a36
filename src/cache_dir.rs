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

/// Writes `value` as the framed cache file `name` (the SHA-256 of the rest, then the rest),
/// encoded into the file through a buffer and the checksum, so that the encoding is never held
/// whole in memory. A failure is only logged, naming the cache as `what`.
pub fn write_framed(root: &Path, name: &str, what: &str, value: &impl serde::Serialize) {
    let written = prepare_dir(root).and_then(|dir| {
        crate::atomic::write_atomic_with(&dir.join(name), |file| write_frame(file, value))
            .map_err(anyhow::Error::from)
    });
    if let Err(err) = written {
        tracing::debug!("{what} not written: {err:#}");
    }
}

fn write_frame(file: &mut std::fs::File, value: &impl serde::Serialize) -> std::io::Result<()> {
    use sha2::Digest as _;
    use std::io::{Seek, Write};
    file.write_all(&[0; 32])?;
    // Buffered before the checksum: postcard writes each length and field apart, and hashing
    // them one by one took most of the write (the analyses cache of 10,000 models: 44 -> 19 ms).
    let payload = std::io::BufWriter::with_capacity(
        256 * 1024,
        Checksummed {
            sum: sha2::Sha256::new(),
            out: &mut *file,
        },
    );
    let payload = postcard::to_io(value, payload).map_err(std::io::Error::other)?;
    let Checksummed { sum, .. } = payload.into_inner().map_err(|e| e.into_error())?;
    file.seek(std::io::SeekFrom::Start(0))?;
    file.write_all(&sum.finalize())
}

/// A writer that keeps the SHA-256 of what passes through it.
struct Checksummed<W> {
    sum: sha2::Sha256,
    out: W,
}

impl<W: std::io::Write> std::io::Write for Checksummed<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        use sha2::Digest as _;
        let written = self.out.write(buf)?;
        self.sum.update(&buf[..written]);
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// Runs `write` (writing the cache files `cache` names) on a thread of its own, so that the
/// command goes on at once; [`wait_for_writes_of`] and [`wait_for_writes`] wait for it. Run
/// here and now if no thread can be started.
pub fn write_in_background(cache: &'static str, write: impl FnOnce() + Send + 'static) {
    if let Err(write) = WRITING.spawn(cache, write) {
        write();
    }
}

static WRITING: crate::parallel::Pending = crate::parallel::Pending::new();

/// Waits until the files [`write_in_background`] was given under the name `cache` are written,
/// before they are read again; the other caches' writes go on (a first load's contract files
/// waited 25 ms here for the declarations cache).
pub fn wait_for_writes_of(cache: &str) {
    WRITING.join(cache);
}

/// Waits until every cache file given to [`write_in_background`] is written: before the
/// process ends.
pub fn wait_for_writes() {
    WRITING.join_all();
}

/// Replaces the cache file `name` with `bytes`; a failure is only logged.
pub fn write(root: &Path, name: &str, bytes: &[u8]) {
    if let Err(err) = try_write(root, name, bytes) {
        tracing::debug!("cache {name} not written: {err:#}");
    }
}

fn try_write(root: &Path, name: &str, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = prepare_dir(root)?;
    crate::atomic::write_atomic(&dir.join(name), bytes)?;
    Ok(())
}

/// The cache directory, made if need be, with its `.gitignore` and `CACHEDIR.TAG`.
fn prepare_dir(root: &Path) -> anyhow::Result<PathBuf> {
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
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct Stored<'a> {
        build: &'a str,
        rows: Vec<(String, u32)>,
    }

    fn stored() -> Stored<'static> {
        Stored {
            build: build_identity(),
            rows: (0..50_000).map(|i| (format!("row {i}"), i)).collect(),
        }
    }

    #[test]
    fn a_streamed_frame_reads_back_and_a_damaged_one_is_a_miss() {
        let root = tempfile::tempdir().unwrap();
        write_framed(root.path(), "test-v1.bin", "test cache", &stored());
        let mut bytes = read(root.path(), "test-v1.bin").unwrap();
        let back = decode(&bytes, "test cache", |s: &Stored<'_>| s.build);
        assert_eq!(back, Some(stored()));
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        assert_eq!(decode(&bytes, "test cache", |s: &Stored<'_>| s.build), None);
        let dir = root.path().join(DIR);
        assert!(dir.join(".gitignore").is_file() && dir.join("CACHEDIR.TAG").is_file());
    }

    #[test]
    fn a_cache_that_cannot_be_written_leaves_nothing_behind() {
        let root = tempfile::tempdir().unwrap();
        // The cache directory's place is taken by a file.
        std::fs::create_dir(root.path().join(".sqb")).unwrap();
        std::fs::write(root.path().join(DIR), "not a directory").unwrap();
        write_framed(root.path(), "test-v1.bin", "test cache", &stored());
        assert_eq!(read(root.path(), "test-v1.bin"), None);
        let entries = std::fs::read_dir(root.path().join(".sqb")).unwrap().count();
        assert_eq!(entries, 1);
    }

    /// Fails after half its rows are written.
    struct Failing;

    impl serde::Serialize for Failing {
        fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            use serde::ser::{Error, SerializeSeq};
            let mut seq = serializer.serialize_seq(Some(100_000))?;
            for i in 0..50_000u32 {
                seq.serialize_element(&i)?;
            }
            Err(S::Error::custom("no more rows"))
        }
    }

    #[test]
    fn an_encoding_that_fails_midway_keeps_the_old_file_and_no_temp_file() {
        let root = tempfile::tempdir().unwrap();
        write_framed(root.path(), "test-v1.bin", "test cache", &stored());
        let before = read(root.path(), "test-v1.bin").unwrap();
        write_framed(root.path(), "test-v1.bin", "test cache", &Failing);
        assert_eq!(read(root.path(), "test-v1.bin").unwrap(), before);
        let names: Vec<_> = std::fs::read_dir(root.path().join(DIR))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.starts_with(crate::atomic::TEMP_PREFIX))
            .collect();
        assert!(names.is_empty(), "{names:?}");
    }
}
