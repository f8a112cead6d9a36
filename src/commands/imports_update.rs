//! `sqb imports update`: each import's accepted changes, or with --check whether any is behind.

use crate::cli::{GlobalArgs, ImportsUpdateArgs, TextOrJson};
use crate::commands::{project_root, say, stdout};
use crate::exit::ExitStatus;
use crate::message::Level;
use crate::ops::team_contracts::{update, UpdateOptions};
use crate::report::team_contracts::{self as printer, UpdateMode};

pub fn run(global: &GlobalArgs, args: &ImportsUpdateArgs) -> anyhow::Result<ExitStatus> {
    let root = project_root(global)?;
    let options = UpdateOptions {
        names: args.names.clone(),
        check: args.check,
        dry_run: args.dry_run,
        force: args.force,
    };
    let states = update(&root, &options)?;
    let mode = match (args.check, args.dry_run) {
        (true, _) => UpdateMode::Check,
        (_, true) => UpdateMode::DryRun,
        _ => UpdateMode::Update,
    };
    match args.format {
        TextOrJson::Text => stdout(|w| printer::update_text(&states, mode, w))?,
        TextOrJson::Json => stdout(|w| printer::update_json(&states, mode, w))?,
    }
    let failing = states
        .iter()
        .any(|s| s.stale_pin.is_some() || (args.check && s.behind));
    if failing {
        say(
            global,
            Level::Hint,
            "`sqb imports update` accepts the snapshots once the models handle them",
        );
        return Ok(ExitStatus::Failure);
    }
    Ok(ExitStatus::Success)
}
