//! How an open waits for a database file another process holds locked: by default with one
//! line on stderr saying so; for an open started early, the line is held until its caller
//! waits for it, and the wait ends when the caller no longer wants the open.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

#[derive(Debug, Default, Clone, Copy)]
pub struct Waiting<'a> {
    /// Set once whoever started the open no longer wants it: the wait ends.
    pub stop: Option<&'a AtomicBool>,
    /// Where the line goes instead of stderr, for an open started early.
    pub held: Option<&'a Held>,
}

impl Waiting<'_> {
    pub fn stopped(&self) -> bool {
        self.stop.is_some_and(|s| s.load(Ordering::Relaxed))
    }

    /// Says that the open waits, unless the line is held until [`Held::release`].
    pub fn say(&self, line: String) {
        let now = match self.held {
            Some(held) => held.hold(line),
            None => Some(line),
        };
        if let Some(line) = now {
            say(&line);
        }
    }
}

/// The line an open started early holds until its caller waits for the open: a caller that
/// never does (its command stopped before it needed the database) never shows it.
#[derive(Debug, Default)]
pub struct Held(Mutex<HeldState>);

#[derive(Debug, Default)]
struct HeldState {
    line: Option<String>,
    released: bool,
}

impl Held {
    /// Keeps `line` until the release; after it, gives it back to be said now.
    fn hold(&self, line: String) -> Option<String> {
        let mut state = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match state.released {
            true => Some(line),
            false => state.line.replace(line).and(None),
        }
    }

    /// The caller now waits: the line held, and any said from now on, go to stderr.
    pub fn release(&self) {
        if let Some(line) = self.released() {
            say(&line);
        }
    }

    fn released(&self) -> Option<String> {
        let mut state = self.0.lock().unwrap_or_else(|e| e.into_inner());
        state.released = true;
        state.line.take()
    }
}

fn say(line: &str) {
    crate::message::eprint(crate::message::Level::Note, line);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_held_until_the_release_and_said_at_once_after_it() {
        let held = Held::default();
        assert_eq!(held.hold("first".into()), None);
        assert_eq!(held.hold("second".into()), None);
        assert_eq!(held.released().as_deref(), Some("second"));
        assert_eq!(held.released(), None);
        assert_eq!(held.hold("third".into()).as_deref(), Some("third"));
    }

    #[test]
    fn the_wait_stops_once_asked() {
        let stop = AtomicBool::new(false);
        let waiting = Waiting {
            stop: Some(&stop),
            held: None,
        };
        assert!(!waiting.stopped());
        stop.store(true, Ordering::Relaxed);
        assert!(waiting.stopped());
        assert!(!Waiting::default().stopped());
    }
}
