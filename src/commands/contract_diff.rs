//! `sqb contract diff`: compare declarations with a target's physical relations.

use crate::cli::{DiffArgs, Format, GlobalArgs};
use crate::commands::{diff_format, inspect_options, project_root};
use crate::exit::ExitStatus;
use crate::ops::diff::diff;
use crate::report::diff::emit;
use crate::report::{self, Output};

pub fn run(global: &GlobalArgs, args: &DiffArgs) -> anyhow::Result<ExitStatus> {
    let root = project_root(global)?;
    let options = inspect_options(global, &args.from, &args.selection, &args.connect);
    let report = diff(&root, &options)?;
    let format = diff_format(if args.json { Format::Json } else { args.format }, &root)?;
    let output = match &args.output {
        Some(path) => Output::File(path),
        None => Output::Stdout,
    };
    tracing::debug_span!("report written")
        .in_scope(|| report::write(output, |w| emit(&report, &format, w)))?;
    Ok(match report.has_differences() {
        true => ExitStatus::Failure,
        false => ExitStatus::Success,
    })
}
