//! The write transaction for project files: all of a change lands, or none of it does.
//!
//! 1. An exclusive lock on `.sqb/lock`: a second writer fails fast.
//! 2. The caller has computed every new file's content in memory.
//! 3. A journal, `.sqb/journal.json`, records each file's exact prior bytes (or that it is new),
//!    and is fsynced before any project file is touched.
//! 4. Each file is written atomically (temp file in its directory, made durable, rename;
//!    permissions kept; symlinks followed to their targets); a file the journal records as new
//!    is written at its own path, which a crash leaves for the recovery to remove. Up to 64
//!    files, each is fsynced; beyond, all are written first and their filesystem is synced once
//!    (`syncfs`).
//! 5. The caller's check runs (sqb recompiles the project from disk); if it fails, every file is
//!    restored to its prior bytes and created files are removed.
//! 6. The journal is removed. If the process dies between 3 and 6, the next sqb command finds the
//!    journal and restores the prior state ([`recover`]). SIGINT and SIGTERM during the
//!    transaction restore too.
//!
//! The transaction never knows TOML.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::atomic::{create_journaled, prepare_with, sync_dir, write_atomic, Durability, Prepared};
use crate::interrupt::Deferral;

/// The directory, under the project root, that holds the lock and the journal.
pub const STATE_DIR: &str = ".sqb";
const LOCK_FILE: &str = "lock";
const JOURNAL_FILE: &str = "journal.json";

/// For tests only: abort the process at a named step, as a crash would.
pub use crate::interrupt::FAULT_ENV;

/// One file to write: its path relative to the project root and its new content.
#[derive(Debug, Clone)]
pub struct FileChange {
    pub rel_path: String,
    /// The content the change was planned from; `None` for a file to create.
    pub expected_prior: Option<String>,
    pub content: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct Journal {
    version: u32,
    files: Vec<JournalEntry>,
}

#[derive(Debug, Serialize, Deserialize)]
struct JournalEntry {
    path: String,
    /// The exact prior content; `None` when the transaction creates the file.
    prior: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum TxError {
    #[error("another sqb command is writing to this project")]
    Locked,
    #[error("{0} changed while sqb was running; nothing was written")]
    Changed(String),
    #[error("could not {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Write(#[from] crate::atomic::WriteError),
    #[error("the journal {} is unreadable: {reason}", path.display())]
    BadJournal { path: PathBuf, reason: String },
    /// Ctrl-C or SIGTERM (the signal's number) arrived; every file was restored.
    #[error("interrupted by {}; every file was restored to its prior content", crate::interrupt::name(*.0))]
    Interrupted(i32),
}

fn io<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> TxError + 'a {
    move |source| TxError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// An exclusive lock on the project, held until dropped.
pub struct ProjectLock {
    _file: File,
}

/// Takes the project's write lock, failing fast if another process holds it.
pub fn lock(root: &Path) -> Result<ProjectLock, TxError> {
    let dir = root.join(STATE_DIR);
    std::fs::create_dir_all(&dir).map_err(io("create", &dir))?;
    let path = dir.join(LOCK_FILE);
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(io("open", &path))?;
    match file.try_lock() {
        Ok(()) => Ok(ProjectLock { _file: file }),
        Err(std::fs::TryLockError::WouldBlock) => Err(TxError::Locked),
        Err(std::fs::TryLockError::Error(e)) => Err(io("lock", &path)(e)),
    }
}

/// Applies `changes` under the lock; `check` runs after the files are written, and an `Err`
/// from it restores everything (its value is returned in the `Err`).
pub fn apply<E>(
    root: &Path,
    changes: &[FileChange],
    check: impl FnOnce() -> Result<(), E>,
) -> Result<Result<(), E>, TxError> {
    let _lock = lock(root)?;
    recover_locked(root)?;
    let mut entries = Vec::with_capacity(changes.len());
    for change in changes {
        let path = root.join(&change.rel_path);
        let prior = match std::fs::read_to_string(&path) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io("read", &path)(e)),
        };
        if prior != change.expected_prior {
            return Err(TxError::Changed(change.rel_path.clone()));
        }
        entries.push(JournalEntry {
            path: change.rel_path.clone(),
            prior,
        });
    }
    let journal = Journal {
        version: 1,
        files: entries,
    };
    // The signal thread leaves Ctrl-C and SIGTERM to this transaction, which restores first.
    let deferral = crate::interrupt::defer();
    run_steps(root, changes, &journal, &deferral, check)
}

fn run_steps<E>(
    root: &Path,
    changes: &[FileChange],
    journal: &Journal,
    signals: &Deferral,
    check: impl FnOnce() -> Result<(), E>,
) -> Result<Result<(), E>, TxError> {
    write_journal(root, journal)?;
    crate::interrupt::fault("journal");
    // Every new content goes to a durable temp file first (a new file to its own path); nothing
    // replaced is in place yet, so a failure or a signal here only removes temp and new files.
    let prepared = match tracing::debug_span!("new contents in durable temp files")
        .in_scope(|| prepare_all(root, changes))
    {
        Ok(prepared) => prepared,
        Err(e) => {
            restore(root, journal)?;
            return Err(e);
        }
    };
    if let Some(signal) = signals.received() {
        drop(prepared);
        restore(root, journal)?;
        return Err(TxError::Interrupted(signal));
    }
    let mut dirs = std::collections::BTreeSet::new();
    let mut pending = prepared.into_iter();
    for (i, file) in pending.by_ref().enumerate() {
        dirs.insert(file.dir().to_path_buf());
        if let Err(e) = file.commit() {
            restore(root, journal)?;
            return Err(e.into());
        }
        crate::interrupt::fault(&format!("write:{}", i + 1));
        if let Some(signal) = signals.received() {
            drop(pending);
            restore(root, journal)?;
            return Err(TxError::Interrupted(signal));
        }
    }
    for dir in &dirs {
        sync_dir(dir);
    }
    let checked = check();
    crate::interrupt::fault("check");
    let signal = signals.received();
    if checked.is_err() || signal.is_some() {
        restore(root, journal)?;
        if let (Ok(()), Some(signal)) = (&checked, signal) {
            return Err(TxError::Interrupted(signal));
        }
        return Ok(checked);
    }
    remove_journal(root)?;
    Ok(Ok(()))
}

/// Writes each change's temp file, in order, on every core.
fn prepare_all(root: &Path, changes: &[FileChange]) -> Result<Vec<Prepared>, TxError> {
    // Absolute once, so that no temp file's creation asks for the working directory again.
    let root = &std::path::absolute(root).map_err(io("resolve", root))?;
    let parents: std::collections::BTreeSet<PathBuf> = changes
        .iter()
        .filter_map(|change| Some(root.join(&change.rel_path).parent()?.to_path_buf()))
        .collect();
    for parent in &parents {
        std::fs::create_dir_all(parent).map_err(io("create", parent))?;
    }
    // Many files are made durable together, by syncing their filesystem once; a few are each
    // fsynced, so that a small edit does not wait on unrelated writes elsewhere on the disk.
    let durability = match changes.len() > SYNC_EACH_UP_TO {
        true => Durability::Deferred,
        false => Durability::Fsync,
    };
    // One thread: creating files from several threads in one directory makes ext4's inode
    // allocator contend, and was six times slower for 5,000 files (docs/performance.md).
    // A file the journal records as new is written at its own path: a crash leaves it for
    // the recovery to remove, so it needs no temp file and no rename.
    let prepared: Vec<Prepared> = changes
        .iter()
        .map(|change| {
            let (path, bytes) = (root.join(&change.rel_path), change.content.as_bytes());
            match change.expected_prior {
                Some(_) => prepare_with(&path, bytes, durability),
                None => create_journaled(&path, bytes, durability),
            }
        })
        .collect::<Result<_, _>>()?;
    if durability == Durability::Deferred {
        crate::atomic::sync_filesystems(prepared.iter().map(Prepared::dir))?;
    }
    Ok(prepared)
}

/// Up to this many files, each temp file is fsynced on its own.
const SYNC_EACH_UP_TO: usize = 64;

fn journal_path(root: &Path) -> PathBuf {
    root.join(STATE_DIR).join(JOURNAL_FILE)
}

fn write_journal(root: &Path, journal: &Journal) -> Result<(), TxError> {
    let text = serde_json::to_string(journal).expect("the journal serializes");
    write_atomic(&journal_path(root), text.as_bytes())?;
    sync_dir(&root.join(STATE_DIR));
    Ok(())
}

fn remove_journal(root: &Path) -> Result<(), TxError> {
    let path = journal_path(root);
    std::fs::remove_file(&path).map_err(io("remove", &path))?;
    sync_dir(&root.join(STATE_DIR));
    Ok(())
}

/// Puts every journaled file back to its prior bytes and removes the files it created.
fn restore(root: &Path, journal: &Journal) -> Result<(), TxError> {
    remove_temp_files(root, journal);
    for entry in &journal.files {
        let path = root.join(&entry.path);
        match &entry.prior {
            Some(prior) => {
                let current = std::fs::read(&path).ok();
                if current.as_deref() != Some(prior.as_bytes()) {
                    write_atomic(&path, prior.as_bytes())?;
                }
            }
            None => match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io("remove", &path)(e)),
            },
        }
    }
    remove_journal(root)
}

/// Removes the temp files a crashed write left beside the journal's files (their contents
/// were never put in place, so they are not needed).
fn remove_temp_files(root: &Path, journal: &Journal) {
    let dirs: std::collections::BTreeSet<PathBuf> = journal
        .files
        .iter()
        .filter_map(|entry| {
            let path = root.join(&entry.path);
            let target = std::fs::canonicalize(&path).unwrap_or(path);
            target.parent().map(Path::to_path_buf)
        })
        .collect();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if entry
                .file_name()
                .to_string_lossy()
                .starts_with(crate::atomic::TEMP_PREFIX)
            {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}

/// What a recovery restored.
#[derive(Debug, PartialEq, Eq)]
pub struct Recovered {
    pub restored: usize,
    pub removed: usize,
}

/// Finishes an interrupted transaction by restoring its journal, if one is left. Takes the lock;
/// when another process holds it, that process owns the journal and nothing is done.
pub fn recover(root: &Path) -> Result<Option<Recovered>, TxError> {
    if !journal_path(root).exists() {
        return Ok(None);
    }
    let _lock = match lock(root) {
        Ok(lock) => lock,
        Err(TxError::Locked) => return Ok(None),
        Err(e) => return Err(e),
    };
    recover_locked(root)
}

fn recover_locked(root: &Path) -> Result<Option<Recovered>, TxError> {
    let path = journal_path(root);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io("read", &path)(e)),
    };
    let journal: Journal = serde_json::from_str(&text).map_err(|e| TxError::BadJournal {
        path: path.clone(),
        reason: e.to_string(),
    })?;
    let restored = journal.files.iter().filter(|e| e.prior.is_some()).count();
    let removed = journal.files.len() - restored;
    restore(root, &journal)?;
    Ok(Some(Recovered { restored, removed }))
}
