//! Messages on stderr, in one shape: a label (`error`, `warning`, `note`, `hint`, …), a colon
//! and the text, the label coloured where stderr takes colour (never under `NO_COLOR` or into a
//! file), and the text redacted of any password. Every message sqb writes to stderr goes through
//! [`eprint`] (data goes to stdout).

use anstyle::{AnsiColor, Style};

use crate::redact::redact;

/// What a message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// The command failed (or a query was refused), with its code when it has one.
    Error,
    /// A cause of the error above it, indented under it.
    CausedBy,
    Warning,
    Note,
    /// What to do about the message above it.
    Hint,
    /// sqb put something right on its own (an interrupted write rolled back).
    Recovered,
}

impl Level {
    fn label(self) -> (&'static str, Style) {
        let bold = |c: AnsiColor| c.on_default().bold();
        match self {
            Level::Error => ("error", bold(AnsiColor::Red)),
            Level::CausedBy => ("  caused by", bold(AnsiColor::Red)),
            Level::Warning => ("warning", bold(AnsiColor::Yellow)),
            Level::Note => ("note", Style::new().bold()),
            Level::Hint => ("hint", bold(AnsiColor::Cyan)),
            Level::Recovered => ("recovered", bold(AnsiColor::Cyan)),
        }
    }
}

/// The message as one line (or more, when `text` has line breaks), styled: `error[code]: text`
/// when there is a code.
pub fn format(level: Level, code: Option<&str>, text: &str) -> String {
    let (label, style) = level.label();
    let code = code.map_or_else(String::new, |c| format!("[{c}]"));
    format!("{style}{label}{code}{style:#}: {}", redact(text))
}

/// Writes the message to stderr (colour stripped where stderr takes none).
pub fn eprint(level: Level, text: &str) {
    anstream::eprintln!("{}", format(level, None, text));
}

/// Writes the message, with its code, to stderr.
pub fn eprint_code(level: Level, code: &str, text: &str) {
    anstream::eprintln!("{}", format(level, Some(code), text));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_has_one_shape() {
        let plain = |s: String| anstream::adapter::strip_str(&s).to_string();
        assert_eq!(plain(format(Level::Error, None, "x")), "error: x");
        assert_eq!(
            plain(format(Level::Error, Some("guardrail"), "x")),
            "error[guardrail]: x"
        );
        assert_eq!(plain(format(Level::CausedBy, None, "y")), "  caused by: y");
        assert_eq!(plain(format(Level::Hint, None, "z")), "hint: z");
        assert_eq!(plain(format(Level::Recovered, None, "r")), "recovered: r");
        assert_eq!(plain(format(Level::Warning, None, "w")), "warning: w");
        assert_eq!(plain(format(Level::Note, None, "n")), "note: n");
    }

    #[test]
    fn the_text_is_redacted() {
        let text = format(Level::Error, None, "postgres://u:secret@h/db failed");
        assert!(!text.contains("secret"), "{text}");
    }
}
