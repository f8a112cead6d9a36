//! `sqb import dbt`: read a dbt project's manifest and `dbt_project.yml`, convert them
//! ([`crate::adopt::dbt`]), write the new project into an empty directory all at once, and
//! compile it.
//!
//! The tree is written into a hidden staging directory beside `--out` and renamed into place
//! only when every file is written, so a failure (or Ctrl-C) leaves `--out` as it was. With
//! `force`, an existing directory is moved aside first and removed once the new one is in place.

use std::path::{Path, PathBuf};

use crate::adopt::dbt;
use crate::engine::Engine;
use crate::error::UserError;
use crate::ops::compile::{compile, CompileOptions, CompiledProject};
use crate::report::adopt::ImportOutcome;

pub struct ImportDbtOptions {
    /// The dbt project (the directory holding dbt_project.yml).
    pub dbt_dir: PathBuf,
    pub out: PathBuf,
    /// Default: `<dbt_dir>/target/manifest.json`.
    pub manifest: Option<PathBuf>,
    pub engine: Option<Engine>,
    /// Replace a non-empty `out`.
    pub force: bool,
}

pub fn import_dbt(options: &ImportDbtOptions) -> anyhow::Result<ImportOutcome> {
    let project_yml = options.dbt_dir.join("dbt_project.yml");
    if !project_yml.is_file() {
        return Err(UserError::new(format!(
            "{} is not a dbt project: it has no dbt_project.yml",
            options.dbt_dir.display()
        ))
        .with_hint("pass the directory that holds dbt_project.yml")
        .into());
    }
    let manifest_path = options
        .manifest
        .clone()
        .unwrap_or_else(|| options.dbt_dir.join("target").join("manifest.json"));
    check_out(options)?;
    let manifest = read(&manifest_path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => anyhow::Error::new(
            UserError::new(format!("{} does not exist", manifest_path.display()))
                .with_hint("run `dbt compile` in the dbt project first, or pass --manifest FILE"),
        ),
        _ => anyhow::anyhow!("could not read {}: {e}", manifest_path.display()),
    })?;
    let yml = read(&project_yml)
        .map_err(|e| anyhow::anyhow!("could not read {}: {e}", project_yml.display()))?;
    let parent = parent_of(&options.out);
    let mut excluded = Vec::new();
    let mut tries = 0;
    let (imported, staged, compiled) = loop {
        let imported = dbt::import(&dbt::Input {
            manifest: &manifest,
            dbt_project_yml: &yml,
            engine: options.engine,
            excluded: &excluded,
        })
        .map_err(|e| refusal(e, &manifest_path, &project_yml))?;
        let mut imported = imported;
        imported
            .files
            .push((RECORD.to_string(), record(&imported.report)?));
        let staged = stage(&parent, &imported.files)?;
        let compiled = compile(
            &staged.dir,
            &CompileOptions {
                sql_analysis: true,
                use_cache: false,
            },
        )?;
        tries += 1;
        let more = rejected_items(&compiled, &imported.files);
        if more.is_empty() || tries == MAX_TRIES {
            break (imported, staged, compiled);
        }
        excluded.extend(more);
    };
    place(staged, &options.out, &parent)?;
    let counts = crate::diagnostics::count(&compiled.diagnostics);
    Ok(ImportOutcome {
        report: imported.report,
        out: options.out.clone(),
        files: imported.files.into_iter().map(|(path, _)| path).collect(),
        errors: counts.errors,
        warnings: counts.warnings,
    })
}

/// The import's record in the project it writes: its report, so that `sqb query` can say why
/// a metric of the dbt project is not there.
pub const RECORD: &str = "dbt-import.json";

fn record(report: &dbt::Report) -> anyhow::Result<String> {
    let mut text = serde_json::to_string_pretty(report)?;
    text.push('\n');
    Ok(text)
}

/// Why `sqb import dbt` did not carry the metric `name`, from the record it left in the
/// project at `root`; `None` when there is no record or it does not name the metric.
pub fn not_carried_metric(root: &Path, name: &str) -> Option<String> {
    let path = root.join(RECORD);
    // Only a regular file is read: a FIFO or a device there must not hang a query's refusal.
    if !std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
        return None;
    }
    let text = std::fs::read_to_string(&path).ok()?;
    let record: serde_json::Value = serde_json::from_str(&text).ok()?;
    record["not_carried_over"]
        .as_array()?
        .iter()
        .filter(|e| e["kind"] == "metric")
        .find(|e| {
            e["node"]
                .as_str()
                .and_then(|n| n.rsplit('.').next())
                .is_some_and(|n| n.eq_ignore_ascii_case(name))
        })
        .and_then(|e| e["what"].as_str().map(str::to_string))
}

/// How many times the import is redone, each time without what the compile rejected.
const MAX_TRIES: usize = 8;

fn refusal(e: dbt::DbtError, manifest: &Path, project_yml: &Path) -> anyhow::Error {
    let path = match e {
        dbt::DbtError::ProjectYml { .. } => project_yml,
        _ => manifest,
    };
    let mut user = UserError::new(format!("{}: {e}", path.display()));
    if let Some(hint) = e.hint() {
        user = user.with_hint(hint);
    }
    anyhow::Error::new(user)
}

/// The semantic items the compile of the staged project rejects: the import is redone
/// without them, and reports them with what the compile said.
fn rejected_items(compiled: &CompiledProject, files: &[(String, String)]) -> Vec<dbt::Excluded> {
    let rejections: Vec<dbt::Rejection<'_>> = compiled
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .filter_map(|d| {
            let loc = &d.primary.as_ref()?.loc;
            Some(dbt::Rejection {
                file: &compiled.project.sources.get(loc.file).rel_path,
                offset: loc.span().start,
                said: format!("{} {}", d.code.as_str(), d.message),
            })
        })
        .collect();
    dbt::exclusions(files, &rejections)
}

fn read(path: &Path) -> std::io::Result<String> {
    std::fs::read_to_string(path)
}

/// `out` must be empty or absent (or `force`), and must not hold the dbt project.
fn check_out(options: &ImportDbtOptions) -> anyhow::Result<()> {
    let out = &options.out;
    let dbt = options
        .dbt_dir
        .canonicalize()
        .unwrap_or_else(|_| options.dbt_dir.clone());
    if let Ok(canonical) = out.canonicalize() {
        if dbt.starts_with(&canonical) {
            return Err(UserError::new(format!(
                "--output {} holds the dbt project itself",
                out.display()
            ))
            .with_hint("write the sqb project into a directory of its own")
            .into());
        }
    }
    match std::fs::read_dir(out) {
        Ok(mut entries) => {
            if entries.next().is_some() && !options.force {
                return Err(UserError::new(format!("{} is not empty", out.display()))
                    .with_hint("choose an empty directory, or pass --force to replace it")
                    .into());
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
            Err(UserError::new(format!("{} is a file, not a directory", out.display())).into())
        }
        Err(e) => Err(anyhow::anyhow!("could not read {}: {e}", out.display())),
    }
}

/// The directory `out` is created in.
fn parent_of(out: &Path) -> PathBuf {
    match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A staged tree: removed when dropped (or on Ctrl-C) unless [`place`]d.
struct Staged {
    dir: PathBuf,
    temp: Option<tempfile::TempDir>,
    _guard: crate::interrupt::TempGuard,
}

/// Writes every file under a new staging directory in `parent`.
fn stage(parent: &Path, files: &[(String, String)]) -> anyhow::Result<Staged> {
    std::fs::create_dir_all(parent)
        .map_err(|e| anyhow::anyhow!("could not create {}: {e}", parent.display()))?;
    let (staging, guard) = crate::interrupt::create_tracked(
        || {
            tempfile::Builder::new()
                .prefix(".sqb-import-")
                .tempdir_in(parent)
        },
        |dir| dir.path(),
    )
    .map_err(|e| anyhow::anyhow!("could not create a directory in {}: {e}", parent.display()))?;
    for (rel, text) in files {
        let path = staging.path().join(rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| anyhow::anyhow!("could not create {}: {e}", dir.display()))?;
        }
        std::fs::write(&path, text)
            .map_err(|e| anyhow::anyhow!("could not write {}: {e}", path.display()))?;
    }
    Ok(Staged {
        dir: staging.path().to_path_buf(),
        temp: Some(staging),
        _guard: guard,
    })
}

/// Puts the staged tree in `out`'s place.
fn place(mut staged: Staged, out: &Path, parent: &Path) -> anyhow::Result<()> {
    crate::interrupt::fault("import-written");
    let aside = match out.exists() {
        true => Some(move_aside(out, parent)?),
        false => None,
    };
    let staged_dir = match staged.temp.take() {
        Some(temp) => temp.keep(),
        None => staged.dir.clone(),
    };
    if let Err(e) = std::fs::rename(&staged_dir, out) {
        if let Some(aside) = &aside {
            let _ = std::fs::rename(aside, out);
        }
        let _ = std::fs::remove_dir_all(&staged_dir);
        return Err(anyhow::anyhow!(
            "could not move the new project to {}: {e}",
            out.display()
        ));
    }
    if let Some(aside) = aside {
        std::fs::remove_dir_all(&aside)
            .map_err(|e| anyhow::anyhow!("could not remove {}: {e}", aside.display()))?;
    }
    crate::atomic::sync_dir(parent);
    Ok(())
}

/// An existing `out` (empty, or replaced with `force`: [`check_out`] decided), renamed aside.
fn move_aside(out: &Path, parent: &Path) -> anyhow::Result<PathBuf> {
    let aside = tempfile::Builder::new()
        .prefix(".sqb-import-old-")
        .tempdir_in(parent)
        .map_err(|e| anyhow::anyhow!("could not create a directory in {}: {e}", parent.display()))?
        .keep();
    std::fs::remove_dir(&aside).ok();
    std::fs::rename(out, &aside)
        .map_err(|e| anyhow::anyhow!("could not move {} aside: {e}", out.display()))?;
    Ok(aside)
}
