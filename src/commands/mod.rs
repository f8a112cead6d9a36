//! One module per subcommand, and what they share: finding the project, colours, error output.

pub mod compile;

use std::path::PathBuf;

use anstream::{eprintln, println};
use anstyle::{AnsiColor, Style};

use crate::cli::{Cli, ColorChoice, Command, GlobalArgs};
use crate::error::UserError;
use crate::exit::ExitStatus;
use crate::project;

/// Runs the command `cli` names.
pub fn run(cli: &Cli) -> anyhow::Result<ExitStatus> {
    match &cli.command {
        Command::Compile(args) => compile::run(&cli.global, args),
    }
}

/// Applies `--color` to every output stream; `auto` defers to the terminal and NO_COLOR.
pub fn set_color(choice: ColorChoice) {
    let choice = match choice {
        ColorChoice::Auto => anstream::ColorChoice::Auto,
        ColorChoice::Always => anstream::ColorChoice::Always,
        ColorChoice::Never => anstream::ColorChoice::Never,
    };
    choice.write_global();
}

const ERROR: Style = AnsiColor::Red.on_default().bold();
const HINT: Style = AnsiColor::Cyan.on_default().bold();

/// Prints a failed command's error chain and hint to stderr.
pub fn print_error(err: &anyhow::Error) {
    eprintln!("{ERROR}error{ERROR:#}: {err}");
    for cause in err.chain().skip(1) {
        eprintln!("  {ERROR}caused by{ERROR:#}: {cause}");
    }
    if let Some(hint) = err
        .chain()
        .find_map(|e| e.downcast_ref::<UserError>())
        .and_then(|e| e.hint.as_ref())
    {
        eprintln!("{HINT}hint{HINT:#}: {hint}");
    }
}

/// Prints a `hint:`-style note to stderr unless `--quiet`.
pub fn note(global: &GlobalArgs, message: &str) {
    if !global.quiet {
        eprintln!("{message}");
    }
}

/// Writes data to stdout.
pub fn data(text: &str) {
    println!("{text}");
}

/// The project root: `--project-dir`, or the nearest `sqb.toml` above the working directory.
pub fn project_root(global: &GlobalArgs) -> anyhow::Result<PathBuf> {
    if let Some(dir) = &global.project_dir {
        if !dir.join(project::PROJECT_FILE).is_file() {
            return Err(UserError::new(format!("no sqb.toml in {}", dir.display()))
                .with_hint("--project-dir names the directory that holds sqb.toml")
                .into());
        }
        return Ok(dir.clone());
    }
    let cwd = std::env::current_dir()
        .map_err(|e| UserError::new(format!("cannot read the current directory: {e}")))?;
    project::find_root(&cwd).ok_or_else(|| {
        UserError::new(format!(
            "no sqb.toml found in {} or any parent directory",
            cwd.display()
        ))
        .with_hint("run sqb inside a project, or pass --project-dir")
        .into()
    })
}
