//! `sqb man`: the man pages, rendered from the clap definitions by clap_mangen: sqb.1 on
//! stdout, or with `--dir` one page per command written atomically into a directory.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::CommandFactory as _;

use crate::cli::{Cli, GlobalArgs, ManArgs};
use crate::commands::{note, stdout};
use crate::error::UserError;
use crate::exit::ExitStatus;
use crate::report::count;

pub fn run(global: &GlobalArgs, args: &ManArgs) -> anyhow::Result<ExitStatus> {
    let mut command = Cli::command().disable_help_subcommand(true);
    command.build();
    let Some(dir) = &args.dir else {
        let page = render(&command)?;
        stdout(|w| w.write_all(&page))?;
        return Ok(ExitStatus::Success);
    };
    if dir.exists() && !dir.is_dir() {
        return Err(
            UserError::new(format!("{} is not a directory", dir.display()))
                .with_hint("--dir names the directory the pages go into (man1/ of a MANPATH entry)")
                .into(),
        );
    }
    std::fs::create_dir_all(dir).with_context(|| format!("could not create {}", dir.display()))?;
    let mut written = Vec::new();
    write_pages(&command, dir, &mut written)?;
    note(
        global,
        &format!(
            "wrote {} to {}",
            count(written.len(), "man page", "man pages"),
            dir.display()
        ),
    );
    Ok(ExitStatus::Success)
}

/// Writes the page of `command` and of each of its visible subcommands, depth first.
fn write_pages(
    command: &clap::Command,
    dir: &Path,
    written: &mut Vec<PathBuf>,
) -> anyhow::Result<()> {
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_pages(sub, dir, written)?;
    }
    let man = clap_mangen::Man::new(command.clone());
    let path = dir.join(man.get_filename());
    crate::atomic::write_atomic(&path, &render(command)?)?;
    written.push(path);
    Ok(())
}

fn render(command: &clap::Command) -> anyhow::Result<Vec<u8>> {
    let mut page = Vec::new();
    clap_mangen::Man::new(command.clone())
        .render(&mut page)
        .context("could not render the man page")?;
    Ok(page)
}
