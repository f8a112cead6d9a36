//! `sqb drift report`: a drift history over a period, as text, JSON, Markdown or HTML.

use crate::cli::{DriftFormat, DriftReportArgs, GlobalArgs};
use crate::exit::ExitStatus;
use crate::ops::drift::{report, DriftOptions};
use crate::report::drift as printer;
use crate::report::{self, Output};

pub fn run(_global: &GlobalArgs, args: &DriftReportArgs) -> anyhow::Result<ExitStatus> {
    let options = DriftOptions {
        target: args.target.clone(),
        since: args.since.clone(),
        timeout: std::time::Duration::from_secs(args.history_timeout),
    };
    let drift = report(&args.history, &options)?;
    let output = Output::of(args.output.as_deref());
    report::write(output, |w| match args.format {
        DriftFormat::Text => printer::emit_text(&drift, w),
        DriftFormat::Json => printer::emit_json(&drift, w),
        DriftFormat::Markdown => printer::emit_markdown(&drift, w),
        DriftFormat::Html => printer::emit_html(&drift, w),
    })?;
    Ok(ExitStatus::Success)
}
