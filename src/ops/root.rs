//! Finding the project: `--project-dir`, or the nearest `sqb.toml` above the working directory;
//! an interrupted `contract generate --write` found there is rolled back first.

use std::path::{Path, PathBuf};

use crate::edit::transaction::{self, Recovered};
use crate::error::UserError;
use crate::project;

/// The project root, and what was recovered there.
pub struct Root {
    pub path: PathBuf,
    /// An interrupted write that was rolled back before anything else.
    pub recovered: Option<Recovered>,
}

/// Finds the root (`dir`, or the nearest `sqb.toml` above the working directory) and rolls back
/// an interrupted write there.
pub fn find(dir: Option<&Path>) -> anyhow::Result<Root> {
    let path = locate(dir)?;
    let recovered = transaction::recover(&path)?;
    Ok(Root { path, recovered })
}

fn locate(dir: Option<&Path>) -> Result<PathBuf, UserError> {
    if let Some(dir) = dir {
        if !dir.join(project::PROJECT_FILE).is_file() {
            return Err(UserError::new(format!("no sqb.toml in {}", dir.display()))
                .with_hint("--project-dir names the directory that holds sqb.toml"));
        }
        return Ok(dir.to_path_buf());
    }
    let cwd = std::env::current_dir()
        .map_err(|e| UserError::new(format!("cannot read the current directory: {e}")))?;
    project::find_root(&cwd).ok_or_else(|| {
        UserError::new(format!(
            "no sqb.toml found in {} or any parent directory",
            cwd.display()
        ))
        .with_hint("run sqb inside a project, or pass --project-dir")
    })
}
