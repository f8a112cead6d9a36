//! `sqb serve`: the semantic layer over HTTP, behind verified identity. The project is
//! compiled once; each request's claims come from its bearer token alone (`crate::identity`),
//! and its query goes through the same compiler, guardrails, tenancy and roles as `sqb query`,
//! read-only, on the server's own credentials.
//!
//! Endpoints: `POST /v1/query`, `GET /v1/catalog`, `GET /healthz`, `GET /readyz`,
//! `GET /metrics` (docs/serve.md). SIGINT and SIGTERM drain in-flight requests, then the
//! server exits 0.

mod handlers;
mod metrics;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;

use crate::error::UserError;
use crate::identity::{Keys, Verifier};
use crate::project::Project;
use crate::warehouse::Timeouts;

pub struct ServeOptions {
    /// `host:port`; default `[serve] listen`, else `127.0.0.1:8080`.
    pub listen: Option<String>,
    /// The target answered from; default `[serve] target`, else `default_target`.
    pub from: Option<String>,
    pub timeouts: Timeouts,
    pub use_cache: bool,
}

/// What every request reads.
pub(crate) struct State {
    pub project: Project,
    pub verifier: Verifier,
    pub target: String,
    pub timeouts: Timeouts,
    pub use_cache: bool,
    pub max_rows: usize,
    pub metrics: metrics::Metrics,
}

const DEFAULT_LISTEN: &str = "127.0.0.1:8080";
const DEFAULT_MAX_ROWS: i64 = 100_000;
const DEFAULT_MAX_REQUEST_BYTES: i64 = 64 * 1024;

/// Compiles the project, binds, calls `ready` with the bound address, and serves until SIGINT
/// or SIGTERM, then drains in-flight requests.
pub fn serve(
    root: &Path,
    options: &ServeOptions,
    ready: impl FnOnce(SocketAddr),
) -> anyhow::Result<()> {
    let compiled = super::compile::compile(
        root,
        &super::compile::CompileOptions {
            sql_analysis: true,
            use_cache: options.use_cache,
        },
    )?;
    super::ensure_compiles(&compiled.project, &compiled.diagnostics)?;
    let project = compiled.project;
    let config = project.config.serve.clone().ok_or_else(|| {
        UserError::new("sqb.toml has no [serve] section: `sqb serve` does not know whom to believe")
            .with_hint(
                "add [serve] with `issuer`, `audience` and `secret_env` or `jwks` (docs/serve.md)",
            )
    })?;
    let verifier = verifier(&project.root, &config)?;
    let target = match options.from.clone().or(config.target.map(|t| t.value)) {
        Some(t) => t,
        None => super::inspect::target_name(&project.root, None)?,
    };
    super::inspect::target(&project, &target)?;
    let listen = options
        .listen
        .clone()
        .or(config.listen.map(|l| l.value))
        .unwrap_or_else(|| DEFAULT_LISTEN.to_string());
    let body_limit = config
        .max_request_bytes
        .map_or(DEFAULT_MAX_REQUEST_BYTES, |n| n.value);
    let state = Arc::new(State {
        project,
        verifier,
        target,
        timeouts: options.timeouts,
        use_cache: options.use_cache,
        max_rows: config.max_rows.map_or(DEFAULT_MAX_ROWS, |n| n.value) as usize,
        metrics: metrics::Metrics::default(),
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("could not start the server's runtime")?;
    // Signals are the server's to handle: it drains before it exits.
    let deferral = crate::interrupt::defer();
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(&listen)
            .await
            .with_context(|| format!("could not listen on {listen}"))?;
        let addr = listener
            .local_addr()
            .context("the listener has no address")?;
        ready(addr);
        let app = handlers::router(state, body_limit as usize);
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                while deferral.received().is_none() {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                tracing::info!("draining in-flight requests");
            })
            .await
            .context("the server stopped")
    })
}

/// The verifier of `[serve]`'s keys: the HS256 secret from the environment variable it names
/// (registered as a secret, so no output ever shows it), or the JWKS file.
fn verifier(root: &Path, config: &crate::project::Serve) -> anyhow::Result<Verifier> {
    let issuer = config.issuer.as_ref().map_or("", |i| i.value.as_str());
    let audience = config.audience.as_ref().map_or("", |a| a.value.as_str());
    let keys_error = |e: crate::identity::KeyError| UserError::new(format!("[serve]: {e}"));
    if let Some(name) = &config.secret_env {
        let secret = std::env::var(&name.value).map_err(|_| {
            UserError::new(format!(
                "the HS256 secret is not set: [serve] names the environment variable `{}`",
                name.value
            ))
            .with_hint(format!(
                "export {}=... (at least 32 random bytes)",
                name.value
            ))
        })?;
        crate::redact::register(&secret);
        return Ok(
            Verifier::new(Keys::Secret(secret.as_bytes()), issuer, audience).map_err(keys_error)?,
        );
    }
    let jwks = config.jwks.as_ref().map_or("", |j| j.value.as_str());
    let path = root.join(jwks);
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("could not read the JWKS file {}", path.display()))?;
    Ok(Verifier::new(Keys::Jwks(&text), issuer, audience).map_err(keys_error)?)
}
