//! `sqb serve`: the semantic layer over HTTP, behind verified identity. The project is
//! compiled once; each request's claims come from its bearer token alone (`crate::identity`),
//! and its query goes through the same compiler, guardrails, tenancy and roles as `sqb query`,
//! read-only, on the server's own credentials.
//!
//! Endpoints: `POST /v1/query`, `GET /v1/catalog`, `GET /healthz`, `GET /readyz`,
//! `GET /metrics` (docs/serve.md). SIGHUP (and with `--watch`, a changed project file)
//! recompiles the project beside the one serving and swaps it in only if it compiles. SIGINT and SIGTERM drain in-flight requests, then the
//! server exits 0.

mod handlers;
mod metrics;
mod watch;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use anyhow::Context as _;

use crate::error::UserError;
use crate::identity::{Keys, Verifier};
use crate::project::Project;
use crate::warehouse::pool::Pool;
use crate::warehouse::Timeouts;

pub struct ServeOptions {
    /// `host:port`; default `[serve] listen`, else `127.0.0.1:8080`.
    pub listen: Option<String>,
    /// The target answered from; default `[serve] target`, else `default_target`.
    pub from: Option<String>,
    /// Reload when a project file changes, as on SIGHUP.
    pub watch: bool,
    pub timeouts: Timeouts,
    pub use_cache: bool,
}

/// What a compile of the project gives the server; swapped whole on a reload.
pub(crate) struct Loaded {
    pub project: Project,
    pub verifier: Verifier,
    pub target: String,
    pub max_rows: usize,
    pub per_tenant: usize,
    /// The tenancy policy's claim: the key of the per-tenant limit.
    pub tenant_claim: Option<String>,
    /// The read-only sessions the queries run on; replaced with the project on a reload.
    pub pool: Pool,
    listen: String,
    pub body_limit: usize,
    /// How long a client may take to send its body: a slow one holds no task past it.
    pub body_timeout: Duration,
}

/// What every request reads.
pub(crate) struct State {
    loaded: RwLock<Arc<Loaded>>,
    pub timeouts: Timeouts,
    pub use_cache: bool,
    pub metrics: metrics::Metrics,
    pub tenants: Arc<Tenants>,
}

impl State {
    /// The project serving now: a request keeps the one it started with.
    pub fn current(&self) -> Arc<Loaded> {
        Arc::clone(&self.loaded.read().unwrap_or_else(|p| p.into_inner()))
    }
}

/// Queries in flight, by tenant.
#[derive(Default)]
pub(crate) struct Tenants(Mutex<HashMap<String, usize>>);

impl Tenants {
    /// Takes a place for `tenant` among its queries in flight, if it has one left.
    pub fn enter(self: &Arc<Self>, tenant: String, limit: usize) -> Option<Slot> {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let n = map.entry(tenant.clone()).or_insert(0);
        if *n >= limit {
            return None;
        }
        *n += 1;
        Some(Slot {
            tenants: Arc::clone(self),
            tenant,
        })
    }
}

/// A query in flight for a tenant; its place is given back when dropped.
pub(crate) struct Slot {
    tenants: Arc<Tenants>,
    tenant: String,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut map = self.tenants.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = map.get_mut(&self.tenant) {
            *n -= 1;
            if *n == 0 {
                map.remove(&self.tenant);
            }
        }
    }
}

const DEFAULT_LISTEN: &str = "127.0.0.1:8080";
const DEFAULT_MAX_ROWS: i64 = 100_000;
const DEFAULT_MAX_REQUEST_BYTES: i64 = 64 * 1024;
const DEFAULT_BODY_TIMEOUT_MS: i64 = 10_000;
const DEFAULT_PER_TENANT: i64 = 8;
const DEFAULT_CONNECTIONS: i64 = 4;

/// Compiles the project, binds, calls `ready` with the bound address, and serves until SIGINT
/// or SIGTERM, then drains in-flight requests.
pub fn serve(
    root: &Path,
    options: &ServeOptions,
    ready: impl FnOnce(SocketAddr),
) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("could not start the server's runtime")?;
    let loaded = load(root, options, runtime.handle().clone())?;
    let listen = loaded.listen.clone();
    let root = loaded.project.root.clone();
    let state = Arc::new(State {
        loaded: RwLock::new(Arc::new(loaded)),
        timeouts: options.timeouts,
        use_cache: options.use_cache,
        metrics: metrics::Metrics::default(),
        tenants: Arc::default(),
    });
    // Signals are the server's to handle: it drains before it exits, and reloads on SIGHUP.
    let deferral = crate::interrupt::defer();
    let hangups = crate::interrupt::hangups();
    let (watching, watched_root) = (options.watch, root.clone());
    let reload = ReloadOptions {
        root,
        listen: options.listen.clone(),
        from: options.from.clone(),
        timeouts: options.timeouts,
        use_cache: options.use_cache,
    };
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(&listen)
            .await
            .with_context(|| format!("could not listen on {listen}"))?;
        let addr = listener
            .local_addr()
            .context("the listener has no address")?;
        ready(addr);
        if watching {
            tokio::spawn(watch::changes(watched_root, Arc::clone(&hangups)));
        }
        tokio::spawn(reloads(Arc::clone(&state), reload, hangups));
        let app = handlers::router(Arc::clone(&state));
        listen_until_stopped(state, app, listen, listener, deferral).await
    })
}

/// Serves on `listener` until SIGINT or SIGTERM, then drains. A reload that changes `listen`
/// moves the server: the new address is bound first (if it cannot be, the server stays where it
/// is and says why), then the old listener stops taking connections and drains its requests.
async fn listen_until_stopped(
    state: Arc<State>,
    app: axum::Router,
    mut listen: String,
    listener: tokio::net::TcpListener,
    deferral: crate::interrupt::Deferral,
) -> anyhow::Result<()> {
    let mut draining = Vec::new();
    let mut serving = spawn_server(listener, app.clone());
    let mut refused: Option<String> = None;
    loop {
        tokio::time::sleep(Duration::from_millis(50)).await;
        if deferral.received().is_some() {
            tracing::info!("draining in-flight requests");
            draining.push(serving);
            break;
        }
        let wanted = state.current().listen.clone();
        if wanted == listen || refused.as_ref() == Some(&wanted) {
            continue;
        }
        match tokio::net::TcpListener::bind(&wanted).await {
            Ok(listener) => {
                let addr = listener
                    .local_addr()
                    .map_or(wanted.clone(), |a| a.to_string());
                let mut old = std::mem::replace(&mut serving, spawn_server(listener, app.clone()));
                old.signal();
                draining.push(old);
                crate::message::eprint(
                    crate::message::Level::Note,
                    &format!("listening on http://{addr} (moved from {listen})"),
                );
                listen = wanted;
                refused = None;
            }
            Err(err) => {
                crate::message::eprint(
                    crate::message::Level::Error,
                    &format!("could not listen on {wanted}: {err}; still listening on {listen}"),
                );
                refused = Some(wanted);
            }
        }
    }
    for server in draining {
        server.stop().await?;
    }
    Ok(())
}

/// One listener's server, stopped gracefully on request.
struct Serving {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Serving {
    /// Stops taking connections; the requests in flight go on.
    fn signal(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }

    /// Stops taking connections and waits for the requests in flight.
    async fn stop(mut self) -> anyhow::Result<()> {
        self.signal();
        self.task
            .await
            .context("the server stopped")?
            .context("the server stopped")
    }
}

fn spawn_server(listener: tokio::net::TcpListener, app: axum::Router) -> Serving {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = axum::serve(listener, app).with_graceful_shutdown(async move {
        let _ = stopped.await;
    });
    Serving {
        stop: Some(stop),
        task: tokio::spawn(async move { server.await }),
    }
}

struct ReloadOptions {
    root: PathBuf,
    listen: Option<String>,
    from: Option<String>,
    timeouts: Timeouts,
    use_cache: bool,
}

/// On each SIGHUP: the project compiled again beside the one serving, swapped in only if it
/// compiles; otherwise the old one keeps serving and the error says where.
async fn reloads(
    state: Arc<State>,
    options: ReloadOptions,
    hangups: Arc<std::sync::atomic::AtomicUsize>,
) {
    let options = Arc::new(options);
    let mut seen = hangups.load(Ordering::SeqCst);
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = hangups.load(Ordering::SeqCst);
        if now == seen {
            continue;
        }
        seen = now;
        let opts = Arc::clone(&options);
        let handle = tokio::runtime::Handle::current();
        let loaded = tokio::task::spawn_blocking(move || {
            load(
                &opts.root,
                &ServeOptions {
                    listen: opts.listen.clone(),
                    from: opts.from.clone(),
                    watch: false,
                    timeouts: opts.timeouts,
                    use_cache: opts.use_cache,
                },
                handle,
            )
        })
        .await;
        match loaded {
            Ok(Ok(loaded)) => {
                *state.loaded.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(loaded);
                crate::message::eprint(
                    crate::message::Level::Note,
                    "reloaded: the new project compiles and is serving",
                );
            }
            Ok(Err(err)) => {
                if let Some(user) = err
                    .chain()
                    .find_map(|e| e.downcast_ref::<UserError>())
                    .and_then(|u| u.diagnostics.as_deref())
                {
                    eprintln!("{user}\n");
                }
                crate::message::eprint(
                    crate::message::Level::Error,
                    &format!("not reloaded, the project serving is unchanged: {err}"),
                );
            }
            Err(_) => crate::message::eprint(
                crate::message::Level::Error,
                "not reloaded: the reload stopped",
            ),
        }
    }
}

/// The project compiled, and what `[serve]` says.
fn load(
    root: &Path,
    options: &ServeOptions,
    handle: tokio::runtime::Handle,
) -> anyhow::Result<Loaded> {
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
    let tenant_claim = project
        .contracts
        .tenancy
        .as_ref()
        .and_then(|t| t.claim.as_ref())
        .map(|c| c.value.clone());
    let connect = super::connection(&project.config, &project.root, options.timeouts)?;
    let connections = config.connections.map_or(DEFAULT_CONNECTIONS, |n| n.value) as usize;
    Ok(Loaded {
        pool: Pool::new(connect, connections, handle),
        verifier,
        target,
        max_rows: config.max_rows.map_or(DEFAULT_MAX_ROWS, |n| n.value) as usize,
        per_tenant: config
            .max_concurrent_per_tenant
            .map_or(DEFAULT_PER_TENANT, |n| n.value) as usize,
        tenant_claim,
        listen,
        body_limit: config
            .max_request_bytes
            .map_or(DEFAULT_MAX_REQUEST_BYTES, |n| n.value) as usize,
        body_timeout: Duration::from_millis(
            config
                .body_timeout_ms
                .map_or(DEFAULT_BODY_TIMEOUT_MS, |n| n.value) as u64,
        ),
        project,
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
    // A FIFO or a device where the file goes would hang the read: only a regular file is read.
    let regular = std::fs::metadata(&path)
        .with_context(|| format!("could not read the JWKS file {}", path.display()))?
        .is_file();
    if !regular {
        return Err(UserError::new(format!(
            "the JWKS file {} is not a regular file",
            path.display()
        ))
        .into());
    }
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("could not read the JWKS file {}", path.display()))?;
    Ok(Verifier::new(Keys::Jwks(&text), issuer, audience)
        .map_err(|e| UserError::new(format!("[serve] jwks = {}: {e}", path.display())))?)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::Tenants;

    #[test]
    fn a_tenant_gets_its_limit_of_places_and_each_back_when_it_ends() {
        let tenants = Arc::new(Tenants::default());
        let a1 = tenants.enter("1".into(), 2).unwrap();
        let _a2 = tenants.enter("1".into(), 2).unwrap();
        assert!(
            tenants.enter("1".into(), 2).is_none(),
            "a third of tenant 1"
        );
        let _b = tenants
            .enter("2".into(), 2)
            .expect("another tenant is not held up");
        drop(a1);
        assert!(tenants.enter("1".into(), 2).is_some(), "a place given back");
    }
}
