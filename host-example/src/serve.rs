//! `warden serve`: the checks as a JSON HTTP service, for runtimes that cannot
//! embed the component.
//!
//! Every endpoint but `GET /v1/health` requires `Authorization: Bearer TOKEN`.
//! Request bodies over the size limit are refused with 413, malformed JSON with
//! 400 and a message naming the field, and so is a `nowMs` far from the host's
//! clock ([`crate::clock`]) unless the service runs with `--replay`. Checks run on blocking threads against
//! the runtime's instance pool, at most `concurrency` at a time, so concurrent
//! requests are served in parallel without unbounded instance growth. The
//! OpenAPI document is `host-example/openapi.json`, also served at
//! `GET /v1/openapi.json`.

use crate::clock::Clock;
use crate::json::{self, DiagnosticsJson, TurnOutcomeJson, VerdictJson};
use crate::runtime::Runtime;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::json;
use std::net::SocketAddr;
use std::sync::Arc;
use subtle::ConstantTimeEq;
use tokio::sync::Semaphore;

/// Default largest request body, in bytes (1 MiB).
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;
/// Default number of checks that run at the same time.
pub const DEFAULT_CONCURRENCY: usize = 8;
/// Shortest bearer token accepted, in characters.
pub const MIN_TOKEN_CHARS: usize = 16;

/// The OpenAPI document of this service.
pub const OPENAPI: &str = include_str!("../openapi.json");

/// Every route: method and path. The OpenAPI document must describe exactly these.
pub const ROUTES: &[(&str, &str)] = &[
    ("get", "/v1/health"),
    ("get", "/v1/openapi.json"),
    ("get", "/v1/diagnostics"),
    ("post", "/v1/check/turn"),
    ("post", "/v1/check/tool"),
    ("post", "/v1/check/outbound"),
    ("post", "/v1/record"),
];

/// How the service runs.
pub struct ServeOptions {
    pub token: String,
    pub max_body_bytes: usize,
    pub concurrency: usize,
    /// Which request times (`nowMs`) are accepted; `--replay` accepts any.
    pub clock: Clock,
}

struct AppState {
    runtime: Arc<Runtime>,
    token: String,
    permits: Semaphore,
    clock: Clock,
}

type Shared = Arc<AppState>;

/// What `POST /v1/record` accepts: exactly one of these keys.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
enum RecordJson {
    TurnStart(json::TurnStartJson),
    TurnEnd(json::TurnEndJson),
    Approval(json::ApprovalJson),
    Usage(json::UsageJson),
    Outcome(json::OutcomeJson),
}

impl json::Timed for RecordJson {
    fn request_time(&self) -> (&'static str, Option<u64>) {
        match self {
            RecordJson::TurnStart(r) => ("turnStart.nowMs", r.now_ms),
            RecordJson::TurnEnd(r) => ("turnEnd.nowMs", r.now_ms),
            RecordJson::Approval(r) => ("approval.nowMs", r.now_ms),
            RecordJson::Usage(r) => ("usage.nowMs", r.now_ms),
            RecordJson::Outcome(r) => ("outcome.nowMs", r.now_ms),
        }
    }
}

/// An error answer: a status and a message naming what is wrong.
struct ApiError(StatusCode, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, axum::Json(json!({ "error": self.1 }))).into_response()
    }
}

fn error(status: StatusCode, message: impl Into<String>) -> ApiError {
    ApiError(status, message.into())
}

fn call_error(e: crate::CallError) -> ApiError {
    use crate::bindings::warden::guard::types::PolicyError;
    let status = match &e {
        crate::CallError::Policy(PolicyError::InvalidInput(_)) => StatusCode::BAD_REQUEST,
        crate::CallError::Policy(PolicyError::NotConfigured) => StatusCode::CONFLICT,
        crate::CallError::Policy(PolicyError::Storage(_)) => StatusCode::SERVICE_UNAVAILABLE,
        crate::CallError::Policy(PolicyError::Other(_)) => StatusCode::UNPROCESSABLE_ENTITY,
        crate::CallError::Guest(_) => StatusCode::INTERNAL_SERVER_ERROR,
    };
    error(status, e.to_string())
}

/// Runs `f` on a blocking thread once a permit is free.
async fn blocking<R: Send + 'static>(
    state: &Shared,
    f: impl FnOnce(&Runtime) -> R + Send + 'static,
) -> Result<R, ApiError> {
    let _permit = state
        .permits
        .acquire()
        .await
        .map_err(|_| error(StatusCode::SERVICE_UNAVAILABLE, "the service is shutting down"))?;
    let runtime = state.runtime.clone();
    tokio::task::spawn_blocking(move || f(&runtime))
        .await
        .map_err(|e| error(StatusCode::INTERNAL_SERVER_ERROR, format!("check thread failed: {e}")))
}

/// A body as the extractor gave it: too large is 413, anything else unreadable is 400.
type Body = Result<Bytes, axum::extract::rejection::BytesRejection>;

/// Parses a request body and checks its `nowMs` against the host's clock.
fn parse<T: serde::de::DeserializeOwned + json::Timed>(state: &Shared, body: Body) -> Result<T, ApiError> {
    let body = body.map_err(|rejection| {
        let status = rejection.status();
        let message = if status == StatusCode::PAYLOAD_TOO_LARGE {
            "the request body is larger than the service accepts".to_string()
        } else {
            rejection.body_text()
        };
        error(status, message)
    })?;
    let text = std::str::from_utf8(&body)
        .map_err(|e| error(StatusCode::BAD_REQUEST, format!("the body is not UTF-8: {e}")))?;
    json::parse_request(text, state.clock).map_err(|m| error(StatusCode::BAD_REQUEST, m))
}

async fn health(State(state): State<Shared>) -> Response {
    axum::Json(json!({
        "status": "ok",
        "version": env!("CARGO_PKG_VERSION"),
        "policyVersion": state.runtime.report().policy_version,
    }))
    .into_response()
}

async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI).into_response()
}

async fn diagnostics(State(state): State<Shared>) -> Result<Response, ApiError> {
    let report = blocking(&state, |rt| rt.diagnostics()).await?.map_err(call_error)?;
    Ok(axum::Json(DiagnosticsJson::from(&report)).into_response())
}

async fn check_tool(State(state): State<Shared>, body: Body) -> Result<Response, ApiError> {
    let call: json::ToolCallJson = parse(&state, body)?;
    let call = call.into();
    let verdict = blocking(&state, move |rt| rt.check_tool_call(&call)).await?;
    Ok(axum::Json(VerdictJson::from(&verdict)).into_response())
}

async fn check_outbound(State(state): State<Shared>, body: Body) -> Result<Response, ApiError> {
    let message: json::OutboundJson = parse(&state, body)?;
    let message = message.into_wit().map_err(|e| error(StatusCode::BAD_REQUEST, e))?;
    let verdict = blocking(&state, move |rt| rt.check_outbound(&message)).await?;
    Ok(axum::Json(VerdictJson::from(&verdict)).into_response())
}

async fn check_turn(State(state): State<Shared>, body: Body) -> Result<Response, ApiError> {
    let turn: json::TurnJson = parse(&state, body)?;
    let turn = turn.into();
    let outcome = blocking(&state, move |rt| rt.check_turn(&turn)).await?;
    Ok(axum::Json(TurnOutcomeJson::from(&outcome)).into_response())
}

async fn record(State(state): State<Shared>, body: Body) -> Result<Response, ApiError> {
    let record: RecordJson = parse(&state, body)?;
    let value = blocking(&state, move |rt| -> Result<serde_json::Value, crate::CallError> {
        match record {
            RecordJson::TurnStart(s) => {
                let pin = rt.start_turn(&s.into())?;
                Ok(json!({ "recorded": "turnStart", "pin": pin.as_ref().map(json::PinStateJson::from) }))
            }
            RecordJson::TurnEnd(e) => rt.settle_turn(&e.into()).map(|_| json!({ "recorded": "turnEnd" })),
            RecordJson::Approval(a) => rt.record_approval(&a.into()).map(|_| json!({ "recorded": "approval" })),
            RecordJson::Usage(u) => rt.record_usage(&u.into()).map(|_| json!({ "recorded": "usage" })),
            RecordJson::Outcome(o) => rt.record_outcome(&o.into()).map(|_| json!({ "recorded": "outcome" })),
        }
    })
    .await?
    .map_err(call_error)?;
    Ok(axum::Json(value).into_response())
}

/// Refuses requests without the bearer token, comparing in constant time.
async fn authorize(State(state): State<Shared>, headers: HeaderMap, request: Request, next: Next) -> Response {
    let presented = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default();
    let ok: bool = presented.as_bytes().ct_eq(state.token.as_bytes()).into();
    if ok {
        next.run(request).await
    } else {
        let mut response =
            error(StatusCode::UNAUTHORIZED, "a valid `Authorization: Bearer` token is required").into_response();
        response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        response
    }
}

/// The service's routes over `runtime`.
pub fn router(runtime: Arc<Runtime>, options: &ServeOptions) -> Router {
    let state: Shared = Arc::new(AppState {
        runtime,
        token: options.token.clone(),
        permits: Semaphore::new(options.concurrency.max(1)),
        clock: options.clock,
    });
    let protected = Router::new()
        .route("/v1/openapi.json", get(openapi))
        .route("/v1/diagnostics", get(diagnostics))
        .route("/v1/check/turn", post(check_turn))
        .route("/v1/check/tool", post(check_tool))
        .route("/v1/check/outbound", post(check_outbound))
        .route("/v1/record", post(record))
        .route_layer(middleware::from_fn_with_state(state.clone(), authorize));
    Router::new()
        .route("/v1/health", get(health))
        .merge(protected)
        .fallback(|| async { error(StatusCode::NOT_FOUND, "no such endpoint; see /v1/openapi.json") })
        .layer(DefaultBodyLimit::max(options.max_body_bytes))
        .with_state(state)
}

/// Checks a bearer token before the service starts.
pub fn check_token(token: &str) -> Result<(), String> {
    let token = token.trim();
    if token.chars().count() < MIN_TOKEN_CHARS {
        return Err(format!("the bearer token must be at least {MIN_TOKEN_CHARS} characters"));
    }
    if token.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("the bearer token must not contain spaces or control characters".into());
    }
    Ok(())
}

/// Serves until the process is stopped; `ready` receives the bound address.
pub async fn serve(
    runtime: Arc<Runtime>,
    options: ServeOptions,
    listen: SocketAddr,
    ready: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(listen).await?;
    ready(listener.local_addr()?);
    let app = router(runtime.clone(), &options);
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            let _ = tokio::signal::ctrl_c().await;
            // Checks waiting on a classifier answer `cancelled` instead of holding the shutdown.
            runtime.cancel_requests();
        })
        .await
}
