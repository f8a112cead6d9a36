//! `sqb contract check`: each model's SQL, described by the target's engine, against its
//! contract.

use crate::cli::{CheckArgs, DiffFormat, GlobalArgs};
use crate::commands::{diff_format, project_root, timeouts};
use crate::exit::ExitStatus;
use crate::ops::check::{check, CheckOptions};
use crate::ops::inspect::{target_name, SelectOptions};
use crate::report::diff::emit;
use crate::report::{self, Output};

pub fn run(global: &GlobalArgs, args: &CheckArgs) -> anyhow::Result<ExitStatus> {
    let root = project_root(global)?;
    let format = match args.json {
        true => DiffFormat::Json,
        false => args.format,
    };
    let format = diff_format(format, &root)?;
    let options = CheckOptions {
        from: target_name(&root, args.from.as_deref())?,
        selection: SelectOptions {
            select: args.selection.select.clone(),
            exclude: args.selection.exclude.clone(),
            file: args.selection.select_file.clone(),
        },
        timeouts: timeouts(&args.connect),
        use_cache: !global.no_cache,
        workers: usize::from(args.parallel.connections),
    };
    let report = check(&root, &options)?;
    let output = Output::of(args.output.as_deref());
    report::write(output, |w| emit(&report, &format, w))?;
    Ok(match report.has_differences() {
        true => ExitStatus::Failure,
        false => ExitStatus::Success,
    })
}
