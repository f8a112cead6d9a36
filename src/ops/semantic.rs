//! What `sqb query` and `sqb assert` share: the target and its namespace, an assertion's
//! query as a request, an embedded warehouse opened while the project loads, and running
//! statements on the target read-only.

use std::path::Path;

use crate::catalog::Namespace;
use crate::project::{Config, Project, Target};
use crate::rows::{Rows, Statement};
use crate::semantic::query::QueryRequest;
use crate::warehouse::pool::Pool;
use crate::warehouse::session;
use crate::warehouse::{Timeouts, WarehouseError};

/// The target `--from` names, else the project's `default_target`.
pub(super) fn target<'p>(
    project: &'p Project,
    from: Option<&str>,
) -> anyhow::Result<(String, &'p Target)> {
    let name = match from {
        Some(n) => n.to_string(),
        None => project
            .config
            .default_target
            .as_ref()
            .map(|d| d.value.clone())
            .ok_or_else(|| {
                crate::error::UserError::new("no target to query")
                    .with_hint("pass --from TARGET, or set `default_target` in sqb.toml")
            })?,
    };
    let target = super::inspect::target(project, &name)?;
    Ok((name, target))
}

/// Where the query's models are: the target's schema (and, on DuckDB, its catalog; a Postgres
/// session connects to the target's database instead, which cannot be named in a query).
pub(super) fn namespace(project: &Project, target: &Target) -> Namespace {
    let database = match project.engine().queries_name_the_database() {
        true => target.database.as_ref().map(|d| d.value.clone()),
        false => None,
    };
    Namespace {
        database,
        schema: target
            .schema
            .as_ref()
            .map_or(String::new(), |s| s.value.clone()),
    }
}

/// Runs statements on the target, read-only, each its own result: on the server's `pool`
/// when there is one, else on a session of their own (on `opening`'s database, when the
/// caller started opening it early).
pub(super) fn execute_all(
    project: &Project,
    target: &Target,
    statements: Vec<Statement>,
    timeouts: Timeouts,
    pool: Option<&Pool>,
    opening: Option<session::Opening>,
) -> anyhow::Result<Vec<Result<Rows, WarehouseError>>> {
    let database = target.database.as_ref().map(|d| d.value.clone());
    if let Some(pool) = pool {
        return Ok(pool.run(database.as_deref(), &statements)?);
    }
    let connect = super::connection(&project.config, &project.root, timeouts)?;
    Ok(session::run_opened(connect, opening, database, statements, 1)?.answers)
}

/// What `sqb query --harness` and `sqb assert` share: an assertion's query as a request.
pub(super) fn assertion_request(
    q: &crate::project::contracts::SemanticQuery,
    principal: Option<&serde_json::Map<String, serde_json::Value>>,
) -> QueryRequest {
    let texts = |v: &[crate::source::Spanned<String>]| v.iter().map(|s| s.value.clone()).collect();
    QueryRequest {
        metrics: texts(&q.metrics),
        dimensions: texts(&q.dimensions),
        filters: texts(&q.filters),
        context: q.context.as_ref().map(|c| c.value.clone()),
        principal: principal.cloned(),
        ..QueryRequest::default()
    }
}

/// Starts opening the warehouse the project file names, when it is an embedded one; `None`
/// when the file does not yet say how to connect (loading the project then says why).
pub(super) fn open_early(
    root: &Path,
    config: Option<&Config>,
    timeouts: Timeouts,
) -> Option<session::Opening> {
    let connect = super::connection(config?, root, timeouts).ok()?;
    session::Opening::start(&connect)
}
