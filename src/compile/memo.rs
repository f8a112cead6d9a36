//! The analysis memo: each model's inferred output remembered with the digest of its SQL and
//! every question its inference asked of the relations it reads, with the answers.
//!
//! A compile reuses a model's analysis when its SQL is the same text and every question gets
//! the same answer now, and parses and infers only the others: `contract generate --write`
//! recompiling after it wrote sidecars, or a CI job on a fresh clone whose restored cache
//! holds the analyses of the models a change did not touch. The questions are the whole of what
//! inference reads besides the statement (it sees the project only through [`Upstream`]), so a
//! reuse is the analysis a fresh compile would make; a model whose upstream's declaration
//! changed is analysed again, and so, through their answers, are the models reading it. What
//! a model's *own* declaration says is checked on every compile; it is not part of the memo.
//!
//! Entries are held encoded (a few hundred bytes a model). Off unless [`enable`]d; [`load`]
//! and [`save`] keep them in `.sqb/cache/analyses-v1.bin` between processes: the SHA-256 of
//! the rest, then postcard headed by the sqb build that wrote it — a file from another build,
//! a damaged or foreign one is read as empty, never as a wrong analysis.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use sqlparser::ast::Ident;

use super::deps::Reference;
use super::sql::{Interface, Issue, OutColumn, Shape, Upstream, Use};
use crate::engine::Engine;
use crate::project::Model;
use crate::source::Loc;
use crate::types::DataType;

/// Bumped whenever the stored layout changes.
const FILE: &str = "analyses-v1.bin";

static ENABLED: AtomicBool = AtomicBool::new(false);
/// Whether a later compile in this process will ask again ([`enable`]); otherwise the entries
/// are dropped once [`save`]d.
static KEEP: AtomicBool = AtomicBool::new(false);
static MEMO: OnceLock<Mutex<Memo>> = OnceLock::new();

#[derive(Default)]
struct Memo {
    /// Model name -> its SQL's key and its encoded [`Body`] (shared: a lookup decodes it
    /// outside the lock without copying it).
    entries: HashMap<String, (Key, Arc<[u8]>)>,
    /// Whether an entry was added since the last [`load`] or [`save`].
    changed: bool,
    /// The project roots whose cache file was read.
    loaded: Vec<std::path::PathBuf>,
    /// Analyses reused since the last [`take_reused`].
    reused: usize,
}

/// Remembers analyses from now on, for a later compile in this process.
pub fn enable() {
    ENABLED.store(true, Ordering::Relaxed);
    KEEP.store(true, Ordering::Relaxed);
}

/// Remembers analyses for this compile, to [`save`] them; a process that compiles once holds
/// them no longer than that.
pub(super) fn activate() {
    ENABLED.store(true, Ordering::Relaxed);
}

pub(super) fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

fn memo() -> &'static Mutex<Memo> {
    MEMO.get_or_init(Default::default)
}

/// What a model's analysis is keyed by: the digest of its SQL's exact bytes, the engine, and
/// whether lineage was computed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Key([u8; 32]);

impl Key {
    pub(super) fn new(sql: &crate::source::Digest, engine: Engine, lineage: bool) -> Self {
        let mut h = Sha256::new();
        h.update(format!("{engine:?}").as_bytes());
        h.update([u8::from(lineage)]);
        h.update(sql);
        Self(h.finalize().into())
    }
}

/// One question inference asked of a relation, with the answer it got.
#[derive(Debug, Clone, PartialEq)]
enum Asked {
    Shape(Vec<Ident>, Shape),
    Facts(Vec<Ident>, Vec<OutColumn>),
    Interface(Vec<Ident>, Option<Interface>),
    Origin(Vec<Ident>, &'static str, String),
}

impl Asked {
    /// Whether `upstream` answers the question as it was answered then.
    fn holds(&self, upstream: &dyn Upstream) -> bool {
        match self {
            Asked::Shape(parts, shape) => upstream.shape(parts) == *shape,
            Asked::Facts(parts, facts) => upstream.facts(parts) == *facts,
            Asked::Interface(parts, interface) => upstream.interface(parts) == *interface,
            Asked::Origin(parts, kind, name) => upstream.origin(parts) == (*kind, name.clone()),
        }
    }
}

/// A model's remembered analysis.
#[derive(Debug)]
pub struct MemoEntry {
    /// The relations its SQL reads, as written, and where (in its SQL file).
    references: Vec<(Vec<Ident>, Range<usize>)>,
    asked: Vec<Asked>,
    pub shape: Shape,
    pub issues: Vec<Issue>,
    /// Always empty: only analyses without lineage are remembered.
    pub uses: Vec<Use>,
}

impl MemoEntry {
    /// Its references, located in the model's SQL file of this load.
    pub(super) fn references(&self, model: &Model) -> Vec<Reference> {
        self.references
            .iter()
            .map(|(parts, span)| Reference {
                parts: parts.clone(),
                loc: Loc::new(model.sql_file, span.clone()),
            })
            .collect()
    }

    /// Whether every question its inference asked gets the same answer from `upstream`
    /// (counted as a reuse when it does).
    pub(super) fn holds(&self, upstream: &dyn Upstream) -> bool {
        let holds = self.asked.iter().all(|a| a.holds(upstream));
        if holds {
            if let Ok(mut memo) = memo().lock() {
                memo.reused += 1;
            }
        }
        holds
    }
}

/// How many analyses were reused since the last call.
pub(super) fn take_reused() -> usize {
    memo()
        .lock()
        .map(|mut m| std::mem::take(&mut m.reused))
        .unwrap_or(0)
}

/// The remembered analysis of `model` if its SQL is keyed `key`.
pub(super) fn lookup(model: &str, key: &Key) -> Option<Arc<MemoEntry>> {
    let body = {
        let memo = memo().lock().ok()?;
        let (k, body) = memo.entries.get(model)?;
        if k != key {
            return None;
        }
        Arc::clone(body)
    };
    let body: Body = postcard::from_bytes(&body).ok()?;
    body.entry().map(Arc::new)
}

/// The parts of every reference of `model`'s remembered analysis if its SQL is keyed `key`:
/// only the head of the stored entry is decoded.
pub(super) fn reference_parts(model: &str, key: &Key) -> Option<Vec<String>> {
    let memo = memo().lock().ok()?;
    let (k, body) = memo.entries.get(model)?;
    if k != key {
        return None;
    }
    let (head, _) = postcard::take_from_bytes::<Head>(body).ok()?;
    drop(memo);
    Some(
        head.references
            .into_iter()
            .flat_map(|(parts, _)| parts.into_iter().map(|Name(value, _)| value))
            .collect(),
    )
}

/// Remembers `model`'s analysis (one with lineage is not remembered).
pub(super) fn store(
    model: &str,
    key: Key,
    references: &[Reference],
    recorder: Recorder<'_>,
    (shape, issues, uses): (&Shape, &[Issue], &[Use]),
) {
    if !uses.is_empty() {
        return;
    }
    let Some(body) = Body::of(references, &recorder.asked.into_inner(), shape, issues) else {
        return;
    };
    let Ok(bytes) = postcard::to_allocvec(&body) else {
        return;
    };
    if let Ok(mut memo) = memo().lock() {
        memo.entries.insert(model.to_string(), (key, bytes.into()));
        memo.changed = true;
    }
}

/// Reads the analyses the project's cache holds into the memo (those of this process kept).
pub fn load(root: &Path) {
    if let Ok(mut memo) = memo().lock() {
        if memo.loaded.iter().any(|r| r == root) {
            return;
        }
        memo.loaded.push(root.to_path_buf());
    }
    let Some(bytes) = crate::cache_dir::read(root, FILE) else {
        return;
    };
    let Some(stored) = decode(&bytes) else {
        return;
    };
    if let Ok(mut memo) = memo().lock() {
        let count = stored.entries.len();
        for (name, key, body) in stored.entries {
            memo.entries
                .entry(name.to_string())
                .or_insert_with(|| (key, body.into()));
        }
        tracing::debug!(models = count, "analyses read from the cache");
    }
}

/// Writes the analyses of the models named `models` to the project's cache, if any changed.
pub fn save<'m>(root: &Path, models: impl Iterator<Item = &'m str>) {
    let Ok(mut memo) = memo().lock() else {
        return;
    };
    if memo.changed {
        memo.changed = false;
        write(root, &memo, models);
    }
    // The entries are the analyses' shapes: a process that compiles once frees them before it
    // goes on to the warehouse, and a later compile reads them back from the cache.
    if !KEEP.load(Ordering::Relaxed) {
        memo.entries = HashMap::new();
        memo.loaded.clear();
        ENABLED.store(false, Ordering::Relaxed);
    }
}

fn write<'m>(root: &Path, memo: &Memo, models: impl Iterator<Item = &'m str>) {
    let entries: Vec<(&str, &Key, &[u8])> = models
        .filter_map(|name| {
            let (key, body) = memo.entries.get(name)?;
            Some((name, key, &body[..]))
        })
        .collect();
    let stored = Stored {
        build: crate::cache_dir::build_identity(),
        entries,
    };
    crate::cache_dir::write_framed(root, FILE, "analyses cache", &stored);
}

#[derive(Serialize)]
struct Stored<'a> {
    build: &'a str,
    entries: Vec<(&'a str, &'a Key, &'a [u8])>,
}

#[derive(Deserialize)]
struct Loaded<'a> {
    build: &'a str,
    #[serde(borrow)]
    entries: Vec<(&'a str, Key, &'a [u8])>,
}

/// A cache file written by this build, or `None` (logged).
fn decode(bytes: &[u8]) -> Option<Loaded<'_>> {
    crate::cache_dir::decode(bytes, "analyses cache", |stored: &Loaded<'_>| stored.build)
}

/// An identifier as stored.
#[derive(Serialize, Deserialize)]
struct Name(String, Option<char>);

/// An output column without lineage, as stored.
#[derive(Serialize, Deserialize)]
struct Col {
    name: String,
    position: Option<(usize, usize)>,
    ty: Option<DataType>,
    nullable: Option<bool>,
}

#[derive(Serialize, Deserialize)]
enum Question {
    Shape(Vec<Name>, Option<Vec<Col>>),
    Facts(Vec<Name>, Vec<Col>),
    Interface(Vec<Name>, Option<Interface>),
    Origin(Vec<Name>, String, String),
}

/// An entry as stored.
#[derive(Serialize, Deserialize)]
struct Body {
    references: Vec<(Vec<Name>, Range<usize>)>,
    asked: Vec<Question>,
    shape: Option<Vec<Col>>,
    issues: Vec<Issue>,
}

/// The first field of a [`Body`], decoded alone.
#[derive(Deserialize)]
struct Head {
    references: Vec<(Vec<Name>, Range<usize>)>,
}

/// The kinds [`Upstream::origin`] answers.
const ORIGINS: [&str; 4] = ["model", "source", "import", "external"];

fn names(parts: &[Ident]) -> Vec<Name> {
    parts
        .iter()
        .map(|p| Name(p.value.clone(), p.quote_style))
        .collect()
}

fn idents(names: Vec<Name>) -> Vec<Ident> {
    names
        .into_iter()
        .map(|Name(value, quote)| match quote {
            Some(q) => Ident::with_quote(q, value),
            None => Ident::new(value),
        })
        .collect()
}

/// Columns without lineage, or `None` if one has lineage.
fn cols(columns: &[OutColumn]) -> Option<Vec<Col>> {
    columns
        .iter()
        .map(|c| {
            let plain = c.lineage.columns.is_empty() && c.lineage.unattributed.is_empty();
            plain.then(|| Col {
                name: c.name.clone(),
                position: c.position,
                ty: c.ty.clone(),
                nullable: c.nullable,
            })
        })
        .collect()
}

fn out_columns(columns: Vec<Col>) -> Vec<OutColumn> {
    columns
        .into_iter()
        .map(|c| OutColumn {
            name: c.name,
            position: c.position,
            ty: c.ty,
            nullable: c.nullable,
            lineage: Default::default(),
        })
        .collect()
}

fn shape_cols(shape: &Shape) -> Option<Option<Vec<Col>>> {
    match shape {
        Some(columns) => cols(columns).map(Some),
        None => Some(None),
    }
}

impl Body {
    fn of(
        references: &[Reference],
        asked: &[Asked],
        shape: &Shape,
        issues: &[Issue],
    ) -> Option<Self> {
        let asked = asked
            .iter()
            .map(|a| {
                Some(match a {
                    Asked::Shape(p, s) => Question::Shape(names(p), shape_cols(s)?),
                    Asked::Facts(p, f) => Question::Facts(names(p), cols(f)?),
                    Asked::Interface(p, i) => Question::Interface(names(p), i.clone()),
                    Asked::Origin(p, kind, name) => {
                        Question::Origin(names(p), kind.to_string(), name.clone())
                    }
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Body {
            references: references
                .iter()
                .map(|r| (names(&r.parts), r.loc.span()))
                .collect(),
            asked,
            shape: shape_cols(shape)?,
            issues: issues.to_vec(),
        })
    }

    fn entry(self) -> Option<MemoEntry> {
        let asked = self
            .asked
            .into_iter()
            .map(|q| {
                Some(match q {
                    Question::Shape(p, s) => Asked::Shape(idents(p), s.map(out_columns)),
                    Question::Facts(p, f) => Asked::Facts(idents(p), out_columns(f)),
                    Question::Interface(p, i) => Asked::Interface(idents(p), i),
                    Question::Origin(p, kind, name) => {
                        let kind = ORIGINS.iter().copied().find(|k| *k == kind)?;
                        Asked::Origin(idents(p), kind, name)
                    }
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(MemoEntry {
            references: self
                .references
                .into_iter()
                .map(|(p, span)| (idents(p), span))
                .collect(),
            asked,
            shape: self.shape.map(out_columns),
            issues: self.issues,
            uses: Vec::new(),
        })
    }
}

/// An [`Upstream`] that answers as `inner` does and writes down every question and answer.
pub(super) struct Recorder<'u> {
    inner: &'u dyn Upstream,
    asked: RefCell<Vec<Asked>>,
}

impl<'u> Recorder<'u> {
    pub(super) fn new(inner: &'u dyn Upstream) -> Self {
        Self {
            inner,
            asked: RefCell::new(Vec::new()),
        }
    }

    fn note(&self, asked: Asked) {
        let mut list = self.asked.borrow_mut();
        if !list.contains(&asked) {
            list.push(asked);
        }
    }
}

impl Upstream for Recorder<'_> {
    fn shape(&self, parts: &[Ident]) -> Shape {
        let answer = self.inner.shape(parts);
        self.note(Asked::Shape(parts.to_vec(), answer.clone()));
        answer
    }

    fn facts(&self, parts: &[Ident]) -> Vec<OutColumn> {
        let answer = self.inner.facts(parts);
        self.note(Asked::Facts(parts.to_vec(), answer.clone()));
        answer
    }

    fn interface(&self, parts: &[Ident]) -> Option<Interface> {
        let answer = self.inner.interface(parts);
        self.note(Asked::Interface(parts.to_vec(), answer.clone()));
        answer
    }

    fn origin(&self, parts: &[Ident]) -> (&'static str, String) {
        let answer = self.inner.origin(parts);
        self.note(Asked::Origin(parts.to_vec(), answer.0, answer.1.clone()));
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed(Vec<OutColumn>);

    impl Upstream for Fixed {
        fn shape(&self, _: &[Ident]) -> Shape {
            Some(self.0.clone())
        }
        fn facts(&self, _: &[Ident]) -> Vec<OutColumn> {
            self.0.clone()
        }
        fn interface(&self, _: &[Ident]) -> Option<Interface> {
            None
        }
        fn origin(&self, _: &[Ident]) -> (&'static str, String) {
            ("model", "a".into())
        }
    }

    fn column(ty: Option<crate::types::DataType>) -> OutColumn {
        OutColumn {
            name: "x".into(),
            position: None,
            ty,
            nullable: None,
            lineage: Default::default(),
        }
    }

    #[test]
    fn an_entry_holds_only_while_every_answer_is_the_same() {
        let before = Fixed(vec![column(None)]);
        let recorder = Recorder::new(&before);
        recorder.facts(&[Ident::new("a")]);
        recorder.facts(&[Ident::new("a")]);
        recorder.origin(&[Ident::new("a")]);
        assert_eq!(recorder.asked.borrow().len(), 2, "a question is noted once");
        let body = Body::of(&[], &recorder.asked.into_inner(), &None, &[]).unwrap();
        let bytes = postcard::to_allocvec(&body).unwrap();
        let entry = postcard::from_bytes::<Body>(&bytes)
            .unwrap()
            .entry()
            .unwrap();
        assert!(entry.holds(&Fixed(vec![column(None)])));
        let typed = crate::types::parse("integer", Engine::DuckDb).ok();
        assert!(typed.is_some());
        assert!(!entry.holds(&Fixed(vec![column(typed)])));
        let key = |sql: &str, lineage| {
            let digest: crate::source::Digest = Sha256::digest(sql).into();
            Key::new(&digest, Engine::DuckDb, lineage)
        };
        assert_ne!(
            key("select x from a", false),
            key("select x from a ", false)
        );
        assert_ne!(key("select x from a", false), key("select x from a", true));
    }
}
