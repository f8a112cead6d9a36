//! `sqb publish`: the snapshot of the public models, to stdout, a file, or checked against one;
//! with --consumers, what the change does to the consumers that vendor their reads.

use anyhow::Context as _;

use crate::cli::{ChangesFormat, GlobalArgs, PublishArgs};
use crate::commands::github_prefix;
use crate::commands::{note, project_root, say, stdout, timeouts};
use crate::error::UserError;
use crate::exit::ExitStatus;
use crate::message::Level;
use crate::ops::inspect::{InspectOptions, SelectOptions};
use crate::ops::publish::{consumers, publish, PublishOptions};
use crate::report::team_contracts as printer;
use crate::team_contracts::snapshot::Published;

pub fn run(global: &GlobalArgs, args: &PublishArgs) -> anyhow::Result<ExitStatus> {
    let root = project_root(global)?;
    let options = PublishOptions {
        target: args.target.clone(),
        all: args.all,
        from: args.from.as_ref().map(|from| InspectOptions {
            from: from.clone(),
            selection: SelectOptions::default(),
            timeouts: timeouts(&args.connect),
            use_cache: !global.no_cache,
        }),
        use_cache: !global.no_cache,
        locate: args.consumers.is_some()
            && matches!(args.format, ChangesFormat::Github | ChangesFormat::Junit),
    };
    let published = publish(&root, &options)?;
    let broken = match &args.consumers {
        Some(dir) => report_consumers(global, args, &root, &published, dir)?,
        None => false,
    };
    let written = write(global, args, &published)?;
    crate::memory::leave_to_exit(published);
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
    dir: &std::path::Path,
) -> anyhow::Result<bool> {
    let Some(before) = args.check.as_ref().or(args.out.as_ref()) else {
        return Err(UserError::new(
            "--consumers compares with the previous snapshot, and none is named",
        )
        .with_hint("pass it as --check FILE (or --out FILE, which it then replaces)")
        .into());
    };
    if args.check.is_none() && !before.exists() {
        note(
            global,
            &format!(
                "{} does not exist yet: no previous snapshot, no change to report",
                before.display()
            ),
        );
        return Ok(false);
    }
    let report = consumers(before, &published.snapshot, dir)?;
    match args.format {
        ChangesFormat::Text => stdout(|w| printer::consumers_text(&report, w))?,
        ChangesFormat::Json => stdout(|w| printer::consumers_json(&report, w))?,
        ChangesFormat::Markdown => stdout(|w| printer::consumers_markdown(&report, w))?,
        ChangesFormat::Junit => stdout(|w| printer::consumers_junit(&report, published, w))?,
        ChangesFormat::Github => {
            let prefix = github_prefix(root)?;
            stdout(|w| printer::consumers_github(&report, published, &prefix, w))?
        }
    }
    let impacts = &report.consumers;
    for c in impacts.iter().filter(|c| c.stale) {
        let short = c.read_against.get(..12).unwrap_or(&c.read_against);
        say(global, Level::Note, &format!("`{}` computed its reads against snapshot {short}, not the previous one: what it reads since is not in them", c.consumer));
    }
    if impacts.is_empty() {
        note(
            global,
            &format!(
                "no reads file in {} reads `{}`",
                dir.display(),
                published.snapshot.project
            ),
        );
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

/// Writes the snapshot (stdout, --out) or checks it (--check).
fn write(
    global: &GlobalArgs,
    args: &PublishArgs,
    published: &Published,
) -> anyhow::Result<ExitStatus> {
    let (snapshot, bytes) = (&published.snapshot, &published.bytes);
    let models = crate::report::count(snapshot.models.len(), "model", "models");
    if let Some(path) = &args.check {
        let current =
            std::fs::read(path).with_context(|| format!("could not read {}", path.display()))?;
        let same = &current == bytes;
        crate::memory::leave_to_exit(current);
        if same {
            note(
                global,
                &format!("{} is up to date ({models})", path.display()),
            );
            return Ok(ExitStatus::Success);
        }
        eprintln!(
            "{} is out of date: `sqb publish --out {}` writes the current snapshot",
            path.display(),
            path.display()
        );
        return Ok(ExitStatus::Failure);
    }
    match &args.out {
        Some(path) => {
            crate::atomic::write_atomic(path, bytes)
                .with_context(|| format!("could not write {}", path.display()))?;
            note(
                global,
                &format!(
                    "published {models} to {} ({})",
                    path.display(),
                    snapshot.content_hash
                ),
            );
        }
        None => stdout(|w| w.write_all(bytes))?,
    }
    Ok(ExitStatus::Success)
}
