//! The analysis memo: within one process, each model's inferred output remembered with the
//! digest of its SQL and every question its inference asked of the relations it reads, with
//! the answers.
//!
//! A second compile of the same project in the same process — `contract generate --write`
//! recompiling after it wrote the sidecars — reuses a model's analysis when its SQL is the same
//! text and every question gets the same answer now, and parses and infers only the others. The
//! questions are the whole of what inference reads besides the statement (it sees the project
//! only through [`Upstream`]), so a reuse is the analysis a fresh compile would make. What a
//! model's *own* declaration says is checked again on every compile; it is not part of the
//! memo. Off unless [`enable`]d: it holds every model's shape for the life of the process.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use sha2::{Digest, Sha256};
use sqlparser::ast::Ident;

use super::deps::Reference;
use super::sql::{Interface, Issue, OutColumn, Shape, Upstream, Use};
use crate::engine::Engine;
use crate::project::Model;
use crate::source::Loc;

static ENABLED: AtomicBool = AtomicBool::new(false);
static MEMO: OnceLock<Mutex<HashMap<String, Arc<Entry>>>> = OnceLock::new();

/// Remembers analyses from now on, for a later compile in this process.
pub fn enable() {
    ENABLED.store(true, Ordering::Relaxed);
}

pub(super) fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

fn memo() -> &'static Mutex<HashMap<String, Arc<Entry>>> {
    MEMO.get_or_init(Default::default)
}

/// What a model's analysis is keyed by: its SQL's exact text, the engine, and whether lineage
/// was computed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key([u8; 32]);

impl Key {
    pub(super) fn new(sql: &str, engine: Engine, lineage: bool) -> Self {
        let mut h = Sha256::new();
        h.update(format!("{engine:?}").as_bytes());
        h.update([u8::from(lineage)]);
        h.update(sql.as_bytes());
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
pub struct Entry {
    key: Key,
    /// The relations its SQL reads, as written, and where (in its SQL file).
    references: Vec<(Vec<Ident>, Range<usize>)>,
    asked: Vec<Asked>,
    pub shape: Shape,
    pub issues: Vec<Issue>,
    pub uses: Vec<Use>,
}

impl Entry {
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

    /// Whether every question its inference asked gets the same answer from `upstream`.
    pub(super) fn holds(&self, upstream: &dyn Upstream) -> bool {
        self.asked.iter().all(|a| a.holds(upstream))
    }
}

/// The remembered analysis of `model` if its SQL is keyed `key`.
pub(super) fn lookup(model: &str, key: &Key) -> Option<Arc<Entry>> {
    let memo = memo().lock().ok()?;
    memo.get(model).filter(|e| e.key == *key).cloned()
}

/// Remembers `model`'s analysis.
pub(super) fn store(
    model: &str,
    key: Key,
    references: &[Reference],
    recorder: Recorder<'_>,
    (shape, issues, uses): (&Shape, &[Issue], &[Use]),
) {
    let entry = Entry {
        key,
        references: references
            .iter()
            .map(|r| (r.parts.clone(), r.loc.span.clone()))
            .collect(),
        asked: recorder.asked.into_inner(),
        shape: shape.clone(),
        issues: issues.to_vec(),
        uses: uses.to_vec(),
    };
    if let Ok(mut memo) = memo().lock() {
        memo.insert(model.to_string(), Arc::new(entry));
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
        let entry = Entry {
            key: Key::new("select x from a", Engine::DuckDb, false),
            references: Vec::new(),
            asked: recorder.asked.into_inner(),
            shape: None,
            issues: Vec::new(),
            uses: Vec::new(),
        };
        assert!(entry.holds(&Fixed(vec![column(None)])));
        let typed = crate::types::parse("integer", Engine::DuckDb).ok();
        assert!(typed.is_some());
        assert!(!entry.holds(&Fixed(vec![column(typed)])));
        assert_ne!(
            entry.key,
            Key::new("select x from a ", Engine::DuckDb, false),
            "another text is another key"
        );
        assert_ne!(entry.key, Key::new("select x from a", Engine::DuckDb, true));
    }
}
