//! `sqb publish`: the snapshot of the public models, to stdout, a file, or checked against one;
//! with --consumers, what the change does to the consumers that vendor their reads.

use crate::cli::{ChangesFormat, GlobalArgs, PublishArgs};
use crate::commands::github_prefix;
use crate::commands::{note, project_root, say, stdout, timeouts};
use crate::exit::ExitStatus;
use crate::message::Level;
use crate::ops::inspect::{InspectOptions, SelectOptions};
use crate::ops::publish::{self as op, Consumers, DeliverOptions, Delivery, PublishOptions};
use crate::report::team_contracts as printer;
use crate::team_contracts::impact::ConsumersReport;
use crate::team_contracts::snapshot::Published;

pub fn run(global: &GlobalArgs, args: &PublishArgs) -> anyhow::Result<ExitStatus> {
    let root = project_root(global)?;
    let options = PublishOptions {
        target: args.target.clone(),
        all: args.all,
        from: args.from.as_ref().map(|from| InspectOptions {
            partial: false,
            from: from.clone(),
            selection: SelectOptions::default(),
            timeouts: timeouts(&args.connect),
            use_cache: !global.no_cache,
        }),
        use_cache: !global.no_cache,
        locate: args.consumers.is_some()
            && matches!(args.format, ChangesFormat::Github | ChangesFormat::Junit),
    };
    let deliver = DeliverOptions {
        check: args.check.clone(),
        out: args.out.clone().filter(|p| p.as_os_str() != "-"),
        consumers: args.consumers.clone(),
    };
    let outcome = op::run(&root, &options, &deliver)?;
    let published = &outcome.published;
    let broken = match &outcome.consumers {
        Consumers::NotAsked => false,
        Consumers::NoPrevious(path) => {
            note(
                global,
                &format!(
                    "{} does not exist yet: no previous snapshot, no change to report",
                    path.display()
                ),
            );
            false
        }
        Consumers::Report(report) => report_consumers(global, args, &root, published, report)?,
    };
    let written = delivered(global, &outcome.delivery, published)?;
    crate::memory::leave_to_exit(outcome.published);
    Ok(match (written, broken) {
        (ExitStatus::Success, true) => ExitStatus::Failure,
        (status, _) => status,
    })
}

/// Prints what the change does to each consumer; whether it breaks one.
fn report_consumers(
    global: &GlobalArgs,
    args: &PublishArgs,
    root: &std::path::Path,
    published: &Published,
    report: &ConsumersReport,
) -> anyhow::Result<bool> {
    match args.format {
        ChangesFormat::Text => stdout(|w| printer::consumers_text(report, w))?,
        ChangesFormat::Json => stdout(|w| printer::consumers_json(report, w))?,
        ChangesFormat::Markdown => stdout(|w| printer::consumers_markdown(report, w))?,
        ChangesFormat::Junit => stdout(|w| printer::consumers_junit(report, published, w))?,
        ChangesFormat::Github => {
            let prefix = github_prefix(root)?;
            stdout(|w| printer::consumers_github(report, published, &prefix, w))?
        }
    }
    let impacts = &report.consumers;
    for c in impacts.iter().filter(|c| c.stale) {
        let short = c.read_against.get(..12).unwrap_or(&c.read_against);
        say(global, Level::Note, &format!("`{}` computed its reads against snapshot {short}, not the previous one: what it reads since is not in them", c.consumer));
    }
    if impacts.is_empty() {
        if let Some(dir) = &args.consumers {
            note(
                global,
                &format!(
                    "no reads file in {} reads `{}`",
                    dir.display(),
                    published.snapshot.project
                ),
            );
        }
    }
    let broken = impacts.iter().filter(|c| c.breaks()).count();
    if broken > 0 {
        let who = match broken {
            1 => "1 consumer breaks".to_string(),
            n => format!("{n} consumers break"),
        };
        say(
            global,
            Level::Hint,
            &format!(
                "{who} on this change: tell their owners before it ships, or keep what they read"
            ),
        );
    }
    Ok(broken > 0)
}

/// Says what became of the snapshot (or prints it).
fn delivered(
    global: &GlobalArgs,
    delivery: &Delivery,
    published: &Published,
) -> anyhow::Result<ExitStatus> {
    let models = crate::report::count(published.snapshot.models.len(), "model", "models");
    Ok(match delivery {
        Delivery::UpToDate(path) => {
            note(
                global,
                &format!("{} is up to date ({models})", path.display()),
            );
            ExitStatus::Success
        }
        Delivery::OutOfDate(path) => {
            anstream::eprintln!(
                "{} is out of date: `sqb publish --output {}` writes the current snapshot",
                path.display(),
                path.display()
            );
            ExitStatus::Failure
        }
        Delivery::Written(path) => {
            note(
                global,
                &format!(
                    "published {models} to {} ({})",
                    path.display(),
                    published.snapshot.content_hash
                ),
            );
            ExitStatus::Success
        }
        Delivery::Stdout => {
            stdout(|w| w.write_all(&published.bytes))?;
            ExitStatus::Success
        }
    })
}
