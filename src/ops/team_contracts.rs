//! `sqb imports update`: advances each import's baseline to its snapshot, listing every change
//! it accepts; `--check` says whether any baseline is behind (or a concrete pin stale) without
//! writing. It refuses while the compile reports an unwaived error about the import.
//! `sqb imports diff`: the whole baseline → snapshot changelog, each change marked with the
//! models it reaches; `sqb imports reads`: what the models read of each import, as a file the
//! producer vendors.

use std::path::Path;

use anyhow::Context as _;

use crate::compile::{analyze, Options};
use crate::diagnostics::{did_you_mean, render_errors, Code};
use crate::error::UserError;
use crate::project::{Import, Project};
use crate::team_contracts::impact::{self, ImportDiff, ImportState};
use crate::team_contracts::reads::{self, ReadsFile};

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

pub fn diff(root: &Path, names: &[String]) -> anyhow::Result<Vec<ImportDiff>> {
    let project = Project::load(root)?;
    let selected = select(&project, names)?;
    refuse_unusable(&project, false)?;
    let compiled = analyze(&project, Options::default());
    let today = crate::compile::today();
    let mut out = Vec::new();
    for import in selected {
        let (Some(snapshot), Some(baseline)) = (&import.snapshot, &import.baseline) else {
            continue;
        };
        let reads = compiled.import_reads.of_import(
            &import.decl.name,
            &snapshot.project,
            &snapshot.content_hash,
        );
        let waived = |code: Code, subject: &str| {
            import.decl.waivers.iter().any(|w| {
                w.code.value == code.as_str()
                    && w.column.value == subject
                    && w.expires.value >= today
            })
        };
        let entries = impact::changelog(baseline, snapshot, project.engine());
        out.push(ImportDiff {
            name: import.decl.name.clone(),
            producer: snapshot.project.clone(),
            baseline: baseline.content_hash.clone(),
            snapshot: snapshot.content_hash.clone(),
            changes: impact::assess(entries, &reads, &today, &waived),
            at: declared_at(&project, import),
        });
    }
    Ok(out)
}

/// What the project's models read of each of its imports.
pub fn reads(root: &Path) -> anyhow::Result<ReadsFile> {
    let project = Project::load(root)?;
    select(&project, &[])?;
    refuse_unusable(&project, false)?;
    let compiled = analyze(&project, Options::default());
    let imports = project
        .imports
        .iter()
        .filter_map(|i| {
            let snapshot = i.snapshot.as_ref()?;
            Some(compiled.import_reads.of_import(
                &i.decl.name,
                &snapshot.project,
                &snapshot.content_hash,
            ))
        })
        .collect();
    Ok(ReadsFile {
        format: reads::FORMAT.to_string(),
        format_version: reads::FORMAT_VERSION,
        consumer: project
            .config
            .name
            .as_ref()
            .map_or_else(String::new, |n| n.value.clone()),
        imports,
    })
}

fn declared_at(project: &Project, import: &Import) -> (String, usize, usize) {
    let file = project.sources.get(import.decl.loc.file);
    let (line, col) = file.line_col(import.decl.loc.span().start);
    (file.rel_path.clone(), line, col)
}

/// An import whose files cannot be read stops every imports command (exit 2), except a
/// baseline that does not exist yet where `first_baseline` allows it (`imports update` writes
/// it).
pub(super) fn refuse_unusable(project: &Project, first_baseline: bool) -> Result<(), UserError> {
    let awaited: Vec<&crate::source::Loc> = project
        .imports
        .iter()
        .filter(|i| first_baseline && i.baseline_missing && i.snapshot.is_some())
        .map(|i| &i.decl.baseline.loc)
        .collect();
    let unusable: Vec<_> = project
        .diagnostics
        .iter()
        .filter(|d| matches!(d.code, Code::ImportUnreadable | Code::ImportTooNew))
        .filter(|d| {
            !d.primary
                .as_ref()
                .is_some_and(|l| awaited.contains(&&l.loc))
        })
        .cloned()
        .collect();
    if unusable.is_empty() {
        return Ok(());
    }
    Err(UserError::new("an import's files cannot be read")
        .with_hint("vendor the producer's `sqb publish` output again")
        .with_diagnostics(render_errors(&unusable, &project.sources).join("\n\n")))
}

pub fn update(root: &Path, options: &UpdateOptions) -> anyhow::Result<Vec<ImportState>> {
    let project = Project::load(root)?;
    let selected = select(&project, &options.names)?;
    refuse_unusable(&project, true)?;
    let writing = !options.check && !options.dry_run;
    let compiled = (writing && !options.force).then(|| analyze(&project, Options::default()));
    let mut out = Vec::new();
    for import in selected {
        let Some(snapshot) = &import.snapshot else {
            continue;
        };
        let first = import.baseline.is_none() && import.baseline_missing;
        let baseline = match (&import.baseline, first) {
            (Some(baseline), _) => baseline,
            // The first baseline is the snapshot itself: no change is accepted with it.
            (None, true) => snapshot,
            (None, false) => continue,
        };
        let behind = first || snapshot.content_hash != baseline.content_hash;
        let stale_pin = import
            .decl
            .pin
            .as_ref()
            .filter(|p| p.value != "*" && p.value != snapshot.content_hash)
            .map(|p| p.value.clone());
        let mut state = ImportState {
            name: import.decl.name.clone(),
            producer: snapshot.project.clone(),
            baseline: match first {
                true => String::new(),
                false => baseline.content_hash.clone(),
            },
            snapshot: snapshot.content_hash.clone(),
            changes: impact::changelog(baseline, snapshot, project.engine()),
            behind,
            stale_pin,
            written: false,
            first,
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

pub(super) fn select<'p>(
    project: &'p Project,
    names: &[String],
) -> Result<Vec<&'p Import>, UserError> {
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
