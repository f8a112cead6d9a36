//! `sqb import dbt`: a dbt project as a new sqb project, with the report of what was not
//! carried over on stdout and the compile of the result on stderr.

use crate::cli::{GlobalArgs, ImportDbtArgs, TextOrJson};
use crate::commands::note;
use crate::exit::ExitStatus;
use crate::ops::adopt::{import_dbt, ImportDbtOptions};
use crate::report::{self, adopt as printer, Output};

pub fn run(global: &GlobalArgs, args: &ImportDbtArgs) -> anyhow::Result<ExitStatus> {
    let options = ImportDbtOptions {
        dbt_dir: args.dbt_project_dir.clone(),
        out: args.out.clone(),
        manifest: args.manifest.clone(),
        engine: args.engine.map(crate::commands::engine_of),
        force: args.force,
    };
    let outcome = import_dbt(&options)?;
    report::write(Output::Stdout, |w| match args.format {
        TextOrJson::Text => printer::emit_text(&outcome, w),
        TextOrJson::Json => printer::emit_json(&outcome, w),
    })?;
    let files = report::count(outcome.files.len(), "file", "files");
    let compiled = match (outcome.errors, outcome.warnings) {
        (0, 0) => "it compiles clean".to_string(),
        (0, w) => format!(
            "it compiles, with {}",
            report::count(w, "warning", "warnings")
        ),
        (e, _) => format!(
            "`sqb compile` reports {} on it: run `sqb --project-dir {} compile`",
            report::count(e, "error", "errors"),
            outcome.out.display()
        ),
    };
    note(
        global,
        &format!("wrote {files} to {}; {compiled}", outcome.out.display()),
    );
    Ok(match outcome.errors {
        0 => ExitStatus::Success,
        _ => ExitStatus::Failure,
    })
}
