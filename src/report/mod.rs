//! Every command's results, as data on stdout or in a file: one emitter per command and format,
//! each writing to a `&mut dyn Write` (`compile`, `diff`, `generate`, `lineage`), and the one
//! path that output takes ([`write`]): stdout in one piece, or a file written atomically.
//!
//! Messages (notes, summaries, errors) are not output: the commands write them to stderr.

pub mod adopt;
pub mod assert;
pub mod compile;
pub mod diff;
pub mod drift;
pub mod generate;
pub mod lineage;
pub mod query;
pub mod sarif;
pub mod team_contracts;

use std::io::{self, Write};
use std::path::Path;

use crate::atomic::WriteError;

/// Where a command's output goes.
#[derive(Debug, Clone, Copy)]
pub enum Output<'a> {
    Stdout,
    /// Written atomically, without colour.
    File(&'a Path),
}

/// Why output could not be written.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The reader of stdout went away (`sqb ... | head`): not a failure of the command.
    #[error("stdout was closed")]
    Closed,
    #[error("could not write to stdout: {0}")]
    Stdout(#[source] io::Error),
    #[error("could not render the output: {0}")]
    Render(#[source] io::Error),
    #[error(transparent)]
    File(#[from] WriteError),
}

/// Writes what `emit` writes to `output`. Styles are ANSI codes: kept on a stdout that takes
/// colours (`--color`, `NO_COLOR`, a terminal), removed elsewhere. Rendered in memory first, so
/// that stdout gets one write (through a styled stream, every line would be a write call of its
/// own) and a file is replaced whole or not at all.
pub fn write(
    output: Output<'_>,
    emit: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), OutputError> {
    let mut rendered = Vec::new();
    emit(&mut rendered).map_err(OutputError::Render)?;
    match output {
        Output::File(path) => Ok(crate::atomic::write_atomic(path, &plain(&rendered))?),
        Output::Stdout => {
            let colored =
                anstream::AutoStream::choice(&io::stdout()) != anstream::ColorChoice::Never;
            let bytes = match colored {
                true => rendered,
                false => plain(&rendered),
            };
            let mut out = io::stdout().lock();
            out.write_all(&bytes)
                .and_then(|()| out.flush())
                .map_err(|e| match e.kind() {
                    io::ErrorKind::BrokenPipe => OutputError::Closed,
                    _ => OutputError::Stdout(e),
                })
        }
    }
}

/// `bytes` without ANSI styles.
fn plain(bytes: &[u8]) -> Vec<u8> {
    anstream::adapter::strip_bytes(bytes).into_vec()
}

/// "1 file", "2 files".
/// Text for a Markdown table cell: `|` escaped, a line break made a space (either would end
/// the cell or the row).
pub fn markdown_cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", plural(n, one, many))
}

/// `one` for 1, `many` otherwise.
pub fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    match n {
        1 => one,
        _ => many,
    }
}
