//! Errors meant for the user, with an optional `hint:` line and the diagnostics that explain them.

use std::fmt;

/// An error whose message is written for the user, with a hint on what to do.
#[derive(Debug)]
pub struct UserError {
    pub message: String,
    pub hint: Option<String>,
    /// Rendered diagnostics that explain the error, printed before it.
    pub diagnostics: Option<String>,
}

impl UserError {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            hint: None,
            diagnostics: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub fn with_diagnostics(mut self, rendered: String) -> Self {
        self.diagnostics = Some(rendered);
        self
    }
}

impl fmt::Display for UserError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for UserError {}
