//! Source files read by the loader, and locations inside them.
//!
//! Every diagnostic points at a byte range of one file held here; the map turns byte offsets into
//! the 1-based line and column a user sees.

use std::ops::Range;
use std::path::{Path, PathBuf};

/// Index of a file in a [`SourceMap`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct FileId(pub u32);

impl FileId {
    /// The id of the file at `index` of a [`SourceMap`].
    fn of(index: usize) -> Self {
        // Four billion files cannot be loaded in the first place.
        Self(u32::try_from(index).expect("a project has fewer than 2^32 files"))
    }
}

thread_local! {
    /// While set (see [`as_file`]), every [`FileId`] deserialized on this thread is this one.
    static DESERIALIZE_AS: std::cell::Cell<Option<FileId>> = const { std::cell::Cell::new(None) };
}

/// Runs `f` with every [`FileId`] it deserializes read as `file`.
///
/// What was parsed from one file is stored with that file's id at the time; the next load may
/// number the files differently, so a stored parse is read back as the file's id of now.
pub fn as_file<T>(file: FileId, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<FileId>);
    impl Drop for Restore {
        fn drop(&mut self) {
            DESERIALIZE_AS.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(DESERIALIZE_AS.with(|c| c.replace(Some(file))));
    f()
}

impl<'de> serde::Deserialize<'de> for FileId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let stored = u32::deserialize(d)?;
        Ok(DESERIALIZE_AS
            .with(std::cell::Cell::get)
            .unwrap_or(FileId(stored)))
    }
}

/// The SHA-256 of a file's bytes.
pub type Digest = [u8; 32];

/// A byte range inside one source file. Twelve bytes (file ids and offsets are `u32`): a large project holds one for every
/// declared column's name, type and nullability (three quarters of a million at 250,000
/// columns). Offsets past 4 GiB are kept as 4 GiB.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Loc {
    pub file: FileId,
    start: u32,
    end: u32,
}

impl Loc {
    pub fn new(file: FileId, span: Range<usize>) -> Self {
        let offset = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Self {
            file,
            start: offset(span.start),
            end: offset(span.end),
        }
    }

    /// The start of a file, for problems that concern the whole file.
    pub fn file_start(file: FileId) -> Self {
        Self::new(file, 0..0)
    }

    /// The byte range in the file.
    pub fn span(&self) -> Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// A value together with where it was written.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Spanned<T> {
    pub value: T,
    pub loc: Loc,
}

impl<T> Spanned<T> {
    pub fn new(value: T, loc: Loc) -> Self {
        Self { value, loc }
    }
}

/// One file's text, its path relative to the project root, and its line starts.
#[derive(Debug)]
pub struct SourceFile {
    /// Path relative to the project root, with `/` separators.
    pub rel_path: String,
    pub abs_path: PathBuf,
    /// The text, read when the file was loaded, or on first use for a file the loader found
    /// unchanged since an earlier run (see [`SourceMap::add_unread`]).
    text: std::sync::OnceLock<String>,
    /// Byte offsets of line starts, computed on first use: most files never need them.
    line_starts: std::sync::OnceLock<Vec<usize>>,
    /// The digest of `text`, computed on first use (by the caches, which key on it).
    digest: std::sync::OnceLock<Digest>,
}

impl SourceFile {
    /// The file's text. A file added unread is read now; if it can no longer be read, its text
    /// is empty (logged): it was readable and unchanged when the project was loaded.
    pub fn text(&self) -> &str {
        self.text.get_or_init(|| {
            let text = std::fs::read_to_string(&self.abs_path).unwrap_or_else(|err| {
                tracing::warn!("{} could not be read again: {err}", self.rel_path);
                String::new()
            });
            if self
                .digest
                .get()
                .is_some_and(|d| *d != sha256(text.as_bytes()))
            {
                tracing::warn!("{} changed while sqb was running", self.rel_path);
            }
            text
        })
    }

    /// The text as it was when the project was loaded: `None` when a text read since (a file
    /// added unread, or released) no longer has the digest it was loaded with.
    pub fn loaded_text(&self) -> Option<&str> {
        let text = self.text();
        match self.digest.get() {
            Some(digest) if *digest != sha256(text.as_bytes()) => None,
            _ => Some(text),
        }
    }

    /// Whether the text has been read (a file added unread has not until it is used).
    pub fn is_read(&self) -> bool {
        self.text.get().is_some()
    }

    /// The SHA-256 of the file's text.
    pub fn digest(&self) -> &Digest {
        self.digest.get_or_init(|| sha256(self.text().as_bytes()))
    }

    fn line_starts(&self) -> &[usize] {
        self.line_starts.get_or_init(|| {
            let mut starts = vec![0];
            starts.extend(self.text().match_indices('\n').map(|(i, _)| i + 1));
            starts.shrink_to_fit();
            starts
        })
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let text = self.text();
        let offset = offset.min(text.len());
        let line_starts = self.line_starts();
        let line = match line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = line_starts[line];
        let column = text[start..floor_char_boundary(text, offset)]
            .chars()
            .count();
        (line + 1, column + 1)
    }

    /// Byte offset of a 1-based line and character column, clamped to the text.
    pub fn offset_of(&self, line: usize, column: usize) -> usize {
        let Some(&start) = self.line_starts().get(line.saturating_sub(1)) else {
            return self.text().len();
        };
        let rest = &self.text()[start..];
        let line_text = rest.split('\n').next().unwrap_or("");
        let skip = column.saturating_sub(1);
        start
            + line_text
                .char_indices()
                .nth(skip)
                .map_or(line_text.len(), |(i, _)| i)
    }
}

fn sha256(bytes: &[u8]) -> Digest {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes).into()
}

fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while offset > 0 && !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// All files read for one project, addressed by [`FileId`].
#[derive(Debug, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    /// How many files are held.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Lets go of the texts read so far whose digest is known: each is read again on first use
    /// and checked against its digest, as a file added unread is. Returns how many.
    pub fn release_texts(&mut self) -> usize {
        let mut released = 0;
        for file in &mut self.files {
            if file.digest.get().is_some() && file.text.take().is_some() {
                file.line_starts.take();
                released += 1;
            }
        }
        released
    }

    /// Gives back the room the list grew into beyond its files.
    pub fn shrink_to_fit(&mut self) {
        self.files.shrink_to_fit();
    }

    /// Makes room for `more` files, so that adding thousands does not grow the map step by step.
    pub fn reserve(&mut self, more: usize) {
        self.files.reserve(more);
    }

    pub fn add(&mut self, rel_path: String, abs_path: &Path, text: String) -> FileId {
        self.push(rel_path, abs_path, std::sync::OnceLock::from(text), None)
    }

    /// Adds a file without reading it, known by the digest of its bytes: its text is read
    /// only if something asks for it (a diagnostic quoting it, a parse the caches do not hold).
    pub fn add_unread(&mut self, rel_path: String, abs_path: &Path, digest: Digest) -> FileId {
        self.push(rel_path, abs_path, std::sync::OnceLock::new(), Some(digest))
    }

    fn push(
        &mut self,
        rel_path: String,
        abs_path: &Path,
        text: std::sync::OnceLock<String>,
        digest: Option<Digest>,
    ) -> FileId {
        self.files.push(SourceFile {
            rel_path,
            abs_path: abs_path.to_path_buf(),
            text,
            line_starts: std::sync::OnceLock::new(),
            digest: digest.map(std::sync::OnceLock::from).unwrap_or_default(),
        });
        FileId::of(self.files.len() - 1)
    }

    pub fn get(&self, id: FileId) -> &SourceFile {
        &self.files[id.0 as usize]
    }

    pub fn files(&self) -> impl Iterator<Item = (FileId, &SourceFile)> {
        self.files
            .iter()
            .enumerate()
            .map(|(i, f)| (FileId::of(i), f))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_characters_from_one() {
        let mut map = SourceMap::default();
        let id = map.add("a.toml".into(), Path::new("/a.toml"), "ab\né = 1\n".into());
        let file = map.get(id);
        assert_eq!(file.line_col(0), (1, 1));
        assert_eq!(file.line_col(3), (2, 1));
        assert_eq!(file.line_col(6), (2, 3));
        assert_eq!(file.offset_of(2, 3), 6);
        assert_eq!(file.line_col(1000), (3, 1));
    }

    #[test]
    fn an_unread_text_is_read_from_disk_when_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.sql");
        std::fs::write(&path, "select 1\nfrom t\n").unwrap();
        let mut map = SourceMap::default();
        let digest = sha256(b"select 1\nfrom t\n");
        let unread = map.add_unread("m.sql".into(), &path, digest);
        assert!(!map.get(unread).is_read());
        assert_eq!(map.get(unread).digest(), &digest);
        assert_eq!(map.get(unread).line_col(9), (2, 1));
        assert!(map.get(unread).is_read());

        // Gone since: an empty text, never a panic.
        let gone = map.add_unread("gone.sql".into(), &dir.path().join("gone.sql"), digest);
        assert_eq!(map.get(gone).text(), "");
    }

    /// A map holding `text` as file `name` under `dir` (written there too), its digest taken.
    fn digested(dir: &Path, name: &str, text: &str) -> (SourceMap, FileId) {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let mut map = SourceMap::default();
        let id = map.add(name.into(), &path, text.into());
        map.get(id).digest();
        (map, id)
    }

    /// Released texts are read again on first use, with the same lines; a text whose digest was
    /// never taken is kept, since nothing could check what is read again.
    #[test]
    fn released_texts_are_read_again_when_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let (mut map, digested) = digested(dir.path(), "m.sql", "select 1\nfrom t\n");
        let undigested = map.add("n.sql".into(), &dir.path().join("n.sql"), "x".into());
        assert_eq!(map.get(digested).line_col(9), (2, 1));

        assert_eq!(map.release_texts(), 1);

        assert!(!map.get(digested).is_read());
        assert!(map.get(undigested).is_read());
        assert_eq!(map.get(digested).line_col(9), (2, 1));
        assert_eq!(map.get(digested).text(), "select 1\nfrom t\n");
        assert_eq!(map.get(undigested).text(), "x");
        assert_eq!(map.get(digested).loaded_text(), Some("select 1\nfrom t\n"));
    }

    /// A released text that changed on disk since the load is not the loaded text.
    #[test]
    fn a_released_text_changed_since_is_not_the_loaded_one() {
        let dir = tempfile::tempdir().unwrap();
        let (mut map, id) = digested(dir.path(), "m.toml", "a = 1\n");
        map.release_texts();
        std::fs::write(dir.path().join("m.toml"), "a = 2\n").unwrap();

        assert_eq!(map.get(id).loaded_text(), None);
        assert_eq!(map.get(id).text(), "a = 2\n");
    }

    #[test]
    fn file_ids_deserialize_as_the_file_of_now() {
        let stored = serde_json::to_string(&Loc::new(FileId(7), 1..2)).unwrap();
        let read = |s: &str| serde_json::from_str::<Loc>(s).unwrap();
        assert_eq!(as_file(FileId(3), || read(&stored)).file, FileId(3));
        assert_eq!(read(&stored).file, FileId(7));
    }
}
