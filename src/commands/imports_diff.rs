//! `sqb imports diff`: each import's changelog, marked with the models each change reaches.

use crate::cli::{ChangesFormat, GlobalArgs, ImportsDiffArgs};
use crate::commands::github_prefix;
use crate::commands::{project_root, say, stdout};
use crate::exit::ExitStatus;
use crate::message::Level;
use crate::ops::team_contracts::diff;
use crate::report::team_contracts as printer;

pub fn run(global: &GlobalArgs, args: &ImportsDiffArgs) -> anyhow::Result<ExitStatus> {
    let root = project_root(global)?;
    let diffs = diff(&root, &args.names)?;
    match args.format {
        ChangesFormat::Text => stdout(|w| printer::diff_text(&diffs, w))?,
        ChangesFormat::Json => stdout(|w| printer::diff_json(&diffs, w))?,
        ChangesFormat::Markdown => stdout(|w| printer::diff_markdown(&diffs, w))?,
        ChangesFormat::Junit => stdout(|w| printer::diff_junit(&diffs, w))?,
        ChangesFormat::Github => {
            let prefix = github_prefix(&root)?;
            stdout(|w| printer::diff_github(&diffs, &prefix, w))?
        }
    }
    if diffs.iter().any(|d| d.breaks()) {
        say(
            global,
            Level::Hint,
            "fix the models that break (or waive the findings), then `sqb imports update`",
        );
        return Ok(ExitStatus::Failure);
    }
    Ok(ExitStatus::Success)
}
