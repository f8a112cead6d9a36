//! `sqb compile`: load the project and validate it offline.

use std::path::Path;

use crate::compile::{compile_cached, Options};
use crate::diagnostics::Diagnostic;
use crate::project::{Project, ProjectFile};

pub struct CompileOptions {
    /// Infer each model's output from its SQL and check it against the declaration.
    pub sql_analysis: bool,
    /// Read and write the compile cache (.sqb/cache/).
    pub use_cache: bool,
}

/// A loaded project and everything the compile found in it.
pub struct CompiledProject {
    pub project: Project,
    pub diagnostics: Vec<Diagnostic>,
}

impl CompiledProject {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

pub fn compile(root: &Path, options: &CompileOptions) -> anyhow::Result<CompiledProject> {
    compile_begun(Project::begin(root, options.use_cache), options)
}

/// [`compile`] of a project whose project file is already read, for a caller that started
/// work on it (opening the warehouse) first.
pub fn compile_begun(
    file: ProjectFile,
    options: &CompileOptions,
) -> anyhow::Result<CompiledProject> {
    let project = file.finish()?;
    let (diagnostics, _) = compile_cached(
        &project,
        Options {
            sql_analysis: options.sql_analysis,
        },
        options.use_cache,
    );
    Ok(CompiledProject {
        project,
        diagnostics,
    })
}
