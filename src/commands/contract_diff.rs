//! `sqb contract diff`: compare declarations with a target's physical relations, and with
//! `--baseline` with a previous report of the same target.

use anyhow::Context as _;

use crate::cli::{DiffArgs, FailOn, Format, GlobalArgs};
use crate::commands::{diff_format, inspect_options, note, project_root};
use crate::error::UserError;
use crate::exit::ExitStatus;
use crate::ops::diff::diff;
use crate::report::diff::baseline::Baseline;
use crate::report::diff::emit;
use crate::report::{self, Output};

pub fn run(global: &GlobalArgs, args: &DiffArgs) -> anyhow::Result<ExitStatus> {
    let root = project_root(global)?;
    // A baseline that cannot be used stops the run before the warehouse is read.
    let baseline = args.baseline.as_deref().map(read_baseline).transpose()?;
    if let Some((path, b)) = &baseline {
        if b.target != args.from {
            return Err(unusable(
                path,
                &format!(
                    "it is a report of target `{}`, and this diff reads `{}`",
                    b.target, args.from
                ),
            )
            .into());
        }
    }
    let options = inspect_options(global, &args.from, &args.selection, &args.connect);
    let mut report = diff(&root, &options)?;
    if let Some((path, b)) = &baseline {
        report
            .compare(b)
            .map_err(|e| unusable(path, &e.to_string()))?;
    }
    let format = diff_format(if args.json { Format::Json } else { args.format }, &root)?;
    let output = match &args.output {
        Some(path) => Output::File(path),
        None => Output::Stdout,
    };
    tracing::debug_span!("report written")
        .in_scope(|| report::write(output, |w| emit(&report, &format, w)))?;
    // After the report: a history that cannot be written never loses it (but fails the run).
    if let Some(history) = &args.history {
        let timeout = std::time::Duration::from_secs(args.history_timeout);
        let run = crate::ops::drift::record(history, &report, &root, timeout)?;
        note(
            global,
            &format!("recorded run {run} in {}", history.display()),
        );
    }
    let failing = match (args.fail_on, &report.baseline) {
        (FailOn::New, Some(comparison)) => comparison.new_differences > 0,
        _ => report.has_differences(),
    };
    Ok(match failing {
        true => ExitStatus::Failure,
        false => ExitStatus::Success,
    })
}

fn read_baseline(path: &std::path::Path) -> anyhow::Result<(std::path::PathBuf, Baseline)> {
    let bytes = std::fs::read(path)
        .with_context(|| format!("could not read the baseline {}", path.display()))?;
    let baseline = Baseline::parse(&bytes).map_err(|e| unusable(path, &e.to_string()))?;
    Ok((path.to_path_buf(), baseline))
}

fn unusable(path: &std::path::Path, why: &str) -> UserError {
    UserError::new(format!("{} cannot be the baseline: {why}", path.display())).with_hint(
        "pass a report this target wrote with `sqb contract diff --from TARGET --format json`",
    )
}
