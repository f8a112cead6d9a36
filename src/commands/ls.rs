//! `sqb ls`: the resources a selection picks; the list on stdout, the count on stderr.

use crate::cli::{GlobalArgs, LsArgs, TextOrJson};
use crate::commands::{note, project_root, say, stdout};
use crate::exit::ExitStatus;
use crate::message::Level;
use crate::ops::inspect::SelectOptions;
use crate::ops::ls::{ls, LsOptions};
use crate::report::{count, ls as printer};

pub fn run(global: &GlobalArgs, args: &LsArgs) -> anyhow::Result<ExitStatus> {
    let root = project_root(global)?;
    let options = LsOptions {
        selection: SelectOptions {
            select: args.selection.select.clone(),
            exclude: args.selection.exclude.clone(),
            file: args.selection.select_file.clone(),
        },
        use_cache: !global.no_cache,
    };
    let (listed, errors) = ls(&root, &options)?;
    stdout(|w| match args.format {
        TextOrJson::Text => printer::emit_text(&listed, w),
        TextOrJson::Json => printer::emit_json(&listed, w),
    })?;
    if errors > 0 {
        say(
            global,
            Level::Warning,
            &format!(
                "the project does not compile ({}): `sqb compile` lists them",
                count(errors, "error", "errors")
            ),
        );
    }
    note(
        global,
        &format!("{} selected", count(listed.len(), "resource", "resources")),
    );
    Ok(ExitStatus::Success)
}
