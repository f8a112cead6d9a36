//! The server's routes: the bearer token verified first, the request read strictly (unknown
//! fields refused), the query run on a blocking thread, every outcome counted, and an error
//! body that keeps the refusal's code. A query's SQL is never logged at info level, nor sent
//! back: a response holds only the asker's own rows.

use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{DefaultBodyLimit, Request, State as Shared};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::sensitive_headers::SetSensitiveRequestHeadersLayer;
use tower_http::trace::TraceLayer;

use super::{Loaded, State};
use crate::ops::query::{answer, QueryOptions};
use crate::rows::Statement;
use crate::semantic::query::{QueryRequest, Refusal};
use crate::warehouse::WarehouseError;

pub(super) fn router(state: Arc<State>) -> Router {
    let routes = Router::new()
        .route("/v1/query", post(query))
        .route("/v1/assert", post(assert))
        .route("/v1/catalog", get(catalog))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics));
    layered(routes, state)
}

/// The layers around every route, from the outside in: the `Authorization` header marked
/// sensitive (no log line or debug print shows a token), a request id (the client's
/// `x-request-id`, else a new UUID) given back on the response, a span per request carrying
/// it (debug level), every answer counted and logged with it, a panic answered as a 500 in the error body, and the body read
/// within the serving project's limits.
///
/// The body's size and time limits are sqb's own (`limited`), not tower-http's layers: those
/// take their limits once, when the router is built, and a reload must change them; and
/// tower-http's body timeout restarts with each chunk, where a trickling client must be cut
/// off when the whole body is late.
fn layered(routes: Router<Arc<State>>, state: Arc<State>) -> Router {
    routes
        .layer(DefaultBodyLimit::disable())
        .layer(middleware::from_fn_with_state(state.clone(), limited))
        .layer(CatchPanicLayer::custom(panicked))
        .layer(middleware::from_fn_with_state(state.clone(), counted))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(span)
                .on_request(())
                .on_response(())
                .on_failure(()),
        )
        .layer(PropagateRequestIdLayer::x_request_id())
        .layer(SetRequestIdLayer::x_request_id(MakeRequestUuid))
        .layer(SetSensitiveRequestHeadersLayer::new([
            header::AUTHORIZATION,
        ]))
        .with_state(state)
}

/// The span of a request at debug level (`sqb -v serve`): every line its work logs names the
/// request's method, path (never its query string) and id.
fn span(request: &Request) -> tracing::Span {
    let id = request_id(request.headers());
    tracing::debug_span!("request", method = %request.method(), path = request.uri().path(), id = %id)
}

/// The request's id, as the log shows it: one the client sent only if it is short and
/// printable.
fn request_id(headers: &HeaderMap) -> &str {
    headers
        .get(REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .filter(|v| v.len() <= 128 && v.bytes().all(|b| b.is_ascii_graphic()))
        .unwrap_or("-")
}

const REQUEST_ID: &str = "x-request-id";

/// A handler that panicked: the client gets the error body, never a dropped connection, and
/// the panic's message stays in the server's log.
fn panicked(panic: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let message = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("a panic without a message");
    tracing::error!("the request's handler panicked: {message}");
    Failure::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "internal",
        "the server failed to answer",
    )
    .into_response()
}

/// Reads the body up to the serving project's `max_request_bytes` (past it, 413) within its
/// `body_timeout_ms` (past it, 408: a client trickling its body holds nothing longer), before
/// any handler runs.
async fn limited(Shared(state): Shared<Arc<State>>, request: Request, next: Next) -> Response {
    use http_body_util::BodyExt as _;
    let (limit, patience) = {
        let loaded = state.current();
        (loaded.body_limit, loaded.body_timeout)
    };
    let (parts, body) = request.into_parts();
    let read = http_body_util::Limited::new(body, limit).collect();
    let Ok(read) = tokio::time::timeout(patience, read).await else {
        return Failure::new(
            StatusCode::REQUEST_TIMEOUT,
            "slow_request",
            format!(
                "the request body did not arrive within {} ms (body_timeout_ms)",
                patience.as_millis()
            ),
        )
        .into_response();
    };
    match read {
        Ok(collected) => {
            let body = axum::body::Body::from(collected.to_bytes());
            next.run(Request::from_parts(parts, body)).await
        }
        Err(err) if err.is::<http_body_util::LengthLimitError>() => Failure::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            format!("the request body is larger than the {limit} bytes this server takes (max_request_bytes)"),
        )
        .into_response(),
        Err(err) => Failure::new(
            StatusCode::BAD_REQUEST,
            "bad_request",
            format!("the request body could not be read: {err}"),
        )
        .into_response(),
    }
}

/// An error as the server answers it: a status, a stable code and a short message.
struct Failure {
    status: StatusCode,
    code: &'static str,
    message: String,
}

impl Failure {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
        }
    }
}

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        let mut response = (
            self.status,
            Json(json!({ "error": { "code": self.code, "message": self.message } })),
        )
            .into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                "Bearer".parse().expect("a header value"),
            );
        }
        response.extensions_mut().insert(Code(self.code));
        response
    }
}

/// The refusal or error code a response carried, for the metrics.
#[derive(Clone, Copy)]
struct Code(&'static str);

/// Counts every request by route, status and code, with its latency.
async fn counted(Shared(state): Shared<Arc<State>>, request: Request, next: Next) -> Response {
    let route = match request.uri().path() {
        p @ ("/v1/query" | "/v1/assert" | "/v1/catalog" | "/healthz" | "/readyz" | "/metrics") => p,
        _ => "other",
    }
    .to_string();
    let id = request_id(request.headers()).to_string();
    let started = Instant::now();
    let response = next.run(request).await;
    let code = response.extensions().get::<Code>().map_or("", |c| c.0);
    let seconds = started.elapsed().as_secs_f64();
    state
        .metrics
        .record(&route, response.status().as_u16(), code, seconds);
    tracing::info!(
        id = %id,
        route,
        status = response.status().as_u16(),
        code,
        ms = seconds * 1000.0,
        "request"
    );
    response
}

/// The claims of the request's bearer token, once verified.
fn principal(loaded: &Loaded, headers: &HeaderMap) -> Result<Map<String, Value>, Failure> {
    let unauthorized = |why: &str| Failure::new(StatusCode::UNAUTHORIZED, "unauthorized", why);
    let value = headers
        .get(header::AUTHORIZATION)
        .ok_or_else(|| unauthorized("no bearer token"))?
        .to_str()
        .map_err(|_| unauthorized("malformed token"))?;
    let token = value
        .strip_prefix("Bearer ")
        .ok_or_else(|| unauthorized("no bearer token"))?;
    loaded
        .verifier
        .verify(token.trim())
        .map_err(|r| unauthorized(&r.0))
}

/// A request body read strictly (unknown fields refused); 400 when it is not `what`.
fn parse<T: serde::de::DeserializeOwned>(body: &[u8], what: &str) -> Result<T, Failure> {
    serde_json::from_slice(body).map_err(|e| {
        Failure::new(
            StatusCode::BAD_REQUEST,
            "bad_request",
            format!("the request is not {what}: {e}"),
        )
    })
}

/// `POST /v1/query`'s body: what `sqb query` takes, and never a claim.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct QueryBody {
    metrics: Vec<String>,
    #[serde(default)]
    dimensions: Vec<String>,
    #[serde(default)]
    filters: Vec<String>,
    context: Option<String>,
    /// As `sqb query --order-by`: a metric or dimension asked, `-` first for descending.
    #[serde(default)]
    order_by: Vec<String>,
    limit: Option<u64>,
    #[serde(default)]
    format: Format,
}

#[derive(Debug, Default, Deserialize, PartialEq, Eq, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum Format {
    #[default]
    Json,
    Csv,
}

async fn query(
    Shared(state): Shared<Arc<State>>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Result<Response, Failure> {
    let loaded = state.current();
    let claims = principal(&loaded, &headers)?;
    let body: QueryBody = parse(&body, "a query")?;
    let request = QueryRequest {
        metrics: body.metrics,
        dimensions: body.dimensions,
        filters: body.filters,
        context: body.context,
        principal: Some(claims),
        tenant: None,
        order_by: body.order_by,
        limit: body.limit,
    };
    let format = body.format;
    let tenant = loaded
        .tenant_claim
        .as_ref()
        .and_then(|c| request.principal.as_ref()?.get(c))
        .map(Value::to_string)
        .unwrap_or_default();
    let slot = state
        .tenants
        .enter(tenant, loaded.per_tenant)
        .ok_or_else(|| {
            Failure::new(
                StatusCode::TOO_MANY_REQUESTS,
                "too_many_queries",
                format!(
                    "{} queries of this tenant are running already: retry when one has answered",
                    loaded.per_tenant
                ),
            )
        })?;
    let shared = state.clone();
    let project = Arc::clone(&loaded);
    let outcome = tokio::task::spawn_blocking(move || {
        let _slot = slot;
        let options = QueryOptions {
            from: Some(project.target.clone()),
            request,
            saved: None,
            sql_only: false,
            harness: false,
            timeouts: shared.timeouts,
            use_cache: shared.use_cache,
        };
        let started = Instant::now();
        let outcome = answer(&project.project, &options, &project.pool);
        shared.metrics.warehouse(started.elapsed().as_secs_f64());
        outcome
    })
    .await
    .map_err(|_| {
        Failure::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "the query stopped",
        )
    })?
    .map_err(failure)?;
    let rows = outcome.rows.as_ref().map_or(0, |r| r.rows.len());
    if rows > loaded.max_rows {
        return Err(Failure::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "too_many_rows",
            format!(
                "the answer has {rows} rows, past the server's limit of {}: ask for fewer groups",
                loaded.max_rows
            ),
        ));
    }
    Ok(match format {
        Format::Json => {
            let mut doc = crate::report::query::document(&outcome);
            if let Value::Object(map) = &mut doc {
                map.remove("sql");
                map.remove("params");
            }
            Json(doc).into_response()
        }
        Format::Csv => {
            let mut out = Vec::new();
            let _ = crate::report::query::emit(
                &outcome,
                crate::report::query::QueryFormat::Csv,
                &mut out,
            );
            ([(header::CONTENT_TYPE, "text/csv; charset=utf-8")], out).into_response()
        }
    })
}

/// `POST /v1/assert`'s body: which assertions (globs over their ids; all when empty) and,
/// optionally, tenants to check each one's scoping for (`sqb assert --tenant`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct AssertBody {
    #[serde(default)]
    select: Vec<String>,
    #[serde(default)]
    tenants: Vec<String>,
}

/// The one place assertion runs take among the queries in flight: one run at a time.
const ASSERT_SLOT: &str = "\0assert";

/// `POST /v1/assert`: the project's assertions run on the server's pool, as `sqb assert` runs
/// them, and their verdicts recorded for the target (the trust of later answers). Assertions
/// read whole relations, so only a tenancy-exempt principal may run them (any principal when
/// the project has no tenancy policy). The report is `sqb assert --format json`'s without SQL.
async fn assert(
    Shared(state): Shared<Arc<State>>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Result<Response, Failure> {
    let loaded = state.current();
    let claims = principal(&loaded, &headers)?;
    let body: AssertBody = match body.is_empty() {
        true => AssertBody::default(),
        false => parse(&body, "an assertion run")?,
    };
    let project = &loaded.project;
    let exempt = project.contracts.tenancy.is_none()
        || crate::semantic::query::tenancy_exempt(project, &claims)
            .map_err(|r| failure(anyhow::Error::new(r)))?;
    if !exempt {
        return Err(Failure::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            "assertions read every tenant's rows: only a tenancy-exempt role may run them",
        ));
    }
    let slot = state.tenants.enter(ASSERT_SLOT.into(), 1).ok_or_else(|| {
        Failure::new(
            StatusCode::TOO_MANY_REQUESTS,
            "too_many_queries",
            "an assertion run is in progress: retry when it has answered",
        )
    })?;
    let shared = state.clone();
    let report = tokio::task::spawn_blocking(move || {
        let _slot = slot;
        let options = crate::ops::assert::AssertOptions {
            from: Some(loaded.target.clone()),
            select: body.select,
            principal: Some(claims),
            timeouts: shared.timeouts,
            use_cache: shared.use_cache,
            tenants: body.tenants,
        };
        crate::ops::assert::assert_on(&loaded.project, &options, Some(&loaded.pool))
    })
    .await
    .map_err(|_| {
        Failure::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "the assertions stopped",
        )
    })?
    .map_err(failure)?;
    let mut out = Vec::new();
    let _ = crate::report::assert::emit(
        &report,
        &crate::report::assert::AssertFormat::Json,
        &mut out,
    );
    let mut doc: Value = serde_json::from_slice(&out).unwrap_or(Value::Null);
    if let Some(all) = doc.get_mut("assertions").and_then(Value::as_array_mut) {
        for a in all {
            if let Value::Object(map) = a {
                map.remove("sql");
            }
        }
    }
    Ok(Json(doc).into_response())
}

/// The status that fits a query's error: a refusal keeps its code.
fn failure(err: anyhow::Error) -> Failure {
    if let Some(r) = err.chain().find_map(|e| e.downcast_ref::<Refusal>()) {
        let status = match r.code {
            "no_principal" | "forbidden" | "invalid_claims" => StatusCode::FORBIDDEN,
            "guardrail" | "fanout_unsafe" | "unsupported_measure" | "zero_denominator" => {
                StatusCode::UNPROCESSABLE_ENTITY
            }
            _ => StatusCode::BAD_REQUEST,
        };
        return Failure::new(status, r.code, r.message.clone());
    }
    match err.chain().find_map(|e| e.downcast_ref::<WarehouseError>()) {
        Some(WarehouseError::QueryTimeout { .. } | WarehouseError::StatementTimeout { .. }) => {
            Failure::new(
                StatusCode::GATEWAY_TIMEOUT,
                "timeout",
                "the query ran past its limit",
            )
        }
        Some(_) => Failure::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "warehouse_unavailable",
            "the warehouse did not answer",
        ),
        None => {
            if let Some(user) = err
                .chain()
                .find_map(|e| e.downcast_ref::<crate::error::UserError>())
            {
                return Failure::new(StatusCode::BAD_REQUEST, "bad_request", user.to_string());
            }
            tracing::warn!("query failed: {err:#}");
            Failure::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "the query failed",
            )
        }
    }
}

/// `GET /v1/catalog`: the metrics this principal may ask for (each compiled for it, offline),
/// and the contexts.
async fn catalog(
    Shared(state): Shared<Arc<State>>,
    headers: HeaderMap,
) -> Result<Json<Value>, Failure> {
    let loaded = state.current();
    let claims = principal(&loaded, &headers)?;
    let project = &loaded.project;
    let namespace = crate::ops::query::namespace_of(project, &loaded.target)
        .map_err(|e| Failure::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string()))?;
    let mut metrics = Vec::new();
    for binding in project.metrics.iter().filter(|b| b.is_active()) {
        let Some(name) = &binding.metric else {
            continue;
        };
        let request = QueryRequest {
            metrics: vec![name.value.clone()],
            dimensions: Vec::new(),
            filters: Vec::new(),
            context: None,
            principal: Some(claims.clone()),
            ..QueryRequest::default()
        };
        if crate::semantic::query::compile(project, &namespace, &request).is_ok() {
            metrics.push(json!({
                "metric": name.value,
                "label": binding.label.as_ref().map(|l| l.value.clone()),
            }));
        }
    }
    let contexts: Vec<&str> = project
        .config
        .contexts
        .iter()
        .map(|c| c.value.as_str())
        .collect();
    Ok(Json(
        json!({ "version": 1, "metrics": metrics, "contexts": contexts }),
    ))
}

async fn healthz() -> &'static str {
    "ok\n"
}

/// `GET /readyz`: 200 once the warehouse answers a statement on the pool, 503 otherwise.
async fn readyz(Shared(state): Shared<Arc<State>>) -> Result<&'static str, Failure> {
    let loaded = state.current();
    let answered = tokio::task::spawn_blocking(move || {
        let probe = Statement {
            sql: "SELECT 1".into(),
            params: Vec::new(),
        };
        loaded.pool.run(None, &[probe])
    })
    .await;
    match answered {
        Ok(Ok(answers)) if answers.iter().all(Result::is_ok) => Ok("ready\n"),
        _ => Err(Failure::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "warehouse_unavailable",
            "the warehouse did not answer",
        )),
    }
}

async fn metrics(Shared(state): Shared<Arc<State>>) -> Response {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        Body::from(state.metrics.render(state.current().pool.usage())),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::{Request, StatusCode};
    use axum::routing::get;
    use axum::Router;
    use http_body_util::BodyExt as _;
    use tower::ServiceExt as _;
    use tower_http::catch_panic::CatchPanicLayer;

    async fn boom() -> &'static str {
        panic!("a bug")
    }

    #[test]
    fn a_handler_that_panics_is_answered_500_with_the_error_body() {
        let app = Router::new()
            .route("/boom", get(boom))
            .layer(CatchPanicLayer::custom(super::panicked));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let (status, code, body) = runtime.block_on(async {
            let request = Request::get("/boom").body(Body::empty()).unwrap();
            let response = app.oneshot(request).await.unwrap();
            let code = response.extensions().get::<super::Code>().map(|c| c.0);
            let status = response.status();
            let body = response.into_body().collect().await.unwrap().to_bytes();
            (status, code, String::from_utf8_lossy(&body).into_owned())
        });
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(code, Some("internal"), "counted by its code");
        assert_eq!(
            body,
            r#"{"error":{"code":"internal","message":"the server failed to answer"}}"#
        );
        assert!(
            !body.contains("a bug"),
            "the panic's message stays in the log"
        );
    }
}
