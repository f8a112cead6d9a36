//! `sqb imports verify`: the vendored snapshots against the live warehouse.

use crate::cli::{GlobalArgs, ImportsVerifyArgs};
use crate::commands::{diff_format, project_root, timeouts};
use crate::exit::ExitStatus;
use crate::ops::inspect::target_name;
use crate::ops::verify::{verify, VerifyOptions};
use crate::report::diff::emit;
use crate::report::{self, Output};

pub fn run(global: &GlobalArgs, args: &ImportsVerifyArgs) -> anyhow::Result<ExitStatus> {
    let root = project_root(global)?;
    let options = VerifyOptions {
        names: args.names.clone(),
        from: target_name(&root, args.from.as_deref())?,
        timeouts: timeouts(&args.connect),
        use_cache: !global.no_cache,
    };
    let report = verify(&root, &options)?;
    let format = diff_format(args.format, &root)?;
    let output = Output::of(args.output.as_deref());
    report::write(output, |w| emit(&report, &format, w))?;
    Ok(match report.has_differences() {
        true => ExitStatus::Failure,
        false => ExitStatus::Success,
    })
}
