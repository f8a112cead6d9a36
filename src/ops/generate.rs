//! `sqb contract generate`: plan declaration changes from the warehouse and compute each file's
//! new content; with `--write`, put them on disk in one transaction that recompiles the project
//! or restores every file.

use std::path::Path;

use super::inspect::{inspect, InspectOptions, Texts};
use crate::compile::analyze;
use crate::compile::compile_cached;
use crate::contract::adoption;
use crate::contract::cascade::downstream_retypes;
use crate::contract::plan::{plan as plan_changes, plan_new_sources, Action, Plan};
use crate::contract::renames::hold_breaking_renames;
use crate::diagnostics::render_errors;
use crate::edit::apply::file_changes;
use crate::edit::transaction::{self, FileChange, TxError};
use crate::error::UserError;
use crate::project::Project;

pub struct GenerateOptions {
    pub inspect: InspectOptions,
    /// Also replace conflicting types, rename and remove declarations.
    pub overwrite: bool,
    /// A [`write`] follows the plan.
    pub write: bool,
}

/// The plan, and every changed file's new content.
pub struct Generated {
    pub plan: Plan,
    pub changes: Vec<FileChange>,
    /// The project's errors before the write (it was planned from what loaded): the write may
    /// fix some and must add none.
    pub errors_before: Vec<ErrorKey>,
}

/// What tells one error from another across a write: its code, message and file (its line may
/// move with the edit).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ErrorKey {
    pub code: &'static str,
    pub message: String,
    pub file: Option<String>,
}

impl ErrorKey {
    fn of(d: &crate::diagnostics::Diagnostic, project: &Project) -> Self {
        Self {
            code: d.code.as_str(),
            message: d.message.clone(),
            file: d
                .primary
                .as_ref()
                .map(|l| project.sources.get(l.loc.file).rel_path.clone()),
        }
    }
}

/// How a write ended without an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Written {
    /// Every file was written; the project has no error it did not have before. `fixed`
    /// errors it had are gone, `left` remain. `files` were written, the cascade's among them.
    Done {
        fixed: usize,
        left: usize,
        files: usize,
        cascaded: Vec<Cascaded>,
    },
    /// Ctrl-C or SIGTERM (the signal's number) arrived; every file was restored.
    Interrupted(i32),
}

/// A downstream model column that `--cascade` retyped in the same write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cascaded {
    pub file: String,
    pub model: String,
    pub column: String,
    pub old: String,
    pub new: String,
}

impl std::fmt::Display for Cascaded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: `{}` of model `{}` {} → {}",
            self.file, self.column, self.model, self.old, self.new
        )
    }
}

/// Why a written project was refused: its new errors, rendered, and the downstream retypes
/// that would clear the E052s among them.
struct Broken {
    rendered: String,
    retypes: Vec<FileChange>,
    cascaded: Vec<Cascaded>,
    /// Every new error is an E052 that a retype clears.
    all_cascadable: bool,
}

/// A cascade stops after this many rounds (each retypes one more level of the DAG).
const MAX_CASCADE_ROUNDS: usize = 64;

/// Reads the target and plans the changes. Nothing is written.
pub fn plan(root: &Path, options: &GenerateOptions) -> anyhow::Result<Generated> {
    // The write recompiles the project: each model whose SQL and upstream answers the write
    // leaves as they are is not analysed twice. With the cache, the recompile reads those
    // analyses back from it; without, they are kept in memory meanwhile.
    if options.write && !options.inspect.use_cache {
        crate::compile::memo::enable();
    }
    let (project, generated) = inspect(root, &options.inspect, Texts::Release, |read| {
        let mut plan = tracing::debug_span!("changes planned")
            .in_scope(|| plan_changes(read.project, &read.inspection.items, options.overwrite));
        if plan
            .proposals
            .iter()
            .any(|p| p.action == Action::RenameColumn)
        {
            let analysis = tracing::debug_span!("readers of renamed columns found")
                .in_scope(|| analyze(read.project, Default::default()));
            hold_breaking_renames(read.project, &analysis, &mut plan);
        }
        let inspection = &read.inspection;
        let undeclared = adoption::undeclared(
            read.project,
            read.target,
            &inspection.schemas,
            &inspection.database,
        )
        .map_err(|e| {
            UserError::new(e.to_string()).with_hint(
                "fix `adopted_schemas` under [settings] in sqb.toml: an adopted schema must exist",
            )
        })?;
        plan_new_sources(
            read.project,
            &undeclared,
            &inspection.unrequested,
            &mut plan,
        );
        let changes = tracing::debug_span!("files edited in memory")
            .in_scope(|| file_changes(&read.project.sources, &plan))?;
        let errors_before = read
            .errors
            .iter()
            .map(|d| ErrorKey::of(d, read.project))
            .collect();
        Ok(Generated {
            plan,
            changes,
            errors_before,
        })
    })?;
    // A write reloads the project from disk and recompiles it: this copy, and a DuckDB
    // database the read left open, are freed meanwhile, so that they are not held beside the
    // reloaded project. A preview ends the command.
    match options.write && !generated.changes.is_empty() {
        true => {
            crate::memory::free_in_background(project);
            crate::warehouse::session::free_parked();
        }
        false => crate::memory::leave_to_exit(project),
    }
    Ok(generated)
}

/// The write transaction: write every file, recompile from disk, restore on failure: when
/// the project has an error it did not have before (`before`). With `cascade`, new E052s of
/// downstream models are cleared by retyping their declarations, and the transaction runs
/// again with those edits, until it passes or something else is wrong.
pub fn write(
    root: &Path,
    changes: &[FileChange],
    use_cache: bool,
    before: &[ErrorKey],
    cascade: bool,
) -> anyhow::Result<Written> {
    let mut changes = changes.to_vec();
    let mut cascaded = Vec::new();
    for _ in 0..MAX_CASCADE_ROUNDS {
        let mut counts = (0, 0);
        let check = || {
            // The planned project is freed on its own thread meanwhile; it is gone before the
            // reload, so that two are never held at once.
            tracing::debug_span!("planned project freed").in_scope(crate::memory::wait_for_frees);
            let left = tracing::debug_span!("project reloaded and recompiled")
                .in_scope(|| recompile(root, use_cache, before))?;
            counts = (before.len().saturating_sub(left), left);
            Ok::<(), Broken>(())
        };
        let result = tracing::debug_span!("files written and checked")
            .in_scope(|| transaction::apply(root, &changes, check));
        match result {
            Ok(Ok(())) => {
                return Ok(Written::Done {
                    fixed: counts.0,
                    left: counts.1,
                    files: changes.len(),
                    cascaded,
                })
            }
            Ok(Err(broken)) if cascade && broken.all_cascadable => {
                merge(&mut changes, broken.retypes);
                cascaded.extend(broken.cascaded);
            }
            Ok(Err(broken)) => return Err(refused(broken, before.is_empty(), cascade).into()),
            Err(e) => return tx_error(e),
        }
    }
    Err(UserError::new(format!(
        "the cascade did not settle after {MAX_CASCADE_ROUNDS} rounds; every file was restored to its prior content"
    ))
    .into())
}

fn tx_error(e: TxError) -> anyhow::Result<Written> {
    match e {
        TxError::Interrupted(signal) => Ok(Written::Interrupted(signal)),
        TxError::Locked => Err(
            UserError::new("another sqb command is writing to this project")
                .with_hint("wait for it to finish; the lock is released when its process exits")
                .into(),
        ),
        e => Err(e.into()),
    }
}

/// The refusal of a write whose project has new errors, naming the downstream declarations
/// `--cascade` would retype.
fn refused(broken: Broken, compiled_before: bool, cascade: bool) -> UserError {
    let error = UserError::new(match compiled_before {
        true => "the generated declarations do not compile; every file was restored to its prior content",
        false => "the generated declarations add errors to a project that did not compile; every file was restored to its prior content",
    })
    .with_diagnostics(broken.rendered);
    if broken.cascaded.is_empty() || cascade {
        return error.with_hint(
            "fix the declarations or the warehouse as the diagnostics say, then run again",
        );
    }
    let named: Vec<String> = broken.cascaded.iter().map(|c| c.to_string()).collect();
    error.with_hint(format!(
        "the write changes what downstream models read; `--cascade` retypes their declarations in the same write ({}){}",
        named.join("; "),
        match broken.all_cascadable {
            true => "",
            false => ", but the other errors above would remain",
        }
    ))
}

/// Adds `more` to `changes`: a file both change ends with `more`'s content (planned from the
/// written one), and is still checked against its content before the first write.
fn merge(changes: &mut Vec<FileChange>, more: Vec<FileChange>) {
    for m in more {
        match changes.iter_mut().find(|c| c.rel_path == m.rel_path) {
            Some(c) => c.content = m.content,
            None => changes.push(m),
        }
    }
}

/// The check: the project as written has no error that was not in `before`; the number of
/// errors left. The new errors are rendered, and their downstream retypes planned, while the
/// reloaded sources are at hand.
fn recompile(root: &Path, use_cache: bool, before: &[ErrorKey]) -> Result<usize, Broken> {
    let reloaded = Project::load_cached(root, use_cache).map_err(|e| Broken {
        rendered: format!("error: {e}"),
        retypes: Vec::new(),
        cascaded: Vec::new(),
        all_cascadable: false,
    })?;
    let (diags, _) = compile_cached(&reloaded, Default::default(), use_cache);
    let errors: Vec<_> = diags.into_iter().filter(|d| d.is_error()).collect();
    let known: std::collections::HashSet<&ErrorKey> = before.iter().collect();
    let new: Vec<_> = errors
        .iter()
        .filter(|d| !known.contains(&ErrorKey::of(d, &reloaded)))
        .cloned()
        .collect();
    if new.is_empty() {
        return Ok(errors.len());
    }
    let (retypes, stuck) = downstream_retypes(&reloaded, &new);
    let cascaded = retypes
        .iter()
        .map(|p| Cascaded {
            file: p.file.clone(),
            model: p.resource.clone(),
            column: p.column.clone(),
            old: p.old.clone().unwrap_or_default(),
            new: p.new.clone().unwrap_or_default(),
        })
        .collect();
    let all_cascadable = stuck.is_empty();
    let plan = Plan {
        proposals: retypes,
        skipped: Vec::new(),
    };
    let retypes = file_changes(&reloaded.sources, &plan).unwrap_or_default();
    Err(Broken {
        rendered: render_errors(&new, &reloaded.sources).join("\n\n"),
        all_cascadable: all_cascadable && !retypes.is_empty(),
        retypes,
        cascaded,
    })
}
