//! `sqb contract migrate`: the SQL migration that makes the target's tables match their
//! declarations, on stdout (or `--output`); what it cannot migrate on stderr.

use crate::cli::{GlobalArgs, MigrateArgs};
use crate::commands::{inspect_options, note, project_root, say};
use crate::exit::ExitStatus;
use crate::message::Level;
use crate::ops::inspect::target_name;
use crate::ops::migrate::{migrate, MigrateOptions};
use crate::report::{self, count, Output};

pub fn run(global: &GlobalArgs, args: &MigrateArgs) -> anyhow::Result<ExitStatus> {
    let root = project_root(global)?;
    let from = target_name(&root, args.from.as_deref())?;
    let options = MigrateOptions {
        inspect: inspect_options(global, &from, &args.selection, &args.connect),
        allow_drop: args.allow_drop,
        workers: usize::from(args.parallel.connections),
    };
    let migration = migrate(&root, &options)?;
    let sql = migration.sql();
    report::write(Output::of(args.output.as_deref()), |w| {
        w.write_all(sql.as_bytes())
    })?;
    for r in &migration.refused {
        let column = r
            .column
            .as_deref()
            .map(|c| format!(".{c}"))
            .unwrap_or_default();
        say(
            global,
            Level::Warning,
            &format!("not migrated: {}{column}: {}", r.relation, r.why),
        );
    }
    note(
        global,
        &format!(
            "{} for target `{from}`{}; sqb runs none of them",
            count(migration.steps.len(), "statement", "statements"),
            match migration.refused.len() {
                0 => String::new(),
                n => format!(", {} not migrated", count(n, "finding", "findings")),
            }
        ),
    );
    Ok(match migration.refused.is_empty() {
        true => ExitStatus::Success,
        false => ExitStatus::Failure,
    })
}
