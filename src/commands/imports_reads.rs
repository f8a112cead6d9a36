//! `sqb imports reads`: what the project's models read of each import.

use anyhow::Context as _;

use crate::cli::{GlobalArgs, ImportsReadsArgs, TextOrJson};
use crate::commands::{note, project_root};
use crate::exit::ExitStatus;
use crate::ops::team_contracts::reads;
use crate::report::{team_contracts as printer, Output};

pub fn run(global: &GlobalArgs, args: &ImportsReadsArgs) -> anyhow::Result<ExitStatus> {
    let root = project_root(global)?;
    let file = reads(&root)?;
    let output = Output::of(args.out.as_deref());
    crate::report::write(output, |w| match args.format {
        TextOrJson::Text => printer::reads_text(&file, w),
        TextOrJson::Json => w.write_all(file.to_json().as_bytes()),
    })
    .with_context(|| match output.file() {
        Some(path) => format!("could not write {}", path.display()),
        None => "could not write the reads".to_string(),
    })?;
    if let Some(path) = output.file() {
        note(
            global,
            &format!(
                "wrote the reads of {} to {}",
                crate::report::count(file.imports.len(), "import", "imports"),
                path.display()
            ),
        );
    }
    Ok(ExitStatus::Success)
}
