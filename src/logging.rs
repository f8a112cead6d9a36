//! Debug and trace logging to stderr (`-v`, `-vv`, or `RUST_LOG`), with every line redacted.
//!
//! The phases of a command are `tracing` spans (`debug_span!("project loaded")`); each logs its
//! duration when it closes.
//!
//! Logging is off unless asked for. Each event is formatted into a buffer and passed through
//! [`crate::redact::redact`] before it reaches stderr, so a password that a library
//! puts into a log message (a URL, a connection error) never appears, whatever the filter.

use std::io::{self, Write};

use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::EnvFilter;

use crate::redact::redact;

/// Installs the logger. `verbose` counts `-v` flags; a set `RUST_LOG` takes precedence.
pub fn init(verbose: u8, color: bool) {
    let filter = match std::env::var("RUST_LOG") {
        Ok(spec) if !spec.trim().is_empty() => EnvFilter::new(spec),
        _ => EnvFilter::new(match verbose {
            0 => "off",
            1 => "sqb=debug",
            _ => "sqb=trace,sqlx=debug",
        }),
    };
    // A second init (tests calling into the library twice) keeps the first logger.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(RedactingStderr)
        .with_ansi(color)
        .with_target(true)
        .with_timer(tracing_subscriber::fmt::time::uptime())
        // Each phase is a span; closing it logs how long it took (`time.busy`).
        .with_span_events(FmtSpan::CLOSE)
        .try_init();
}

/// Hands out one [`RedactedLine`] per log event.
struct RedactingStderr;

impl<'a> MakeWriter<'a> for RedactingStderr {
    type Writer = RedactedLine;

    fn make_writer(&'a self) -> Self::Writer {
        RedactedLine(Vec::new())
    }
}

/// One event's text, redacted and written to stderr when dropped.
struct RedactedLine(Vec<u8>);

impl Write for RedactedLine {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for RedactedLine {
    fn drop(&mut self) {
        let text = redact(&String::from_utf8_lossy(&self.0));
        // Logging must never fail the command; a closed stderr loses the line.
        let _ = io::stderr().lock().write_all(text.as_bytes());
    }
}
