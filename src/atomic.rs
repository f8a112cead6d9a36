//! Writing files atomically: a temp file in the same directory, fsynced, then renamed over the
//! destination, keeping the destination's permissions. A reader sees the old bytes or the new
//! ones, never a mix; a failure leaves the destination untouched, and so does Ctrl-C or SIGTERM
//! (the temp file is registered with [`crate::interrupt`], which removes it).

use std::io::Write;
use std::path::{Path, PathBuf};

/// The name prefix of the temp files writes go through.
pub const TEMP_PREFIX: &str = ".sqb-tmp-";

/// Why a file could not be written; names the path.
#[derive(Debug, thiserror::Error)]
#[error("could not write {}: {source}", path.display())]
pub struct WriteError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// Replaces (or creates) `path` with `bytes` atomically. Symlinks are followed, so the link's
/// target is replaced and the link kept.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    write_atomic_with(path, |file| file.write_all(bytes))
}

/// [`write_atomic`], with the bytes written by `write` straight into the temp file, so that a
/// large file is never held whole in memory. A `write` that fails changes nothing.
pub fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> Result<(), WriteError> {
    let prepared = prepare_writing(path, Durability::Fsync, write)?;
    let dir = prepared.dir.clone();
    prepared.commit()?;
    sync_dir(&dir);
    Ok(())
}

/// A file's new bytes, written and fsynced to a temp file beside it, not yet in place (or,
/// for a new file a journal accounts for, written at its own path: [`create_journaled`]).
/// Dropping it without [`Prepared::commit`] removes the file it wrote and changes nothing.
pub struct Prepared {
    /// Closed once written: a transaction prepares every file before it renames any, and
    /// 50,000 open temp files would run out of file descriptors.
    temp: tempfile::TempPath,
    _guard: crate::interrupt::TempGuard,
    /// Already at its destination: committing keeps it where it is.
    in_place: bool,
    target: PathBuf,
    path: PathBuf,
    dir: PathBuf,
}

/// Writes `bytes` to a temp file in `path`'s directory (its target's, for a symlink), with the
/// destination's permissions, and fsyncs it. Preparing many files first and committing them
/// after costs one directory sync per directory instead of one per file.
pub fn prepare(path: &Path, bytes: &[u8]) -> Result<Prepared, WriteError> {
    prepare_with(path, bytes, Durability::Fsync)
}

/// How [`prepare_with`] makes a temp file durable before it may be renamed into place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// fsync the temp file.
    Fsync,
    /// Nothing yet: the caller syncs every temp file's filesystem at once ([`sync_filesystems`])
    /// before committing any of them.
    Deferred,
}

/// [`prepare`], with the temp file's fsync left to the caller when `durability` says so.
pub fn prepare_with(
    path: &Path,
    bytes: &[u8],
    durability: Durability,
) -> Result<Prepared, WriteError> {
    prepare_writing(path, durability, |file| file.write_all(bytes))
}

fn prepare_writing(
    path: &Path,
    durability: Durability,
    write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> Result<Prepared, WriteError> {
    let (target, existing) = target_of(path);
    let fail = |source| WriteError {
        path: path.to_path_buf(),
        source,
    };
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let (mut temp, guard) = crate::interrupt::create_tracked(
        || {
            let mut builder = tempfile::Builder::new();
            builder.prefix(TEMP_PREFIX);
            // A new file gets the mode any program's new file gets (0666 less the umask), not
            // the temp file's private 0600; an existing one keeps its own (below).
            #[cfg(unix)]
            if existing.is_none() {
                use std::os::unix::fs::PermissionsExt;
                builder.permissions(std::fs::Permissions::from_mode(0o666));
            }
            builder.tempfile_in(&dir)
        },
        |t| t.path(),
    )
    .map_err(fail)?;
    write(temp.as_file_mut()).map_err(fail)?;
    crate::interrupt::fault("temp-written");
    if let Some(meta) = existing {
        temp.as_file()
            .set_permissions(meta.permissions())
            .map_err(fail)?;
    }
    if durability == Durability::Fsync {
        temp.as_file().sync_all().map_err(fail)?;
    }
    Ok(Prepared {
        temp: temp.into_temp_path(),
        _guard: guard,
        in_place: false,
        target,
        path: path.to_path_buf(),
        dir,
    })
}

/// [`prepare_with`] for a file that a transaction's journal records as new (so that a crash
/// leaves nothing the next command would not remove): when nothing is at `path`, not even a
/// dangling symlink, the bytes are written at `path` itself (created exclusively, 0666 less the
/// umask), which spares a temp file and a rename for each of thousands of new files. Anything
/// else goes through a temp file as [`prepare_with`] does.
pub fn create_journaled(
    path: &Path,
    bytes: &[u8],
    durability: Durability,
) -> Result<Prepared, WriteError> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        _ => return prepare_with(path, bytes, durability),
    }
    let fail = |source| WriteError {
        path: path.to_path_buf(),
        source,
    };
    let ((mut file, temp), guard) = crate::interrupt::create_tracked(
        || {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)?;
            Ok((file, tempfile::TempPath::try_from_path(path)?))
        },
        |made| &*made.1,
    )
    .map_err(fail)?;
    file.write_all(bytes).map_err(fail)?;
    crate::interrupt::fault("new-written");
    if durability == Durability::Fsync {
        file.sync_all().map_err(fail)?;
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok(Prepared {
        temp,
        _guard: guard,
        in_place: true,
        target: path.to_path_buf(),
        path: path.to_path_buf(),
        dir,
    })
}

/// The file a write to `path` replaces, and its metadata if it exists: `path` itself, unless it
/// is a symlink, whose target is replaced (the link kept). One `lstat` for a plain or a new file,
/// which is what a transaction of thousands of files writes.
fn target_of(path: &Path) -> (PathBuf, Option<std::fs::Metadata>) {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
            let existing = std::fs::metadata(&target).ok();
            (target, existing)
        }
        Ok(meta) => (path.to_path_buf(), Some(meta)),
        Err(_) => (path.to_path_buf(), None),
    }
}

impl Prepared {
    /// The directory the file is renamed in; sync it (once) after committing.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Renames the temp file over the destination (a file written in place stays).
    pub fn commit(self) -> Result<(), WriteError> {
        let Prepared {
            temp,
            in_place,
            target,
            path,
            ..
        } = self;
        if in_place {
            temp.keep().map_err(|e| WriteError {
                path,
                source: e.error,
            })?;
            return Ok(());
        }
        temp.persist(&target).map_err(|e| WriteError {
            path,
            source: e.error,
        })?;
        Ok(())
    }
}

/// Makes everything written so far to the filesystems holding `dirs` durable: one `syncfs` per
/// filesystem (Linux) instead of one fsync per file, which is what makes writing thousands of
/// files fast. Elsewhere, each directory's files are not reachable from here, so this falls
/// back to a full `sync`.
pub fn sync_filesystems<'a>(dirs: impl IntoIterator<Item = &'a Path>) -> Result<(), WriteError> {
    use std::os::unix::fs::MetadataExt;
    let dirs: std::collections::BTreeSet<&Path> = dirs.into_iter().collect();
    let mut seen = std::collections::BTreeSet::new();
    for dir in dirs {
        let fail = |source| WriteError {
            path: dir.to_path_buf(),
            source,
        };
        let file = std::fs::File::open(dir).map_err(fail)?;
        if !seen.insert(file.metadata().map_err(fail)?.dev()) {
            continue;
        }
        syncfs(&file).map_err(fail)?;
    }
    Ok(())
}

#[cfg(target_os = "linux")]
fn syncfs(file: &std::fs::File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: the descriptor is open for the duration of the call; syncfs takes no pointers.
    match unsafe { libc::syncfs(file.as_raw_fd()) } {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

#[cfg(not(target_os = "linux"))]
fn syncfs(_file: &std::fs::File) -> std::io::Result<()> {
    // SAFETY: sync takes no arguments.
    unsafe { libc::sync() };
    Ok(())
}

/// Makes the renames in `dir` durable.
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::os::unix::fs::PermissionsExt;

    fn umask() -> u32 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("Umask:"))
            .map(|m| u32::from_str_radix(m.trim(), 8).unwrap())
            .unwrap()
    }

    #[test]
    fn a_new_file_gets_the_mode_the_umask_leaves() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.json");
        write_atomic(&path, b"{}").unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o666 & !umask()
        );
    }

    #[test]
    fn replaces_content_and_keeps_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.json");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o640
        );
        let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1);
    }

    #[test]
    fn a_journaled_new_file_is_written_at_its_path_and_removed_unless_committed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.toml");
        let kept = create_journaled(&path, b"a = 1\n", Durability::Deferred).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a = 1\n");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temp file"
        );
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o666 & !umask(), "the mode any new file gets");
        kept.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a = 1\n");
        let other = dir.path().join("other.toml");
        drop(create_journaled(&other, b"b = 2\n", Durability::Fsync).unwrap());
        assert!(!other.exists(), "a dropped new file is removed");
    }

    #[test]
    fn a_journaled_new_file_at_a_dangling_symlink_goes_through_a_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("link.toml");
        std::os::unix::fs::symlink("target.toml", &link).unwrap();
        create_journaled(&link, b"x = 1\n", Durability::Fsync)
            .unwrap()
            .commit()
            .unwrap();
        // Created exclusively, it would have failed: the link is in the way.
        assert_eq!(std::fs::read_to_string(&link).unwrap(), "x = 1\n");
    }

    #[test]
    fn a_missing_directory_is_an_error_naming_the_path() {
        let err = write_atomic(Path::new("/nonexistent-dir/x.json"), b"x").unwrap_err();
        assert!(err
            .to_string()
            .starts_with("could not write /nonexistent-dir/x.json"));
    }
}
