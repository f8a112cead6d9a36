//! Why a query is refused: a stable code (docs/semantic-contracts.md), a message and a hint.
//! The exit status each code ends `sqb query` with is the command's (`commands::query`).

/// Why a query is refused; `code` is stable (docs/semantic-contracts.md).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct Refusal {
    pub code: &'static str,
    pub message: String,
    pub hint: Option<String>,
}

impl Refusal {
    pub(super) fn new(code: &'static str, message: impl Into<String>) -> Self {
        Refusal {
            code,
            message: message.into(),
            hint: None,
        }
    }

    pub(super) fn from_diagnostic(
        code: &'static str,
        diag: &crate::diagnostics::Diagnostic,
    ) -> Self {
        Refusal {
            code,
            message: diag.message.clone(),
            hint: diag.hint.clone(),
        }
    }
}
