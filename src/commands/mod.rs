//! One module per subcommand, and what they share: finding the project, colours, error output.

pub mod compile;
pub mod contract_diff;
pub mod contract_generate;
pub mod lineage;

use std::path::PathBuf;

use anyhow::Context;

use anstream::{eprintln, println};
use anstyle::{AnsiColor, Style};

use crate::cli::{Cli, ColorChoice, Command, ConnectArgs, ContractCommand, GlobalArgs, SelectArgs};
use crate::compile::deps::Graph;
use crate::contract::inspect::{Connect, Inspection, Session};
use crate::error::UserError;
use crate::exit::ExitStatus;
use crate::project::{self, Project, Target};
use crate::select::{Resource, Selection};
use crate::warehouse::redact::redact;
use crate::warehouse::{Timeouts, WarehouseError};

/// Runs the command `cli` names.
pub fn run(cli: &Cli) -> anyhow::Result<ExitStatus> {
    match &cli.command {
        Command::Compile(args) => compile::run(&cli.global, args),
        Command::Contract(ContractCommand::Diff(args)) => contract_diff::run(&cli.global, args),
        Command::Lineage(args) => lineage::run(&cli.global, args),
        Command::Contract(ContractCommand::Generate(args)) => {
            contract_generate::run(&cli.global, args)
        }
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

/// Whether stderr gets colours, after [`set_color`].
pub fn stderr_color() -> bool {
    anstream::AutoStream::choice(&std::io::stderr()) != anstream::ColorChoice::Never
}

const ERROR: Style = AnsiColor::Red.on_default().bold();
const HINT: Style = AnsiColor::Cyan.on_default().bold();

/// Prints a failed command's error chain and hint to stderr.
pub fn print_error(err: &anyhow::Error) {
    eprintln!("{ERROR}error{ERROR:#}: {}", redact(&err.to_string()));
    for cause in err.chain().skip(1) {
        eprintln!(
            "  {ERROR}caused by{ERROR:#}: {}",
            redact(&cause.to_string())
        );
    }
    let hint = err.chain().find_map(|e| {
        e.downcast_ref::<UserError>()
            .and_then(|u| u.hint.clone())
            .or_else(|| {
                e.downcast_ref::<WarehouseError>()
                    .and_then(|w| w.hint())
                    .map(String::from)
            })
    });
    if let Some(hint) = hint {
        eprintln!("{HINT}hint{HINT:#}: {}", redact(&hint));
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
/// An interrupted write found there is rolled back first.
pub fn project_root(global: &GlobalArgs) -> anyhow::Result<PathBuf> {
    let root = find_project_root(global)?;
    if let Some(recovered) = crate::edit::transaction::recover(&root)? {
        eprintln!(
            "{HINT}recovered{HINT:#}: an interrupted `sqb contract generate --write` was rolled back ({} restored, {} removed)",
            crate::report::count(recovered.restored, "file", "files"),
            crate::report::count(recovered.removed, "new file", "new files"),
        );
    }
    Ok(root)
}

fn find_project_root(global: &GlobalArgs) -> anyhow::Result<PathBuf> {
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

/// Starts the warehouse session before the project is loaded: it connects (DuckDB: opens the
/// file) and, when every resource is selected, already reads the relations named like the
/// models. `None` when the configuration cannot tell how to connect yet; loading the project
/// then reports why, in order.
pub fn start_session(
    root: &std::path::Path,
    from: &str,
    selection: &SelectArgs,
    connect: &ConnectArgs,
) -> Option<Session> {
    let config = project::Config::load_alone(root)?;
    let target = config.targets.get(from)?;
    let connect = Connect::new(&config, root, timeouts(connect)).ok()?;
    let everything = selection.select.is_empty()
        && selection.exclude.is_empty()
        && selection.select_file.is_none();
    let read_ahead = everything.then(|| {
        let root = root.to_path_buf();
        let names: crate::contract::inspect::Names = Box::new(move || project::model_stems(&root));
        let namespace = crate::warehouse::Namespace {
            database: target.database.as_ref().map(|d| d.value.clone()),
            schema: target
                .schema
                .as_ref()
                .map_or(String::new(), |s| s.value.clone()),
        };
        (namespace, names)
    });
    Some(Session::start(connect, read_ahead))
}

/// Compiles `project` on another thread while the warehouse session connects and reads, then
/// checks the verdict first: a project with errors fails the command even when the warehouse
/// is unreachable. `session` is the one [`start_session`] started, if any.
pub fn compile_and_inspect<'p>(
    global: &GlobalArgs,
    project: &'p Project,
    from: &str,
    selection: &SelectArgs,
    connect: &ConnectArgs,
    session: Option<Session>,
) -> anyhow::Result<(&'p Target, Inspection<'p>)> {
    let mut session = match session {
        Some(s) => Ok(s),
        None => Connect::new(&project.config, &project.root, timeouts(connect))
            .map(|c| Session::start(c, None)),
    };
    // Without graph operators the selection is known before compiling: the warehouse reads it
    // while the project compiles.
    let early = early_selection(project, from, selection);
    if let (Ok(session), Some((_, request))) = (session.as_mut(), &early) {
        session.send(request.clone());
    }
    let (diags, graph) = std::thread::scope(|scope| -> anyhow::Result<_> {
        // Analysing deeply nested SQL recurses: give this thread the main thread's stack.
        let compiling = std::thread::Builder::new()
            .stack_size(crate::parallel::STACK_BYTES)
            .spawn_scoped(scope, || {
                crate::logging::timed("project compiled", || {
                    crate::compile::compile_cached(project, Default::default(), !global.no_cache)
                })
            })
            .context("could not start the compile thread")?;
        Ok(compiling.join().expect("the compile thread panicked"))
    })?;
    ensure_compiles(project, &diags)?;
    let target = target(project, from)?;
    let (resources, answer) = match early {
        Some((resources, _)) => (
            resources,
            crate::logging::timed("warehouse read", || session?.answer())?,
        ),
        None => {
            let resources = resolve_selection(project, &graph, selection)?;
            let request = crate::contract::inspect::request(&resources, target);
            let answer = crate::logging::timed("warehouse read", || session?.read(request))?;
            (resources, answer)
        }
    };
    Ok((
        target,
        crate::contract::inspect::assemble(project.engine(), target, resources, answer),
    ))
}

/// The selected resources and their request, when they can be known before the project
/// compiles: the target exists, no selector uses a graph operator, and the selection resolves.
/// Otherwise `None`, and the selection is resolved (and its errors reported) after compiling.
fn early_selection<'p>(
    project: &'p Project,
    from: &str,
    args: &SelectArgs,
) -> Option<(Vec<Resource<'p>>, crate::contract::inspect::Request)> {
    let target = project.config.targets.get(from)?;
    let mut selection = Selection {
        select: args.select.clone(),
        exclude: args.exclude.clone(),
    };
    if let Some(file) = &args.select_file {
        selection.add_file_lines(&std::fs::read_to_string(file).ok()?);
    }
    if selection.needs_graph() {
        return None;
    }
    let resources = selection.resolve(project, &Graph::default()).ok()?;
    let request = crate::contract::inspect::request(&resources, target);
    Some((resources, request))
}

/// A project with errors is a failure of the command, with its diagnostics on stderr.
pub fn ensure_compiles(
    project: &Project,
    diags: &[crate::diagnostics::Diagnostic],
) -> anyhow::Result<()> {
    let errors = diags.iter().filter(|d| d.is_error()).count();
    if errors == 0 {
        return Ok(());
    }
    for d in diags.iter().filter(|d| d.is_error()) {
        eprintln!("{}\n", crate::diagnostics::render_text(d, &project.sources));
    }
    Err(UserError::new(format!(
        "the project does not compile ({})",
        crate::report::count(errors, "error", "errors")
    ))
    .with_hint("fix the errors above; `sqb compile` lists them")
    .into())
}

/// The target named by `--from`.
pub fn target<'p>(project: &'p Project, name: &str) -> anyhow::Result<&'p Target> {
    if let Some(target) = project.config.targets.get(name) {
        return Ok(target);
    }
    let names: Vec<&str> = project.config.targets.keys().map(String::as_str).collect();
    let error = UserError::new(format!("unknown target `{name}`"));
    Err(
        match crate::diagnostics::did_you_mean(name, names.iter().copied()) {
            Some(close) => error.with_hint(format!("did you mean `{close}`?")),
            None if names.is_empty() => {
                error.with_hint("define targets in sqb.toml as [targets.NAME] with a `schema`")
            }
            None => error.with_hint(format!("targets: {}", names.join(", "))),
        }
        .into(),
    )
}

/// The resources `--select`, `--exclude` and `--select-file` pick.
pub fn resolve_selection<'p>(
    project: &'p Project,
    graph: &Graph,
    args: &SelectArgs,
) -> anyhow::Result<Vec<Resource<'p>>> {
    let mut selection = Selection {
        select: args.select.clone(),
        exclude: args.exclude.clone(),
    };
    if let Some(file) = &args.select_file {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("could not read {}", file.display()))?;
        selection.add_file_lines(&text);
    }
    Ok(selection.resolve(project, graph)?)
}

pub fn timeouts(args: &ConnectArgs) -> Timeouts {
    Timeouts {
        connect: std::time::Duration::from_secs(args.connect_timeout.max(1)),
        statement: std::time::Duration::from_secs(args.statement_timeout.max(1)),
    }
}

/// A runtime for the warehouse calls; blocking DuckDB calls run on its blocking pool.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("could not start the async runtime")
}

/// Writes a report to `--output` atomically (without colour), or to stdout.
pub fn output_report(text: &str, output: Option<&std::path::Path>) -> anyhow::Result<()> {
    match output {
        Some(path) => {
            let plain = anstream::adapter::strip_str(text).to_string();
            crate::atomic::write_atomic(path, plain.as_bytes())?;
        }
        None => {
            use std::io::Write;
            // Written in one piece: through anstream, each styled line of a large report would
            // be a write call of its own.
            let colored =
                anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never;
            let text = match colored {
                true => std::borrow::Cow::Borrowed(text),
                false => std::borrow::Cow::Owned(anstream::adapter::strip_str(text).to_string()),
            };
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())
                .context("could not write to stdout")?;
            out.flush().context("could not write to stdout")?;
        }
    }
    Ok(())
}
