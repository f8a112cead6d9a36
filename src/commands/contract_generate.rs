//! `sqb contract generate`: propose declaration changes from the warehouse; with `--write`,
//! make them in one transaction that recompiles the project or restores every file.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use anstyle::{AnsiColor, Style};
use serde::Serialize;

use crate::cli::{GenerateArgs, GenerateFormat, GlobalArgs};
use crate::commands::{
    compile_and_inspect, data, note, output_report, project_root, start_session,
};
use crate::compile::compile_cached;
use crate::contract::plan::{plan, Action, Home, Plan, Proposal, Skipped};
use crate::diagnostics;
use crate::edit::toml::{self as toml_edit, Editor};
use crate::edit::transaction::{self, FileChange, TxError};
use crate::error::UserError;
use crate::exit::ExitStatus;
use crate::project::Project;
use crate::report::count;

/// The first lines of a sidecar that sqb creates. Not `# @generated`: people edit it after.
const NEW_SIDECAR_HEADER: &str =
    "# Declared from the warehouse by `sqb contract generate`; edit freely.\n";

#[derive(Serialize)]
struct JsonOutput<'a> {
    schema_version: u32,
    target: &'a str,
    write: bool,
    overwrite: bool,
    summary: JsonSummary,
    proposals: &'a [Proposal],
    skipped: &'a [Skipped],
}

#[derive(Serialize)]
struct JsonSummary {
    proposals: usize,
    files_changed: usize,
    files_created: usize,
    skipped: usize,
    by_action: BTreeMap<&'static str, usize>,
}

pub fn run(global: &GlobalArgs, args: &GenerateArgs) -> anyhow::Result<ExitStatus> {
    let root = project_root(global)?;
    let session = start_session(&root, &args.from, &args.selection, &args.connect);
    let project = crate::logging::timed("project loaded", || Project::load(&root))?;
    let (_, inspection) = compile_and_inspect(
        global,
        &project,
        &args.from,
        &args.selection,
        &args.connect,
        session,
    )?;
    let plan = crate::logging::timed("changes planned", || {
        plan(&project, &inspection.items, args.overwrite)
    });
    let changes =
        crate::logging::timed("files edited in memory", || file_changes(&project, &plan))?;
    crate::logging::timed("changes shown", || match args.format {
        GenerateFormat::Json => data(&json(args, &plan, &changes)),
        GenerateFormat::Text => print_preview(global, &changes, &plan, args.write),
    });
    if !args.write || changes.is_empty() {
        return Ok(ExitStatus::Success);
    }
    // The write recompiles the project from disk: free this copy first (on another thread,
    // while the files are written), so that two projects are not held at once.
    drop((plan, inspection));
    let _ = std::thread::Builder::new()
        .name("free".into())
        .spawn(move || drop(project));
    write(global, &root, &changes)
}

/// Every file's new content, computed in memory, in path order.
fn file_changes(project: &Project, plan: &Plan) -> anyhow::Result<Vec<FileChange>> {
    let mut by_file: BTreeMap<&str, Vec<&Proposal>> = BTreeMap::new();
    for p in &plan.proposals {
        by_file.entry(p.file.as_str()).or_default().push(p);
    }
    let texts: HashMap<&str, &str> = project
        .sources
        .files()
        .map(|(_, f)| (f.rel_path.as_str(), f.text.as_str()))
        .collect();
    let mut changes = Vec::new();
    for (file, proposals) in by_file {
        let prior = if proposals[0].creates_file {
            None
        } else {
            texts.get(file).map(|t| t.to_string())
        };
        let content = edit_file(prior.as_deref(), &proposals)
            .map_err(|e| UserError::new(format!("could not edit {file}: {e}")))?;
        if prior.as_deref() != Some(content.as_str()) {
            changes.push(FileChange {
                rel_path: file.to_string(),
                expected_prior: prior,
                content,
            });
        }
    }
    Ok(changes)
}

/// Applies one file's proposals: renames, then types, then removals, then additions in
/// physical order.
fn edit_file(prior: Option<&str>, proposals: &[&Proposal]) -> Result<String, toml_edit::EditError> {
    let mut editor = match prior {
        Some(text) => Editor::parse(text)?,
        None => Editor::new_file(NEW_SIDECAR_HEADER),
    };
    let order = [
        Action::RenameColumn,
        Action::SetType,
        Action::ReplaceType,
        Action::RemoveColumn,
        Action::AddColumn,
    ];
    for action in order {
        for p in proposals.iter().filter(|p| p.action == action) {
            let home = match &p.home {
                Home::Root => toml_edit::Home::Root,
                Home::Source(name) => toml_edit::Home::Source(name),
            };
            let new = p.new.as_deref().unwrap_or_default();
            match action {
                Action::RenameColumn => editor.rename_column(home, &p.column, new)?,
                Action::SetType | Action::ReplaceType => editor.set_type(home, &p.column, new)?,
                Action::RemoveColumn => editor.remove_column(home, &p.column)?,
                Action::AddColumn => editor.add_column(home, &p.column, new, p.not_null)?,
            }
        }
    }
    Ok(editor.render())
}

fn json(args: &GenerateArgs, plan: &Plan, changes: &[FileChange]) -> String {
    let mut by_action = BTreeMap::new();
    for p in &plan.proposals {
        *by_action.entry(p.action.as_str()).or_insert(0) += 1;
    }
    let output = JsonOutput {
        schema_version: 1,
        target: &args.from,
        write: args.write,
        overwrite: args.overwrite,
        summary: JsonSummary {
            proposals: plan.proposals.len(),
            files_changed: changes
                .iter()
                .filter(|c| c.expected_prior.is_some())
                .count(),
            files_created: changes
                .iter()
                .filter(|c| c.expected_prior.is_none())
                .count(),
            skipped: plan.skipped.len(),
            by_action,
        },
        proposals: &plan.proposals,
        skipped: &plan.skipped,
    };
    serde_json::to_string_pretty(&output).expect("the output serializes")
}

const ADDED: Style = AnsiColor::Green.on_default();
const REMOVED: Style = AnsiColor::Red.on_default();
const HEADER: Style = Style::new().bold();

fn print_preview(global: &GlobalArgs, changes: &[FileChange], plan: &Plan, writing: bool) {
    let mut out = String::new();
    for change in changes {
        let old = change.expected_prior.as_deref().unwrap_or("");
        let (from, to) = match change.expected_prior {
            Some(_) => (
                format!("a/{}", change.rel_path),
                format!("b/{}", change.rel_path),
            ),
            None => ("/dev/null".to_string(), format!("b/{}", change.rel_path)),
        };
        let diff = similar::TextDiff::from_lines(old, change.content.as_str());
        for line in diff
            .unified_diff()
            .context_radius(3)
            .header(&from, &to)
            .to_string()
            .lines()
        {
            let style = match line.as_bytes().first() {
                Some(b'+') if !line.starts_with("+++") => ADDED,
                Some(b'-') if !line.starts_with("---") => REMOVED,
                Some(b'@') | Some(b'+') | Some(b'-') => HEADER,
                _ => Style::new(),
            };
            out.push_str(&format!("{style}{line}{style:#}\n"));
        }
    }
    let _ = output_report(&out, None);
    for skipped in &plan.skipped {
        note(global, &format!("note: {}", skipped.describe()));
    }
    let created = changes
        .iter()
        .filter(|c| c.expected_prior.is_none())
        .count();
    let summary = format!(
        "{} in {} ({} new)",
        count(plan.proposals.len(), "change", "changes"),
        count(changes.len(), "file", "files"),
        created
    );
    if changes.is_empty() {
        note(
            global,
            "nothing to change: the declarations already say what the warehouse has",
        );
    } else if writing {
        note(global, &format!("writing {summary}"));
    } else {
        note(global, &format!("{summary}; run with --write to apply"));
    }
}

/// The write transaction: write every file, recompile from disk, restore on failure.
fn write(global: &GlobalArgs, root: &Path, changes: &[FileChange]) -> anyhow::Result<ExitStatus> {
    // The check renders its diagnostics while the reloaded sources are at hand.
    let recompile = || -> Result<(), String> {
        let reloaded = Project::load(root).map_err(|e| format!("error: {e}"))?;
        let (diags, _) = compile_cached(&reloaded, Default::default(), !global.no_cache);
        let rendered: Vec<String> = diags
            .iter()
            .filter(|d| d.is_error())
            .map(|d| diagnostics::render_text(d, &reloaded.sources))
            .collect();
        if rendered.is_empty() {
            Ok(())
        } else {
            Err(rendered.join("\n\n"))
        }
    };
    let check = || crate::logging::timed("project reloaded and recompiled", recompile);
    match crate::logging::timed("files written and checked", || {
        transaction::apply(root, changes, check)
    }) {
        Ok(Ok(())) => {
            note(
                global,
                &format!(
                    "wrote {}; the project compiles",
                    count(changes.len(), "file", "files")
                ),
            );
            Ok(ExitStatus::Success)
        }
        Ok(Err(rendered)) => {
            anstream::eprintln!("{rendered}\n");
            Err(UserError::new("the generated declarations do not compile; every file was restored to its prior content")
                .with_hint("fix the declarations or the warehouse as the diagnostics say, then run again")
                .into())
        }
        Err(TxError::Interrupted(signal)) => {
            anstream::eprintln!("error: {}", TxError::Interrupted(signal));
            Ok(ExitStatus::Interrupted(signal))
        }
        Err(TxError::Locked) => Err(UserError::new(
            "another sqb command is writing to this project",
        )
        .with_hint("wait for it to finish; the lock is released when its process exits")
        .into()),
        Err(e) => Err(e.into()),
    }
}
