//! What `contract diff` and `contract generate` share: the warehouse session, started before the
//! project loads (it connects, and reads ahead when every resource is selected), the compile on
//! a thread of its own meanwhile, the selection, and the catalog read matched to it.
//!
//! A project with errors fails first, even when the warehouse is unreachable; `contract diff`
//! (`partial`) goes on with what loaded unless the errors are in the configuration.

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::catalog::{Answer, Namespace, Request};
use crate::compile::deps::Graph;
use crate::contract::matching::{self, Inspection};
use crate::diagnostics::did_you_mean;
use crate::error::UserError;
use crate::project::{self, Project, ProjectFile, Target};
use crate::select::{Selected, Selection};
use crate::warehouse::session::{Names, Session};
use crate::warehouse::{Timeouts, WarehouseError};

/// `--select`, `--exclude` and `--select-file`.
#[derive(Debug, Clone, Default)]
pub struct SelectOptions {
    pub select: Vec<String>,
    pub exclude: Vec<String>,
    /// Selectors, one per line.
    pub file: Option<PathBuf>,
}

impl SelectOptions {
    /// Every model and source: no selector at all.
    fn everything(&self) -> bool {
        self.select.is_empty() && self.exclude.is_empty() && self.file.is_none()
    }

    /// The selection, with the selector file's lines read.
    pub fn load(&self) -> anyhow::Result<Selection> {
        let mut selection = Selection {
            select: self.select.clone(),
            exclude: self.exclude.clone(),
        };
        if let Some(file) = &self.file {
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("could not read {}", file.display()))?;
            selection.add_file_lines(&text);
        }
        Ok(selection)
    }
}

/// How to read a target.
#[derive(Debug, Clone)]
pub struct InspectOptions {
    /// The target whose namespace is read.
    pub from: String,
    pub selection: SelectOptions,
    pub timeouts: Timeouts,
    /// Read and write the compile cache.
    pub use_cache: bool,
    /// Go on when the project has errors outside its configuration: compare what loaded, and
    /// hand the errors over ([`ReadTarget::errors`]). Otherwise any error fails first.
    pub partial: bool,
}

/// A compiled project's selected resources, matched to what the target holds.
pub struct ReadTarget<'p> {
    pub project: &'p Project,
    pub target: &'p Target,
    pub inspection: Inspection<'p>,
    /// With [`InspectOptions::partial`]: the project's errors (empty when it compiles).
    pub errors: Vec<crate::diagnostics::Diagnostic>,
}

/// What becomes of the files' texts once the project compiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Texts {
    /// Kept for the rest of the command.
    Keep,
    /// Let go of, to be read again on first use and checked against their digest, as a warm
    /// run's unchanged files are: on a cold run they would otherwise be held beside the
    /// warehouse's catalog. A command that edits a file edits it from
    /// [`crate::source::SourceFile::loaded_text`].
    Release,
}

/// Loads the project at `root`, compiles it while the warehouse is read, and hands the result to
/// `then`. The project comes back beside `then`'s result, for the caller to let go of as suits
/// it (see [`crate::memory`]).
pub fn inspect<T>(
    root: &Path,
    options: &InspectOptions,
    texts: Texts,
    then: impl FnOnce(ReadTarget<'_>) -> anyhow::Result<T>,
) -> anyhow::Result<(Project, T)> {
    let project_file = Project::begin(root, options.use_cache);
    let session = start_session(root, &project_file, options);
    let mut project = tracing::debug_span!("project loaded").in_scope(|| project_file.finish())?;
    let mut compiled = compile_while_reading(&project, options, session)?;
    if texts == Texts::Release {
        let released = project.sources.release_texts();
        tracing::debug!(files = released, "texts released");
    }
    let errors = std::mem::take(&mut compiled.errors);
    let (target, inspection) = match_answer(&project, options, compiled)?;
    let result = then(ReadTarget {
        project: &project,
        target,
        inspection,
        errors,
    })?;
    Ok((project, result))
}

/// Starts the session before the project is loaded. `None` when the configuration cannot tell
/// how to connect yet; loading the project then reports why, in order.
fn start_session(
    root: &Path,
    project_file: &ProjectFile,
    options: &InspectOptions,
) -> Option<Session> {
    let config = project_file.config()?;
    let target = config.targets.get(&options.from)?;
    let connect = super::connection(config, root, options.timeouts).ok()?;
    let read_ahead = options.selection.everything().then(|| {
        // Listed once: the load takes this listing (or lists for both, if it asks first).
        let files = project_file.model_files();
        let names: Names = Box::new(move || files.stems());
        (target_namespace(target), names)
    });
    Some(Session::start(connect, read_ahead).with_survey(surveys(config, options)))
}

/// The adopted schemas whose relations the read also lists: only when every resource is
/// selected (a selection says what to compare, and an undeclared relation is in none).
fn surveys(config: &project::Config, options: &InspectOptions) -> Vec<String> {
    match options.selection.everything() {
        true => config
            .settings
            .adopted_schemas
            .iter()
            .map(|s| s.value.clone())
            .collect(),
        false => Vec::new(),
    }
}

fn target_namespace(target: &Target) -> Namespace {
    Namespace {
        database: target.database.as_ref().map(|d| d.value.clone()),
        schema: target
            .schema
            .as_ref()
            .map_or(String::new(), |s| s.value.clone()),
    }
}

/// A compiled project, with the session reading meanwhile.
struct CompiledWhileReading {
    session: Result<Session, WarehouseError>,
    selection: anyhow::Result<Selection>,
    /// The selection, when it was known before compiling and its request sent then.
    early: Option<Selected>,
    graph: Graph,
    /// The project's errors, kept under [`InspectOptions::partial`].
    errors: Vec<crate::diagnostics::Diagnostic>,
}

/// Compiles `project` on another thread while the session connects and reads, and checks the
/// verdict.
fn compile_while_reading(
    project: &Project,
    options: &InspectOptions,
    session: Option<Session>,
) -> anyhow::Result<CompiledWhileReading> {
    let mut session = match session {
        Some(s) => Ok(s),
        None => super::connection(&project.config, &project.root, options.timeouts)
            .map(|c| Session::start(c, None).with_survey(surveys(&project.config, options))),
    };
    let selection = options.selection.load();
    // Without graph operators the selection is known before compiling: the warehouse reads it
    // while the project compiles.
    let early = early_selection(project, &options.from, selection.as_ref().ok());
    let sent = match (session.as_mut(), early) {
        (Ok(session), Some((selected, request))) => {
            session.send(request);
            Some(selected)
        }
        _ => None,
    };
    let (diags, graph) = compile(project, options.use_cache)?;
    let config_file = project.config.file;
    let config_broken = diags.iter().any(|d| {
        d.is_error()
            && d.primary
                .as_ref()
                .is_some_and(|l| l.loc.file == config_file)
    }) || project.config.unparsed;
    if !options.partial || config_broken {
        super::ensure_compiles(project, &diags)?;
    }
    Ok(CompiledWhileReading {
        session,
        selection,
        early: sent,
        graph,
        errors: diags.into_iter().filter(|d| d.is_error()).collect(),
    })
}

/// Matches the session's answer to the selection (resolved now unless it was sent early: then
/// kept as positions, since the project's texts may have been released in between).
fn match_answer<'p>(
    project: &'p Project,
    options: &InspectOptions,
    compiled: CompiledWhileReading,
) -> anyhow::Result<(&'p Target, Inspection<'p>)> {
    let CompiledWhileReading {
        session,
        selection,
        early,
        graph,
        errors: _,
    } = compiled;
    let target = target(project, &options.from)?;
    let (resources, answer) = match early {
        Some(selected) => (selected.resources(project), read(|| session?.answer())?),
        None => {
            let resources = selection?.resolve(project, &graph)?;
            let request = matching::request(&resources, target);
            (resources, read(|| session?.read(request))?)
        }
    };
    let inspection = tracing::debug_span!("answer matched")
        .in_scope(|| matching::assemble(project.engine(), target, resources, answer));
    Ok((target, inspection))
}

fn read(answer: impl FnOnce() -> Result<Answer, WarehouseError>) -> Result<Answer, WarehouseError> {
    tracing::debug_span!("warehouse read").in_scope(answer)
}

/// The compile, on a thread with the main thread's stack: analysing deeply nested SQL recurses.
fn compile(
    project: &Project,
    use_cache: bool,
) -> anyhow::Result<(Vec<crate::diagnostics::Diagnostic>, Graph)> {
    std::thread::scope(|scope| {
        let compiling = std::thread::Builder::new()
            .name("compile".into())
            .stack_size(crate::parallel::STACK_BYTES)
            .spawn_scoped(scope, || {
                tracing::debug_span!("project compiled").in_scope(|| {
                    crate::compile::compile_cached(project, Default::default(), use_cache)
                })
            })
            .context("could not start the compile thread")?;
        Ok(compiling.join().expect("the compile thread panicked"))
    })
}

/// The selected resources and their request, when they can be known before the project
/// compiles: the target exists, no selector uses a graph operator, and the selection resolves.
/// Otherwise `None`, and the selection is resolved (and its errors reported) after compiling.
fn early_selection(
    project: &Project,
    from: &str,
    selection: Option<&Selection>,
) -> Option<(Selected, Request)> {
    let target = project.config.targets.get(from)?;
    let selection = selection.filter(|s| !s.needs_graph())?;
    let selected = selection.resolve_indices(project, &Graph::default()).ok()?;
    let request = matching::request(&selected.resources(project), target);
    Some((selected, request))
}

/// The target `--from` names, else the project's `default_target`. When sqb.toml cannot be
/// read, the empty name: loading the project then reports why, before anything is compared.
pub fn target_name(root: &Path, from: Option<&str>) -> Result<String, UserError> {
    if let Some(from) = from {
        return Ok(from.to_string());
    }
    let file = Project::begin(root, false);
    let Some(config) = file.config() else {
        return Ok(String::new());
    };
    match &config.default_target {
        Some(name) => Ok(name.value.clone()),
        None => Err(
            UserError::new("no target to read: no --from, and no `default_target`")
                .with_hint("pass --from TARGET, or set `default_target = \"TARGET\"` in sqb.toml"),
        ),
    }
}

/// The target named by `--from`.
pub(super) fn target<'p>(project: &'p Project, name: &str) -> Result<&'p Target, UserError> {
    if let Some(target) = project.config.targets.get(name) {
        return Ok(target);
    }
    let names: Vec<&str> = project.config.targets.keys().map(String::as_str).collect();
    let error = UserError::new(format!("unknown target `{name}`"));
    Err(match did_you_mean(name, names.iter().copied()) {
        Some(close) => error.with_hint(format!("did you mean `{close}`?")),
        None if names.is_empty() => {
            error.with_hint("define targets in sqb.toml as [targets.NAME] with a `schema`")
        }
        None => error.with_hint(format!("targets: {}", names.join(", "))),
    })
}
