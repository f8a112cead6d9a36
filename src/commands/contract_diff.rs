//! `sqb contract diff`: compare declarations with a target's physical relations, and with
//! `--baseline` with a previous report of the same target.

use crate::cli::{DiffArgs, DiffFormat, FailOn, GlobalArgs};
use crate::commands::{diff_format, history, inspect_options, note, project_root};
use crate::exit::ExitStatus;
use crate::ops::diff::{run as diff, DiffOptions};
use crate::ops::inspect::target_name;
use crate::report::diff::emit;
use crate::report::{self, Output};

pub fn run(global: &GlobalArgs, args: &DiffArgs) -> anyhow::Result<ExitStatus> {
    let root = project_root(global)?;
    let format = diff_format(
        if args.json {
            DiffFormat::Json
        } else {
            args.format
        },
        &root,
    )?;
    let from = target_name(&root, args.from.as_deref())?;
    let mut inspect = inspect_options(global, &from, &args.selection, &args.connect);
    inspect.partial = true;
    let options = DiffOptions {
        inspect,
        baseline: args.baseline.clone(),
        history: history(&args.history),
    };
    let output = Output::of(args.output.as_deref());
    let outcome = diff(&root, &options, |report| {
        show_compile_errors(report);
        let written = tracing::debug_span!("report written")
            .in_scope(|| report::write(output, |w| emit(report, &format, w)));
        Ok(written?)
    })?;
    if let (Some(run), Some(history)) = (outcome.recorded, &args.history.history) {
        note(
            global,
            &format!("recorded run {run} in {}", history.display()),
        );
    }
    let report = &outcome.report;
    let failing = match (args.fail_on, &report.baseline) {
        (FailOn::New, Some(comparison)) => comparison.new_differences > 0,
        _ => report.has_differences(),
    };
    Ok(match failing || !report.compile_errors.is_empty() {
        true => ExitStatus::Failure,
        false => ExitStatus::Success,
    })
}

/// A project that does not compile is compared all the same: its errors go to stderr first,
/// and fail the run (exit 1) beside the findings.
fn show_compile_errors(report: &crate::report::diff::DiffReport) {
    if report.compile_errors_text.is_empty() {
        return;
    }
    for error in &report.compile_errors_text {
        anstream::eprintln!("{error}\n");
    }
    crate::message::eprint(
        crate::message::Level::Error,
        &format!(
            "the project does not compile ({}); what loaded was compared: {}",
            report::count(report.compile_errors_text.len(), "error", "errors"),
            report::count(report.resources.len(), "resource", "resources"),
        ),
    );
}
