//! `sqb imports update`: advances each import's baseline to its snapshot, listing every change
//! it accepts; `--check` says whether any baseline is behind (or a concrete pin stale) without
//! writing. It refuses while the compile reports an unwaived error about the import.

use std::path::Path;

use anyhow::Context as _;

use crate::compile::{analyze, Options};
use crate::diagnostics::{did_you_mean, render_errors, Code};
use crate::error::UserError;
use crate::imports::changes::{self, Change};
use crate::imports::snapshot::Snapshot;
use crate::project::{Import, Project};

pub struct UpdateOptions {
    /// The imports to update; empty: every one.
    pub names: Vec<String>,
    /// Write nothing: say whether each baseline is behind.
    pub check: bool,
    /// Write nothing: say what would be accepted.
    pub dry_run: bool,
    /// Accept the changes even while the compile reports errors about them.
    pub force: bool,
}

/// One import's state, and what updating it accepts.
pub struct ImportState {
    pub name: String,
    /// Each accepted change, such as `fct_orders.amount: dropped`.
    pub changes: Vec<String>,
    /// The baseline differs from the snapshot.
    pub behind: bool,
    /// A concrete pin that is not the snapshot's hash.
    pub stale_pin: Option<String>,
    /// The baseline was rewritten.
    pub written: bool,
}

pub fn update(root: &Path, options: &UpdateOptions) -> anyhow::Result<Vec<ImportState>> {
    let project = Project::load(root)?;
    let selected = select(&project, &options.names)?;
    let unusable: Vec<_> = project
        .diagnostics
        .iter()
        .filter(|d| matches!(d.code, Code::ImportUnreadable | Code::ImportTooNew))
        .cloned()
        .collect();
    if !unusable.is_empty() {
        return Err(UserError::new("an import's files cannot be read")
            .with_hint("vendor the producer's `sqb publish` output again")
            .with_diagnostics(render_errors(&unusable, &project.sources).join("\n\n"))
            .into());
    }
    let writing = !options.check && !options.dry_run;
    let compiled = (writing && !options.force).then(|| analyze(&project, Options::default()));
    let mut out = Vec::new();
    for import in selected {
        let (Some(snapshot), Some(baseline)) = (&import.snapshot, &import.baseline) else {
            continue;
        };
        let behind = snapshot.content_hash != baseline.content_hash;
        let stale_pin = import
            .decl
            .pin
            .as_ref()
            .filter(|p| p.value != "*" && p.value != snapshot.content_hash)
            .map(|p| p.value.clone());
        let mut state = ImportState {
            name: import.decl.name.clone(),
            changes: describe(baseline, snapshot, &project),
            behind,
            stale_pin,
            written: false,
        };
        if writing && behind {
            // Every import is checked before any baseline is written.
            if let Some(compiled) = &compiled {
                refuse_if_broken(&project, import, &compiled.diagnostics)?;
            }
            state.written = true;
        }
        out.push((import, state));
    }
    for (import, state) in &out {
        if state.written {
            write_baseline(&project, import)?;
        }
    }
    Ok(out.into_iter().map(|(_, state)| state).collect())
}

fn select<'p>(project: &'p Project, names: &[String]) -> Result<Vec<&'p Import>, UserError> {
    if project.imports.is_empty() {
        return Err(UserError::new("the project has no imports")
            .with_hint("declare one in sqb.toml as [imports.NAME] with a `path`"));
    }
    let mut out = Vec::new();
    for name in names {
        match project.imports.iter().find(|i| &i.decl.name == name) {
            Some(import) => out.push(import),
            None => {
                let error = UserError::new(format!("no import named `{name}`"));
                let known = project.imports.iter().map(|i| i.decl.name.as_str());
                return Err(match did_you_mean(name, known) {
                    Some(close) => error.with_hint(format!("did you mean `{close}`?")),
                    None => error.with_hint("imports are the [imports.NAME] tables of sqb.toml"),
                });
            }
        }
    }
    if names.is_empty() {
        out = project.imports.iter().collect();
    }
    Ok(out)
}

/// Every change from `baseline` to `snapshot`, read or not.
fn describe(baseline: &Snapshot, snapshot: &Snapshot, project: &Project) -> Vec<String> {
    let mut out = Vec::new();
    for before in &baseline.models {
        let Some(now) = snapshot.model(&before.name) else {
            out.push(format!("{}: no longer published", before.name));
            continue;
        };
        for column in &before.columns {
            let current = now.columns.iter().find(|c| c.name == column.name);
            for change in changes::column(column, current, project.engine()) {
                let what = match change {
                    Change::Dropped => "dropped".to_string(),
                    Change::Narrowed { from, to } => format!("narrowed from {from} to {to}"),
                    Change::Widened { from, to } => format!("widened from {from} to {to}"),
                    Change::BecameNotNull => "now NOT NULL".to_string(),
                    Change::BecameNullable => "now nullable".to_string(),
                };
                out.push(format!("{}.{}: {what}", before.name, column.name));
            }
        }
        for column in &now.columns {
            if !before.columns.iter().any(|c| c.name == column.name) {
                out.push(format!("{}.{}: added", now.name, column.name));
            }
        }
    }
    for now in &snapshot.models {
        if baseline.model(&now.name).is_none() {
            out.push(format!("{}: newly published", now.name));
        }
    }
    out
}

/// The compile's errors about `import` (those with a label at its declaration) stop the update.
fn refuse_if_broken(
    project: &Project,
    import: &Import,
    diags: &[crate::diagnostics::Diagnostic],
) -> Result<(), UserError> {
    let broken: Vec<_> = diags
        .iter()
        .filter(|d| d.is_error() && d.related.iter().any(|l| l.loc == import.decl.loc))
        .cloned()
        .collect();
    if broken.is_empty() {
        return Ok(());
    }
    Err(UserError::new(format!(
        "import `{}` is not updated: the project's models break on its changes ({})",
        import.decl.name,
        crate::report::count(broken.len(), "error", "errors")
    ))
    .with_hint("fix the models first, or accept the changes anyway with --force")
    .with_diagnostics(render_errors(&broken, &project.sources).join("\n\n")))
}

fn write_baseline(project: &Project, import: &Import) -> anyhow::Result<()> {
    let dir = project.root.join(&import.decl.path.value);
    let snapshot = dir.join(&import.decl.snapshot.value);
    let baseline = dir.join(&import.decl.baseline.value);
    let bytes = std::fs::read(&snapshot)
        .with_context(|| format!("could not read {}", snapshot.display()))?;
    crate::atomic::write_atomic(&baseline, &bytes)
        .with_context(|| format!("could not write {}", baseline.display()))?;
    Ok(())
}
