//! `sqb contract generate`: propose declaration changes from the warehouse; with `--write`,
//! make them in one transaction that recompiles the project or restores every file.

use crate::cli::{GenerateArgs, GenerateFormat, GlobalArgs};
use crate::commands::{inspect_options, note, project_root, say, stdout};
use crate::contract::plan::{Plan, Skipped};
use crate::edit::transaction::{FileChange, TxError};
use crate::exit::ExitStatus;
use crate::message::Level;
use crate::ops::generate::{self, GenerateOptions, Generated, Written};
use crate::ops::inspect::target_name;
use crate::report::generate::{created, emit_json, emit_preview, Run};
use crate::report::{count, OutputError};

pub fn run(global: &GlobalArgs, args: &GenerateArgs) -> anyhow::Result<ExitStatus> {
    let root = project_root(global)?;
    let from = target_name(&root, args.from.as_deref())?;
    let mut inspect = inspect_options(global, &from, &args.selection, &args.connect);
    inspect.partial = true;
    let options = GenerateOptions {
        inspect,
        overwrite: args.overwrite,
        write: args.write,
    };
    let Generated {
        plan,
        changes,
        errors_before,
    } = generate::plan(&root, &options)?;
    if !errors_before.is_empty() {
        say(
            global,
            Level::Warning,
            &format!(
                "the project does not compile ({}): the proposals come from what loaded, and a write may fix errors but never add one",
                count(errors_before.len(), "error", "errors")
            ),
        );
    }
    match tracing::debug_span!("changes shown")
        .in_scope(|| show(global, args, &from, &plan, &changes))
    {
        // With --write the preview only informs: a reader that went away does not stop the
        // write it asked for.
        Err(OutputError::Closed) if args.write => {}
        shown => shown?,
    }
    if !args.write || changes.is_empty() {
        return Ok(ExitStatus::Success);
    }
    // The write recompiles the project from disk: the plan is not held beside it.
    drop(plan);
    let written = generate::write(
        &root,
        &changes,
        !global.no_cache,
        &errors_before,
        args.cascade,
    )?;
    match written {
        Written::Done {
            fixed,
            left,
            files,
            cascaded,
        } => {
            for c in &cascaded {
                say(global, Level::Note, &format!("cascaded: {c}"));
            }
            let files = count(files, "file", "files");
            let verdict = match (fixed, left) {
                (0, 0) => "the project compiles".to_string(),
                (fixed, 0) => format!(
                    "it fixed {}: the project compiles",
                    count(fixed, "error", "errors")
                ),
                (fixed, left) => format!(
                    "it fixed {} and added none; {} left (`sqb compile` lists them)",
                    count(fixed, "error", "errors"),
                    count(left, "error", "errors")
                ),
            };
            note(global, &format!("wrote {files}; {verdict}"));
            Ok(ExitStatus::Success)
        }
        Written::Interrupted(signal) => {
            crate::message::eprint(Level::Error, &TxError::Interrupted(signal).to_string());
            Ok(ExitStatus::Interrupted(signal))
        }
    }
}

fn show(
    global: &GlobalArgs,
    args: &GenerateArgs,
    from: &str,
    plan: &Plan,
    changes: &[FileChange],
) -> Result<(), OutputError> {
    if args.format == GenerateFormat::Json {
        let run = Run {
            target: from,
            write: args.write,
            overwrite: args.overwrite,
        };
        return stdout(|w| emit_json(&run, plan, changes, w));
    }
    // Written, the preview only informs: `--quiet` silences it like any other message. Without
    // `--write` it is the command's output, and stays.
    if args.write && global.quiet {
        return Ok(());
    }
    let styled = crate::report::stdout_takes_colour();
    stdout(|w| emit_preview(changes, styled, w))?;
    for skipped in &plan.skipped {
        let level = match skipped {
            Skipped::BreakingRename { .. } => Level::Warning,
            _ => Level::Note,
        };
        say(global, level, &skipped.describe());
    }
    let summary = format!(
        "{} in {} ({} new)",
        count(plan.proposals.len(), "change", "changes"),
        count(changes.len(), "file", "files"),
        created(changes)
    );
    note(
        global,
        &match (changes.is_empty(), args.write) {
            (true, _) if !plan.skipped.is_empty() => format!(
                "nothing to change but what sqb will not change ({} above)",
                count(plan.skipped.len(), "change", "changes")
            ),
            (true, _) => {
                "nothing to change: the declarations already say what the warehouse has".into()
            }
            (false, true) => format!("writing {summary}"),
            (false, false) => format!("{summary}; run with --write to apply"),
        },
    );
    Ok(())
}
