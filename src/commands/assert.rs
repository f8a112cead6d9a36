//! `sqb assert`: the assertions run on a target, the report on stdout, the summary on stderr.

use crate::cli::{AssertArgs, AssertFormat, GlobalArgs};
use crate::commands::query::principal;
use crate::commands::{note, project_root, stdout, timeouts};
use crate::error::UserError;
use crate::exit::ExitStatus;
use crate::ops::assert::{assert, AssertOptions};
use crate::report::assert::{self as printer, AssertFormat as Printed};

pub fn run(global: &GlobalArgs, args: &AssertArgs) -> anyhow::Result<ExitStatus> {
    if let Some(share) = args.min_accuracy {
        if !(0.0..=1.0).contains(&share) {
            return Err(UserError::new(format!(
                "--min-accuracy {share} is not a share between 0 and 1"
            ))
            .with_hint("0.95 passes when 95% of the assertions pass")
            .into());
        }
    }
    let root = project_root(global)?;
    let options = AssertOptions {
        from: args.from.clone(),
        select: args.select.clone(),
        principal: principal(&args.principal)?,
        timeouts: timeouts(&args.connect),
        use_cache: !global.no_cache,
        tenants: args.tenants.clone(),
    };
    let format = match args.format {
        AssertFormat::Text => Printed::Text,
        AssertFormat::Json => Printed::Json,
        AssertFormat::Junit => Printed::Junit,
        AssertFormat::Github => Printed::Github {
            prefix: crate::commands::github_prefix(&root)?,
        },
    };
    let report = assert(&root, &options)?;
    stdout(|w| printer::emit(&report, &format, w))?;
    let total = report.outcomes.len();
    let passed = report.outcomes.iter().filter(|o| o.passed()).count();
    let errors = report.errors();
    note(
        global,
        &format!(
            "{}: {passed} passed, {} failed, {errors} could not run (accuracy {:.1}%)",
            crate::report::count(total, "assertion", "assertions"),
            total - passed - errors,
            report.accuracy() * 100.0
        ),
    );
    Ok(if errors > 0 {
        ExitStatus::Error
    } else if passed == total || args.min_accuracy.is_some_and(|m| report.accuracy() >= m) {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
}
