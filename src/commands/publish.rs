//! `sqb publish`: the snapshot of the public models, to stdout, a file, or checked against one.

use anyhow::Context as _;

use crate::cli::{GlobalArgs, PublishArgs};
use crate::commands::{note, project_root, stdout};
use crate::exit::ExitStatus;
use crate::ops::publish::{publish, PublishOptions};

pub fn run(global: &GlobalArgs, args: &PublishArgs) -> anyhow::Result<ExitStatus> {
    let root = project_root(global)?;
    let options = PublishOptions {
        target: args.target.clone(),
        all: args.all,
    };
    let snapshot = publish(&root, &options)?;
    let bytes = snapshot.to_bytes();
    let models = crate::report::count(snapshot.models.len(), "model", "models");
    if let Some(path) = &args.check {
        let current =
            std::fs::read(path).with_context(|| format!("could not read {}", path.display()))?;
        if current == bytes {
            note(
                global,
                &format!("{} is up to date ({models})", path.display()),
            );
            return Ok(ExitStatus::Success);
        }
        eprintln!(
            "{} is out of date: `sqb publish --out {}` writes the current snapshot",
            path.display(),
            path.display()
        );
        return Ok(ExitStatus::Failure);
    }
    match &args.out {
        Some(path) => {
            crate::atomic::write_atomic(path, &bytes)
                .with_context(|| format!("could not write {}", path.display()))?;
            note(
                global,
                &format!(
                    "published {models} to {} ({})",
                    path.display(),
                    snapshot.content_hash
                ),
            );
        }
        None => stdout(|w| w.write_all(&bytes))?,
    }
    Ok(ExitStatus::Success)
}
