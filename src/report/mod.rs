//! Every command's results, as data on stdout or in a file: one emitter per command and format,
//! each writing to a `&mut dyn Write` (`compile`, `diff`, `generate`, `lineage`), and the one
//! path that output takes ([`write`]): stdout in one piece, or a file written atomically.
//!
//! Messages (notes, summaries, errors) are not output: the commands write them to stderr.

pub mod adopt;
pub mod assert;
pub mod audit;
pub mod audit_ci;
pub mod compile;
pub mod diff;
pub mod drift;
pub mod generate;
pub mod init;
pub mod lineage;
pub mod ls;
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
    /// Written without colour, by [`write_file`]'s rules.
    File(&'a Path),
}

impl<'a> Output<'a> {
    /// `--output PATH`: `-` is standard output, as in every Unix tool; no flag is stdout too.
    pub fn of(path: Option<&'a Path>) -> Self {
        match path {
            Some(path) if path.as_os_str() != "-" => Output::File(path),
            _ => Output::Stdout,
        }
    }

    /// The file written to, if not stdout.
    pub fn file(self) -> Option<&'a Path> {
        match self {
            Output::File(path) => Some(path),
            Output::Stdout => None,
        }
    }
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
        Output::File(path) => Ok(write_file(path, &plain(&rendered))?),
        Output::Stdout => {
            // Text a printer rendered without styles (`stdout_takes_colour`) has none to strip.
            let styled = rendered.contains(&0x1b);
            let bytes = match stdout_takes_colour() || !styled {
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

/// Writes a command's output file: a regular file (or a new one) is replaced atomically; a FIFO
/// or a character device (`/dev/null`, a terminal) is opened and written in place, never
/// renamed over; a symbolic link, a directory, a block device or a socket is refused. A write
/// that fails (a full disk or device) is an error naming the path and the cause.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    use std::os::unix::fs::FileTypeExt;
    let refuse = |what: String| WriteError {
        path: path.to_path_buf(),
        source: io::Error::new(io::ErrorKind::InvalidInput, what),
    };
    let kind = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return crate::atomic::write_atomic(path, bytes)
        }
        Err(e) => {
            return Err(WriteError {
                path: path.to_path_buf(),
                source: e,
            })
        }
        Ok(meta) => meta.file_type(),
    };
    if kind.is_file() {
        crate::atomic::write_atomic(path, bytes)
    } else if kind.is_fifo() || kind.is_char_device() {
        write_in_place(path, bytes)
    } else if kind.is_symlink() {
        let to = std::fs::read_link(path).map_or(String::new(), |t| format!(" to {}", t.display()));
        Err(refuse(format!(
            "it is a symbolic link{to}, and sqb does not write through links: name the file itself"
        )))
    } else if kind.is_dir() {
        Err(refuse("it is a directory".to_string()))
    } else {
        Err(refuse(
            "it is neither a regular file nor a FIFO or character device".to_string(),
        ))
    }
}

/// Writes to a FIFO or a device as it is: opened without creating or truncating anything.
fn write_in_place(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let failed = |source| WriteError {
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(failed)?;
    file.write_all(bytes)
        .and_then(|()| file.flush())
        .map_err(failed)
}

/// `bytes` without ANSI styles.
/// Whether stdout keeps styles (`--color`, `NO_COLOR`, a terminal). A printer of much text may
/// leave them out where it does not: [`write`] would only strip them again.
pub fn stdout_takes_colour() -> bool {
    anstream::AutoStream::choice(&io::stdout()) != anstream::ColorChoice::Never
}

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
