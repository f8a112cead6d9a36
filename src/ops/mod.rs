//! The work of each command, on plain option structs: nothing here knows clap, and nothing here
//! prints. Each op returns data (a report, a plan, a verdict) for a command to hand to a printer
//! in [`crate::report`], or a typed error.
//!
//! `root` finds the project (recovering an interrupted write); `compile`, `lineage`,
//! `publish` and `import` (a dbt project as a new sqb project) are offline; `inspect` is what `diff` and `generate` share: the warehouse session started before
//! the project loads, the compile, the selection, and the catalog read matched to it.

pub mod adopt;
pub mod assert;
pub mod audit;
pub mod check;
pub mod compile;
pub mod diff;
pub mod drift;
pub mod generate;
pub mod init;
pub mod inspect;
pub mod lineage;
pub mod ls;
pub mod migrate;
pub mod promote;
pub mod publish;
pub mod query;
pub mod root;
pub mod semantic;
pub mod serve;
pub mod team_contracts;
pub mod verify;

use std::path::Path;

use crate::diagnostics::{render_errors, Diagnostic};
use crate::error::UserError;
use crate::project::{Config, Project};
use crate::warehouse::session::Connect;
use crate::warehouse::{Timeouts, WarehouseError};

/// The environment variable that overrides `connection.url`.
pub const DATABASE_URL_ENV: &str = "SQB_DATABASE_URL";

/// How to reach the warehouse of the project at `root`: its `[connection]`, with the URL from
/// `SQB_DATABASE_URL` when that is set, and DuckDB's file relative to the root.
pub fn connection(
    config: &Config,
    root: &Path,
    timeouts: Timeouts,
) -> Result<Connect, WarehouseError> {
    let connection = &config.connection;
    let engine = connection.engine;
    let (url, source_name) = match std::env::var(DATABASE_URL_ENV)
        .ok()
        .filter(|u| !u.is_empty())
    {
        Some(url) => (Some(url), DATABASE_URL_ENV),
        None => (
            connection.url.as_ref().map(|u| u.value.clone()),
            "`url` under [connection]",
        ),
    };
    if url
        .as_deref()
        .is_some_and(|u| !engine.in_process() && !engine.takes_url(u))
    {
        return Err(WarehouseError::WrongScheme {
            source_name,
            engine: engine.title(),
            forms: engine.url_forms(),
        });
    }
    let path = connection.path.as_ref().map_or("", |p| p.value.as_str());
    Connect::new(engine, url, root.join(path), timeouts)
}

/// A project with errors fails the command: its errors, rendered, explain why.
fn ensure_compiles(project: &Project, diags: &[Diagnostic]) -> Result<(), UserError> {
    let errors = render_errors(diags, &project.sources);
    if errors.is_empty() {
        return Ok(());
    }
    Err(UserError::new(format!(
        "the project does not compile ({})",
        crate::report::count(errors.len(), "error", "errors")
    ))
    .with_hint("fix the errors above; `sqb compile` lists them")
    .with_diagnostics(errors.join("\n\n")))
}
