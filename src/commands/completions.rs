//! `sqb completions SHELL`: the shell completion script, generated from the clap definitions
//! by clap_complete, on stdout.

use clap::CommandFactory as _;

use crate::cli::{Cli, CompletionsArgs};
use crate::commands::stdout;
use crate::exit::ExitStatus;

pub fn run(args: &CompletionsArgs) -> anyhow::Result<ExitStatus> {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "sqb", &mut script);
    stdout(|w| w.write_all(&script))?;
    Ok(ExitStatus::Success)
}
