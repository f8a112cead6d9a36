//! The `sqb` binary: parse arguments, dispatch to a command, map the outcome to an exit status.

use std::process::ExitCode;

use clap::Parser;
use sqb::cli::Cli;
use sqb::exit::ExitStatus;

fn main() -> ExitCode {
    let cli = Cli::parse();
    sqb::commands::set_color(cli.global.color);
    match sqb::commands::run(&cli) {
        Ok(status) => status.into(),
        Err(err) => {
            sqb::commands::print_error(&err);
            ExitStatus::Error.into()
        }
    }
}
