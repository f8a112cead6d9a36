//! One module per subcommand: each maps its clap arguments to an op's plain options, runs the op,
//! hands the result to a printer in [`crate::report`] and returns an [`ExitStatus`]. What they
//! share: colours, messages and errors on stderr, the project root, and the options every
//! warehouse command takes.

pub mod assert;
pub mod audit;
pub mod compile;
pub mod completions;
pub mod contract_check;
pub mod contract_diff;
pub mod contract_generate;
pub mod contract_migrate;
pub mod drift_report;
pub mod import_dbt;
pub mod imports_diff;
pub mod imports_reads;
pub mod imports_update;
pub mod imports_verify;
pub mod init;
pub mod lineage;
pub mod ls;
pub mod man;
pub mod promote;
pub mod publish;
pub mod query;
pub mod serve;

use std::path::PathBuf;

use anstream::eprintln;
use anyhow::Context as _;

use crate::cli::{
    Cli, ColorChoice, Command, ConnectArgs, ContractCommand, DriftCommand, EngineArg, GlobalArgs,
    HistoryArgs, ImportCommand, ImportsCommand, SelectArgs,
};
use crate::engine::Engine;
use crate::error::UserError;
use crate::exit::ExitStatus;
use crate::message::{self, Level};
use crate::ops::inspect::{InspectOptions, SelectOptions};
use crate::report::{Output, OutputError};
use crate::warehouse::{Timeouts, WarehouseError};

/// Runs the command `cli` names and prints its error, if any. A closed stdout
/// (`sqb ... | head`) ends the command quietly with exit status 0.
pub fn run(cli: &Cli) -> ExitStatus {
    let result = match &cli.command {
        Command::Init(args) => init::run(&cli.global, args),
        Command::Compile(args) => compile::run(&cli.global, args),
        Command::Ls(args) => ls::run(&cli.global, args),
        Command::Contract(ContractCommand::Diff(args)) => contract_diff::run(&cli.global, args),
        Command::Contract(ContractCommand::Check(args)) => contract_check::run(&cli.global, args),
        Command::Contract(ContractCommand::Generate(args)) => {
            contract_generate::run(&cli.global, args)
        }
        Command::Contract(ContractCommand::Migrate(args)) => {
            contract_migrate::run(&cli.global, args)
        }
        Command::Lineage(args) => lineage::run(&cli.global, args),
        Command::Publish(args) => publish::run(&cli.global, args),
        Command::Imports(ImportsCommand::Update(args)) => imports_update::run(&cli.global, args),
        Command::Imports(ImportsCommand::Diff(args)) => imports_diff::run(&cli.global, args),
        Command::Imports(ImportsCommand::Reads(args)) => imports_reads::run(&cli.global, args),
        Command::Imports(ImportsCommand::Verify(args)) => imports_verify::run(&cli.global, args),
        Command::Drift(DriftCommand::Report(args)) => drift_report::run(&cli.global, args),
        Command::Import(ImportCommand::Dbt(args)) => import_dbt::run(&cli.global, args),
        Command::Query(args) => query::run(&cli.global, args),
        Command::Assert(args) => assert::run(&cli.global, args),
        Command::Audit(args) => audit::run(&cli.global, args),
        Command::Promote(args) => promote::run(&cli.global, args),
        Command::Serve(args) => serve::run(&cli.global, args),
        Command::Completions(args) => completions::run(args),
        Command::Man(args) => man::run(&cli.global, args),
    };
    match result {
        Ok(status) => status,
        Err(err) if closed_stdout(&err) => ExitStatus::Success,
        Err(err) => {
            print_error(&err);
            ExitStatus::Error
        }
    }
}

fn closed_stdout(err: &anyhow::Error) -> bool {
    err.chain()
        .any(|e| matches!(e.downcast_ref::<OutputError>(), Some(OutputError::Closed)))
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

/// Whether stderr gets colours, after [`set_color`].
pub fn stderr_color() -> bool {
    anstream::AutoStream::choice(&std::io::stderr()) != anstream::ColorChoice::Never
}

/// Prints a failed command's diagnostics, error chain and hint to stderr.
fn print_error(err: &anyhow::Error) {
    let user = err.chain().find_map(|e| e.downcast_ref::<UserError>());
    if let Some(diagnostics) = user.and_then(|u| u.diagnostics.as_deref()) {
        eprintln!("{diagnostics}\n");
    }
    message::eprint(Level::Error, &err.to_string());
    for cause in err.chain().skip(1) {
        message::eprint(Level::CausedBy, &cause.to_string());
    }
    let hint = user.and_then(|u| u.hint.clone()).or_else(|| {
        err.chain()
            .find_map(|e| e.downcast_ref::<WarehouseError>())
            .and_then(|w| w.hint())
            .map(String::from)
    });
    if let Some(hint) = hint {
        message::eprint(Level::Hint, &hint);
    }
}

/// Prints a refused query's code, message and hint to stderr.
fn print_refusal(refusal: &crate::semantic::query::Refusal) {
    message::eprint_code(Level::Error, refusal.code, &refusal.message);
    if let Some(hint) = &refusal.hint {
        message::eprint(Level::Hint, hint);
    }
}

/// Prints a message to stderr unless `--quiet`.
pub fn note(global: &GlobalArgs, message: &str) {
    if !global.quiet {
        eprintln!("{message}");
    }
}

/// Prints a labelled message (`warning: …`, `hint: …`) to stderr unless `--quiet`.
pub fn say(global: &GlobalArgs, level: Level, text: &str) {
    if !global.quiet {
        message::eprint(level, text);
    }
}

/// Writes a command's output to stdout.
pub fn stdout(
    emit: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), OutputError> {
    crate::report::write(Output::Stdout, emit)
}

/// The project root, after rolling back an interrupted write found there (said on stderr).
pub fn project_root(global: &GlobalArgs) -> anyhow::Result<PathBuf> {
    let root = crate::ops::root::find(global.project_dir.as_deref())?;
    if let Some(recovered) = root.recovered {
        message::eprint(
            Level::Recovered,
            &format!(
                "an interrupted `sqb contract generate --write` was rolled back ({} restored, {} removed)",
                crate::report::count(recovered.restored, "file", "files"),
                crate::report::count(recovered.removed, "new file", "new files"),
            ),
        );
    }
    Ok(root.path)
}

/// What every warehouse command reads: the target, the selection, the timeouts, the cache.
pub fn inspect_options(
    global: &GlobalArgs,
    from: &str,
    selection: &SelectArgs,
    connect: &ConnectArgs,
) -> InspectOptions {
    InspectOptions {
        from: from.to_string(),
        selection: SelectOptions {
            select: selection.select.clone(),
            exclude: selection.exclude.clone(),
            file: selection.select_file.clone(),
        },
        timeouts: timeouts(connect),
        use_cache: !global.no_cache,
        partial: false,
    }
}

/// The project root relative to the working directory, so that GitHub annotations made from
/// the repository root land on the right files.
pub fn github_prefix(root: &std::path::Path) -> anyhow::Result<String> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let cwd = std::fs::canonicalize(&cwd).unwrap_or(cwd);
    Ok(match root.strip_prefix(&cwd) {
        Ok(rel) if rel.as_os_str().is_empty() => String::new(),
        Ok(rel) => format!(
            "{}/",
            crate::project::rel_path(std::path::Path::new(""), rel)
        ),
        Err(_) => String::new(),
    })
}

/// The report format of `contract diff` and `imports verify`; GitHub annotations get the
/// project root's prefix.
pub fn diff_format(
    format: crate::cli::DiffFormat,
    root: &std::path::Path,
) -> anyhow::Result<crate::report::diff::DiffPrinter> {
    use crate::cli::DiffFormat;
    use crate::report::diff::DiffPrinter;
    Ok(match format {
        DiffFormat::Text => DiffPrinter::Text,
        DiffFormat::Json => DiffPrinter::Json,
        DiffFormat::Markdown => DiffPrinter::Markdown,
        DiffFormat::Junit => DiffPrinter::Junit,
        DiffFormat::Github => DiffPrinter::Github {
            prefix: github_prefix(root)?,
        },
        DiffFormat::Sarif => DiffPrinter::Sarif {
            prefix: github_prefix(root)?,
        },
    })
}

/// The engine `--engine` names.
pub fn engine_of(arg: EngineArg) -> Engine {
    match arg {
        EngineArg::Postgres => Engine::Postgres,
        EngineArg::Duckdb => Engine::DuckDb,
    }
}

/// `--history FILE [--history-timeout D]`, when given.
pub fn history(args: &HistoryArgs) -> Option<crate::ops::drift::HistoryOptions> {
    args.history
        .as_ref()
        .map(|path| crate::ops::drift::HistoryOptions {
            path: path.clone(),
            timeout: std::time::Duration::from_secs(args.history_timeout),
        })
}

pub fn timeouts(connect: &ConnectArgs) -> Timeouts {
    Timeouts {
        connect: std::time::Duration::from_secs(connect.connect_timeout.max(1)),
        statement: std::time::Duration::from_secs(connect.statement_timeout.max(1)),
    }
}
