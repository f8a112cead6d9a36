//! The file stamps: which project files are unchanged since the last load, known without reading
//! them.
//!
//! Each model's SQL and sidecar and each contract file is remembered in
//! `.sqb/cache/files-v1.bin` by its path, its stamp (size, modification and status-change times,
//! inode and device) and the SHA-256 of its bytes. A file whose stamp is the same now is taken to
//! have the same bytes, as build tools and git take it: it is added to the project unread, known
//! by its digest, which is all the other caches key on, and read only if something asks for its
//! text (a diagnostic that quotes it, a parse or an analysis no cache holds).
//!
//! Two rules keep a stamp from vouching for bytes it does not describe. A file is stat-ed before
//! it is read, so an edit made while it is read leaves it with a newer stamp than the one stored.
//! And a stamp vouches only for a file whose newest time is [`MARGIN`] older than the run that
//! stored it (and than the stamps file itself): timestamps are coarse (a clock tick, or two
//! seconds on FAT), so a file changed again within the tick it was stamped in could keep its
//! stamp; such a file is read until it is old enough. Restoring a file's modification time
//! (`touch -d`, `cp -p`) still changes its status-change time, which the stamp holds too.
//!
//! Like every cache here it is framed with a checksum and the sqb build that wrote it (see
//! [`crate::cache_dir`]): a damaged, foreign or other build's file vouches for nothing, and
//! deleting it is always safe. `--no-cache` neither reads nor writes it.

use foldhash::{HashMap, HashMapExt};
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::discover::Found;
use crate::source::{Digest, FileId, SourceMap};

/// The stamps file in the cache directory. Bumped whenever its layout changes.
const FILE: &str = "files-v1.bin";

/// How much older than the run that stamped it a file must be for its stamp to vouch for it.
const MARGIN: Duration = Duration::from_secs(2);

/// What the file system says of a file, as far as a change to its bytes would show in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Stamp {
    len: u64,
    /// Modification time, nanoseconds since the epoch.
    modified: i128,
    /// Status-change time (any write, rename or `chmod`), nanoseconds since the epoch.
    changed: i128,
    inode: u64,
    device: u64,
}

impl Stamp {
    #[cfg(unix)]
    fn of(meta: &std::fs::Metadata) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        let nanos = |secs: i64, nsecs: i64| i128::from(secs) * 1_000_000_000 + i128::from(nsecs);
        Some(Self {
            len: meta.len(),
            modified: nanos(meta.mtime(), meta.mtime_nsec()),
            changed: nanos(meta.ctime(), meta.ctime_nsec()),
            inode: meta.ino(),
            device: meta.dev(),
        })
    }

    /// The stamp of what `statx` said, with the values [`std::fs::Metadata`] gives on Linux
    /// (the device as `makedev` of its major and minor numbers), so that a stamp stored from
    /// one compares equal with the other's.
    #[cfg(target_os = "linux")]
    fn of_statx(st: &rustix::fs::Statx) -> Self {
        let nanos = |t: rustix::fs::StatxTimestamp| {
            i128::from(t.tv_sec) * 1_000_000_000 + i128::from(t.tv_nsec)
        };
        Self {
            len: st.stx_size,
            modified: nanos(st.stx_mtime),
            changed: nanos(st.stx_ctime),
            inode: st.stx_ino,
            device: libc::makedev(st.stx_dev_major, st.stx_dev_minor),
        }
    }

    /// Elsewhere the status-change time is not known: nothing is vouched for.
    #[cfg(not(unix))]
    fn of(_meta: &std::fs::Metadata) -> Option<Self> {
        None
    }

    fn newest(&self) -> i128 {
        self.modified.max(self.changed)
    }
}

#[derive(Serialize, Deserialize)]
struct Stored<'a> {
    build: &'a str,
    /// When the run that stored these stamps began to take them, nanoseconds since the epoch.
    taken: i128,
    #[serde(borrow)]
    entries: Vec<StampedFile<'a>>,
}

#[derive(Serialize, Deserialize)]
struct StampedFile<'a> {
    /// Borrowed from the file as read; owned when written, on a thread of its own.
    #[serde(borrow)]
    path: std::borrow::Cow<'a, str>,
    stamp: Stamp,
    digest: Digest,
}

/// A file as [`Stamps::read`] found it.
pub(super) enum Content {
    /// Read now.
    Text(String),
    /// Unchanged since it was stamped: known by its digest, not read.
    Unchanged(Digest),
}

/// One read: the content (or why it could not be read) and the stamp taken before it.
pub(super) type Read = (std::io::Result<Content>, Option<Stamp>);

/// The stamps of the last load, and when this load began taking its own.
pub(super) struct Stamps {
    enabled: bool,
    known: HashMap<String, (Stamp, Digest)>,
    /// A stored stamp vouches only for a file whose newest time is before this.
    vouch_before: i128,
    /// When this load began stat-ing files.
    taken: i128,
    /// The folders of the files stat-ed so far, each open once (see [`Folders`]).
    #[cfg(target_os = "linux")]
    folders: Folders,
}

impl Stamps {
    /// The stored stamps of the project at `root`; none when `enabled` is false, or when there
    /// is no usable stamps file (logged).
    pub(super) fn open(root: &Path, enabled: bool) -> Self {
        let taken = nanos_since_epoch(SystemTime::now());
        let mut stamps = Self {
            enabled,
            known: HashMap::new(),
            vouch_before: i128::MIN,
            taken,
            #[cfg(target_os = "linux")]
            folders: Folders::default(),
        };
        if !enabled {
            return stamps;
        }
        // The file an earlier load of this process is still writing is the one to read.
        crate::cache_dir::wait_for_writes_of(FILE);
        let path = crate::cache_dir::path(root, FILE);
        // The stamps file's own time is the file system's clock, which a network file system's
        // files are stamped by too.
        let written = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .map(nanos_since_epoch);
        let Some(bytes) = crate::cache_dir::read(root, FILE) else {
            return stamps;
        };
        let Some(stored) = decode(&bytes) else {
            return stamps;
        };
        let margin = MARGIN.as_nanos() as i128;
        stamps.vouch_before = stored.taken.min(written.unwrap_or(i128::MIN)) - margin;
        stamps.known = stored
            .entries
            .into_iter()
            .map(|e| (e.path.into_owned(), (e.stamp, e.digest)))
            .collect();
        stamps
    }

    /// The file `found`, unread when its stored stamp vouches for it, else read. On every core
    /// through [`crate::parallel`]: it takes `&self`.
    pub(super) fn read(&self, found: &Found) -> Read {
        if !self.enabled {
            return (std::fs::read_to_string(&found.abs).map(Content::Text), None);
        }
        if let Some((then, digest)) = self.known.get(&found.rel) {
            // Stat before reading: an edit made after this stat shows in the next one.
            let stamp = match self.stamp(&found.abs) {
                Ok(stamp) => stamp,
                Err(err) => return (Err(err), None),
            };
            if stamp.is_some_and(|now| now == *then && now.newest() < self.vouch_before) {
                return (Ok(Content::Unchanged(*digest)), stamp);
            }
        }
        read_stamped(&found.abs)
    }

    /// The stamp of the file at `path` as it is now.
    fn stamp(&self, path: &Path) -> std::io::Result<Option<Stamp>> {
        #[cfg(target_os = "linux")]
        if let Some(stamp) = self.folders.stamp(path) {
            return Ok(Some(stamp));
        }
        std::fs::metadata(path).map(|meta| Stamp::of(&meta))
    }

    /// Stores the stamps of `stamped` (the files [`Stamps::read`] returned, as added to
    /// `sources`) unless they are the stored ones: written when a file was read (new, changed,
    /// or too recent to vouch for) or a stamped file is gone; on a thread of its own (see
    /// [`crate::cache_dir::write_in_background`]).
    pub(super) fn store(&self, root: &Path, sources: &SourceMap, stamped: &[(FileId, Stamp)]) {
        if !self.enabled {
            return;
        }
        let read = stamped
            .iter()
            .filter(|(id, _)| sources.get(*id).is_read())
            .count();
        tracing::debug!(files = stamped.len(), read, "project files stamped");
        if read == 0 && stamped.len() == self.known.len() {
            return;
        }
        let files: Vec<_> = stamped.iter().map(|(id, _)| sources.get(*id)).collect();
        // The read files' digests, on every core (the compile cache's key reuses them).
        crate::parallel::map(&files, |f| *f.digest());
        let stored = Stored {
            build: crate::cache_dir::build_identity(),
            taken: self.taken,
            entries: files
                .iter()
                .zip(stamped)
                .map(|(file, (_, stamp))| StampedFile {
                    path: file.rel_path.clone().into(),
                    stamp: *stamp,
                    digest: *file.digest(),
                })
                .collect(),
        };
        // Written while the command goes on: encoding and syncing 20,000 stamps kept a first
        // load's compile waiting 24 ms.
        let root = root.to_path_buf();
        crate::cache_dir::write_in_background(FILE, move || {
            crate::cache_dir::write_framed(&root, FILE, "file stamps", &stored);
        });
    }
}

/// The folders of the files a load stats, each opened once (`O_PATH`), so that a file is
/// stat-ed by its name in its folder: the kernel looks up one component instead of every one of
/// an absolute path (20,000 stats of an unchanged project's files were a tenth of a warm diff's
/// CPU). At most [`Folders::MAX`] are kept open; the files of any other folder are stat-ed by
/// their path, as is any file whose `statx` fails here (which then says why).
#[cfg(target_os = "linux")]
#[derive(Default)]
struct Folders(
    std::sync::Mutex<HashMap<std::path::PathBuf, Option<std::sync::Arc<rustix::fd::OwnedFd>>>>,
);

#[cfg(target_os = "linux")]
impl Folders {
    /// Far below the usual limit of 1,024 open files.
    const MAX: usize = 64;

    fn stamp(&self, path: &Path) -> Option<Stamp> {
        use rustix::fs::{AtFlags, StatxFlags};
        let (folder, name) = (path.parent()?, path.file_name()?);
        let folder = self.open(folder)?;
        let st = rustix::fs::statx(&*folder, name, AtFlags::empty(), StatxFlags::BASIC_STATS);
        st.ok().map(|st| Stamp::of_statx(&st))
    }

    fn open(&self, folder: &Path) -> Option<std::sync::Arc<rustix::fd::OwnedFd>> {
        use rustix::fs::{Mode, OFlags};
        let mut open = self.0.lock().ok()?;
        if let Some(fd) = open.get(folder) {
            return fd.clone();
        }
        if open.len() >= Self::MAX {
            return None;
        }
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = rustix::fs::open(folder, flags, Mode::empty())
            .ok()
            .map(std::sync::Arc::new);
        open.insert(folder.to_path_buf(), fd.clone());
        fd
    }
}

/// Reads the file at `path` with the stamp of the file it opened, taken before reading (so
/// an edit made while it is read shows in the next stamp): one `stat` of the open file instead
/// of one of its path and another of the open file, which on a first load of 20,000 files was
/// a sixth of their system calls.
fn read_stamped(path: &Path) -> Read {
    use std::io::Read as _;
    let mut file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(err) => return (Err(err), None),
    };
    let meta = match file.metadata() {
        Ok(meta) => meta,
        Err(err) => return (Err(err), None),
    };
    let mut text = String::new();
    let read = text
        .try_reserve_exact(usize::try_from(meta.len()).unwrap_or(0))
        .map_err(std::io::Error::other)
        // Through `Take`: `File`'s own `read_to_string` would stat the file again for its size.
        .and_then(|()| (&mut file).take(u64::MAX).read_to_string(&mut text));
    (read.map(|_| Content::Text(text)), Stamp::of(&meta))
}

/// A stamps file written by this build, or `None` (logged).
fn decode(bytes: &[u8]) -> Option<Stored<'_>> {
    crate::cache_dir::decode(bytes, "file stamps", |stored: &Stored<'_>| stored.build)
}

fn nanos_since_epoch(time: SystemTime) -> i128 {
    match time.duration_since(UNIX_EPOCH) {
        Ok(after) => after.as_nanos() as i128,
        Err(before) => -(before.duration().as_nanos() as i128),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(rel: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/sql_project")
            .join(rel)
    }

    /// A stamp stored by one way of stat-ing a file must vouch for it when taken the other way
    /// next time, or every file of a warm load would be read again.
    #[test]
    fn a_file_stamped_on_reading_has_the_stamp_a_later_stat_gives() {
        let path = fixture("models/stg_orders.sql");
        let by_path = Stamp::of(&std::fs::metadata(&path).unwrap()).unwrap();
        let (text, read) = read_stamped(&path);
        assert!(
            matches!(text, Ok(Content::Text(t)) if t == std::fs::read_to_string(&path).unwrap())
        );
        assert_eq!(read, Some(by_path));
        let stamps = Stamps::open(Path::new("/nonexistent"), true);
        assert_eq!(stamps.stamp(&path).unwrap(), Some(by_path));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn files_are_stat_ed_in_their_folder_opened_once() {
        let folders = Folders::default();
        let path = fixture("models/stg_orders.sql");
        let by_path = Stamp::of(&std::fs::metadata(&path).unwrap()).unwrap();
        assert_eq!(folders.stamp(&path), Some(by_path));
        assert!(folders
            .stamp(&fixture("models/stg_customers.sql"))
            .is_some());
        assert_eq!(folders.0.lock().unwrap().len(), 1);
        // A missing file is left to the stat by path, which says why.
        assert_eq!(folders.stamp(&fixture("models/no_such_model.sql")), None);
    }

    /// The stamps file is written on a thread of its own; a later load of the same process
    /// must read what it stored, not miss a file still being written.
    #[test]
    fn a_load_reads_the_stamps_an_earlier_load_of_the_process_is_still_writing() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let mut sources = SourceMap::default();
        let mut stamped = Vec::new();
        for i in 0..3000 {
            let rel = format!("m{i}.sql");
            let abs = root.join(&rel);
            std::fs::write(&abs, format!("select {i} as x")).unwrap();
            let (Ok(Content::Text(text)), Some(stamp)) = read_stamped(&abs) else {
                panic!("{rel} is stamped on reading");
            };
            stamped.push((sources.add(rel, &abs, text), stamp));
        }
        Stamps::open(root, true).store(root, &sources, &stamped);
        let again = Stamps::open(root, true);
        assert_eq!(again.known.len(), 3000);
        let (stamp, digest) = &again.known["m7.sql"];
        assert_eq!(
            (stamp, digest),
            (&stamped[7].1, sources.get(stamped[7].0).digest())
        );
        crate::cache_dir::wait_for_writes();
    }
}
