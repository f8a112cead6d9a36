//! Command-line definitions. The doc comments here are the `--help` text users read.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Keep a SQL project's column contracts honest against the real warehouse.
///
/// sqb reads a project of SQL models with TOML column declarations (sqb.toml at its root),
/// validates it offline, and compares the declarations with the relations in Postgres or DuckDB.
#[derive(Debug, Parser)]
#[command(name = "sqb", version, propagate_version = true, max_term_width = 100)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// The project root (the directory holding sqb.toml). Default: the nearest sqb.toml found
    /// walking up from the current directory.
    #[arg(long, global = true, value_name = "DIR")]
    pub project_dir: Option<PathBuf>,

    /// When to use colours. `auto` uses them on a terminal unless NO_COLOR is set.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,

    /// Print only errors: no warnings, notes or summary lines.
    #[arg(short, long, global = true)]
    pub quiet: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate the whole project offline: every file, every contract rule, and each model's SQL.
    ///
    /// Never connects to a warehouse. Exit status: 0 when the project is valid (warnings
    /// allowed), 1 when it has errors, 2 when the command itself failed (no project found,
    /// usage error).
    Compile(CompileArgs),
}

#[derive(Debug, Args)]
pub struct CompileArgs {
    /// Output format: annotated diagnostics, or a JSON document (see docs/diagnostics.md).
    #[arg(long, value_enum, default_value_t = CompileFormat::Text)]
    pub format: CompileFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompileFormat {
    Text,
    Json,
}
