//! Debug and trace logging to stderr (`-v`, `-vv`, or `RUST_LOG`), with every line redacted.
//!
//! Logging is off unless asked for. Each event is formatted into a buffer and passed through
//! [`crate::warehouse::redact::redact`] before it reaches stderr, so a password that a library
//! puts into a log message (a URL, a connection error) never appears, whatever the filter.

use std::io::{self, Write};
use std::time::Instant;

use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::EnvFilter;

use crate::warehouse::redact::redact;

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
        .try_init();
}

/// Runs `f` and logs how long it took, at debug level, under `what`.
pub fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    tracing::debug!(
        elapsed_ms = start.elapsed().as_secs_f64() * 1e3,
        rss_mib = resident_mib(),
        "{what}"
    );
    out
}

/// The process's resident memory in MiB, where the platform tells (Linux); 0 elsewhere.
fn resident_mib() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096 / (1024 * 1024))
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
