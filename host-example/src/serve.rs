//! `warden serve`: the checks as a JSON HTTP service, for runtimes that cannot
//! embed the component.
//!
//! Every endpoint but `GET /v1/health` requires `Authorization: Bearer TOKEN`
//! (the scheme in any case, as HTTP says; the token compared in constant
//! time); `GET /v1/health` names the policy version only to a client that
//! sends the token. Request bodies over the size limit are refused with 413,
//! malformed JSON with 400 and a message naming the field. At most
//! `max_connections` connections are open at once (the next one is answered
//! 503 and closed), and at most `max_inflight_body_bytes` of request bodies
//! are being read or checked at once (a request that would pass it is
//! answered 503 before its body is read). Checks run against the runtime's
//! instance pool, at most `concurrency` at a time, so concurrent requests are
//! served in parallel without unbounded instance growth. A check of a body
//! of at most [`INLINE_MAX_BODY_BYTES`] whose runtime can wait only on this
//! machine (no HTTP destination allowed, local storage: see
//! [`Runtime::waits_only_on_this_machine`]) runs on the async worker that read
//! it: handing it to a blocking thread and back costs more than the typical
//! check itself. Such a check holds its worker for its guest CPU time, which the
//! analyser's limits keep to milliseconds on bodies that size and
//! [`crate::runtime::Limits::cpu`] bounds in any case, plus any wait for
//! SQLite's write lock held by another process (at most
//! [`crate::storage::BUSY_TIMEOUT`]). Every other call runs on a blocking
//! thread. A `nowMs` far from the host's clock ([`crate::clock`]) is refused
//! with 400 unless the service runs with `--replay`. The OpenAPI document is
//! `host-example/openapi.json`, also served at
//! `GET /v1/openapi.json`.
//!
//! Live policy: the service holds its runtime behind a swappable cell. Each
//! request takes the runtime in force once and uses it to the end, so a
//! request in flight during a reload finishes under the old policy; the old
//! runtime's pooled instances write their counts when its last request
//! drops it. A new policy comes from the configuration file (polled every
//! [`CONFIG_POLL_MS`], compared by content digest) or from `PUT /v1/policy`
//! with the admin token. Either way it is validated by configuring a new
//! runtime over the same storage first; an invalid one is refused with every
//! error and the old one stays (fail-safe: the policy in force never
//! lapses). A policy set by `PUT` is not written to the file: the file is the
//! source again only once its content changes.

use crate::clock::Clock;
use crate::json::{self, DiagnosticsJson, TurnOutcomeJson, VerdictJson};
use crate::runtime::{Runtime, StartError};
use axum::Router;
use axum::body::{Bytes, HttpBody};
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use serde::Deserialize;
use serde_json::json;
use sha2::{Digest, Sha256};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex, RwLock};
use std::task::{Context, Poll};
use std::time::Duration;
use subtle::ConstantTimeEq;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Default largest request body, in bytes (1 MiB).
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;
/// Default number of checks that run at the same time.
pub const DEFAULT_CONCURRENCY: usize = 8;
/// Default number of connections open at the same time.
pub const DEFAULT_MAX_CONNECTIONS: usize = 64;
/// Default total of request body bytes being read or checked at the same time (16 MiB).
pub const DEFAULT_MAX_INFLIGHT_BODY_BYTES: usize = 16 * 1024 * 1024;
/// Largest `max_inflight_body_bytes` accepted (4 GiB - 1).
pub const MAX_INFLIGHT_BODY_BYTES: usize = u32::MAX as usize;
/// How long a connection over the limit is given to read its 503 answer.
const REFUSAL_TIMEOUT: Duration = Duration::from_secs(1);
/// Shortest bearer token accepted, in characters.
pub const MIN_TOKEN_CHARS: usize = 16;
/// How often the configuration file is read for changes, in milliseconds.
pub const CONFIG_POLL_MS: u64 = 1000;

/// The OpenAPI document of this service.
pub const OPENAPI: &str = include_str!("../openapi.json");

/// Every route: method and path. The OpenAPI document must describe exactly these.
pub const ROUTES: &[(&str, &str)] = &[
    ("get", "/v1/health"),
    ("put", "/v1/policy"),
    ("get", "/v1/openapi.json"),
    ("get", "/v1/diagnostics"),
    ("post", "/v1/check/turn"),
    ("post", "/v1/check/tool"),
    ("post", "/v1/check/outbound"),
    ("post", "/v1/check/tool-result"),
    ("post", "/v1/record"),
    ("post", "/v1/audit-config"),
    ("post", "/v1/scan"),
    ("get", "/"),
    ("get", "/inbox"),
    ("get", "/inbox.js"),
    ("get", "/v1/asks"),
    ("post", "/v1/asks/{id}"),
    ("get", "/v1/asks/recent"),
    ("get", "/v1/gate/status"),
    ("post", "/v1/gate/consent"),
    ("post", "/v1/gate/opt-out"),
    ("post", "/v1/gate/revoke"),
    ("post", "/v1/gate/variables"),
];

/// The approval inbox page and its script: static, holding no data, so they
/// are served without the token; everything they show comes from the JSON
/// routes, which require it.
pub const INBOX_HTML: &str = include_str!("inbox/inbox.html");
/// The inbox page's script.
pub const INBOX_JS: &str = include_str!("inbox/inbox.js");
/// The inbox page's content security policy: its own script only, no inline
/// script, no framing, requests only to this service.
pub const INBOX_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; \
                              img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// How the service runs.
pub struct ServeOptions {
    pub token: String,
    /// Largest request body, in bytes (at least 1).
    pub max_body_bytes: usize,
    /// Checks that run at the same time.
    pub concurrency: usize,
    /// Connections open at the same time (at least 1).
    pub max_connections: usize,
    /// Request body bytes read or checked at the same time (at least `max_body_bytes`).
    pub max_inflight_body_bytes: usize,
    /// Which request times (`nowMs`) are accepted; `--replay` accepts any.
    pub clock: Clock,
    /// The token `PUT /v1/policy` requires (`--admin-token-file`); without
    /// it the route answers 403 to everyone. Must differ from `token`.
    pub admin_token: Option<String>,
    /// The configuration file to watch for a new policy; `None` watches nothing.
    pub config_file: Option<PathBuf>,
}

impl ServeOptions {
    /// Options with `token` and every limit at its default.
    pub fn new(token: impl Into<String>) -> ServeOptions {
        ServeOptions {
            token: token.into(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            concurrency: DEFAULT_CONCURRENCY,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_inflight_body_bytes: DEFAULT_MAX_INFLIGHT_BODY_BYTES,
            clock: Clock::LIVE,
            admin_token: None,
            config_file: None,
        }
    }

    /// Refuses limits the service cannot work with, naming the flag.
    pub fn check(&self) -> Result<(), String> {
        if self.max_body_bytes == 0 {
            return Err("`--max-body-bytes` must be at least 1: a limit of `0` would refuse every request".into());
        }
        if self.max_connections == 0 {
            return Err("`--max-connections` must be at least 1: a limit of `0` would refuse every connection".into());
        }
        if self.max_inflight_body_bytes > MAX_INFLIGHT_BODY_BYTES {
            return Err(format!(
                "`--max-inflight-body-bytes` must be at most {MAX_INFLIGHT_BODY_BYTES}; got `{}`",
                self.max_inflight_body_bytes
            ));
        }
        if let Some(admin) = &self.admin_token {
            check_token(admin).map_err(|m| format!("`--admin-token-file`: {m}"))?;
            if admin.trim() == self.token.trim() {
                return Err("`--admin-token-file` must hold a different token than the bearer token: clients hold \
                            the bearer token, and it must not be enough to change the policy"
                    .into());
            }
        }
        if self.max_inflight_body_bytes < self.max_body_bytes {
            return Err(format!(
                "`--max-inflight-body-bytes` (`{}`) must be at least `--max-body-bytes` (`{}`): a body of the largest \
                 size could never be read",
                self.max_inflight_body_bytes, self.max_body_bytes
            ));
        }
        Ok(())
    }
}

struct AppState {
    /// The runtime in force; a reload swaps it.
    runtime: RwLock<Arc<Runtime>>,
    /// Held while a new policy is validated and swapped in, so reloads run one at a time.
    reloading: Mutex<()>,
    token_digest: [u8; 32],
    admin_digest: Option<[u8; 32]>,
    permits: Semaphore,
    max_body_bytes: usize,
    max_inflight_body_bytes: usize,
    body_bytes: Arc<Semaphore>,
    clock: Clock,
}

type Shared = Arc<AppState>;

impl AppState {
    /// The runtime in force, for one request.
    fn current(&self) -> Arc<Runtime> {
        match self.runtime.read() {
            Ok(runtime) => runtime.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// The policy version in force.
    fn policy_version(&self) -> String {
        match self.runtime.read() {
            Ok(runtime) => runtime.report().policy_version.clone(),
            Err(poisoned) => poisoned.into_inner().report().policy_version.clone(),
        }
    }

    /// Validates `config` by configuring a new runtime with it, then swaps
    /// it in; answers the old and new policy versions. An invalid `config`
    /// changes nothing. Blocks: call it on a blocking thread.
    fn reload(&self, config: &str, source: &str) -> Result<(String, String), StartError> {
        let _one_at_a_time = self.reloading.lock().unwrap_or_else(|p| p.into_inner());
        let old = self.current();
        let new = Arc::new(old.reconfigured(config)?);
        let versions = (old.report().policy_version.clone(), new.report().policy_version.clone());
        match self.runtime.write() {
            Ok(mut slot) => *slot = new,
            Err(poisoned) => *poisoned.into_inner() = new,
        }
        eprintln!("warden: policy reloaded: {} -> {} (from {source})", versions.0, versions.1);
        Ok(versions)
    }
}

/// A refused configuration on one line: every error's path and message.
fn one_line(e: &StartError) -> String {
    match e {
        StartError::Config(errors) => {
            let shown: Vec<String> = errors
                .iter()
                .take(crate::runtime::MAX_SHOWN_CONFIG_ERRORS)
                .map(|(path, message)| if path.is_empty() { message.clone() } else { format!("{path}: {message}") })
                .collect();
            let rest = errors.len().saturating_sub(shown.len());
            let more = if rest > 0 { format!("; and {rest} more") } else { String::new() };
            format!("{} error(s): {}{more}", errors.len(), shown.join("; "))
        }
        StartError::Load(_) => e.to_string().replace('\n', " "),
    }
}

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

/// Largest request body whose check may run on the async worker that read it, in bytes.
pub const INLINE_MAX_BODY_BYTES: usize = 16 * 1024;

/// Runs `f` once a permit is free: on this async worker for a check of a
/// request body of `inline_body` bytes, at most [`INLINE_MAX_BODY_BYTES`],
/// whose runtime can wait only on this machine; else on a blocking thread.
async fn on_runtime<R: Send + 'static>(
    state: &Shared,
    inline_body: Option<usize>,
    f: impl FnOnce(&Runtime) -> R + Send + 'static,
) -> Result<R, ApiError> {
    let _permit = state
        .permits
        .acquire()
        .await
        .map_err(|_| error(StatusCode::SERVICE_UNAVAILABLE, "the service is shutting down"))?;
    let runtime = state.current();
    if inline_body.is_some_and(|n| n <= INLINE_MAX_BODY_BYTES) && runtime.waits_only_on_this_machine() {
        // A panic is answered as a failed blocking thread's is, not by dropping the connection.
        return std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&runtime)))
            .map_err(|_| error(StatusCode::INTERNAL_SERVER_ERROR, "check thread failed: the check panicked"));
    }
    tokio::task::spawn_blocking(move || f(&runtime))
        .await
        .map_err(|e| error(StatusCode::INTERNAL_SERVER_ERROR, format!("check thread failed: {e}")))
}

/// Runs a check of a `body_bytes` long request (see [`on_runtime`]).
async fn quick<R: Send + 'static>(
    state: &Shared,
    body_bytes: usize,
    f: impl FnOnce(&Runtime) -> R + Send + 'static,
) -> Result<R, ApiError> {
    on_runtime(state, Some(body_bytes), f).await
}

/// Runs `f` on a blocking thread once a permit is free.
async fn blocking<R: Send + 'static>(
    state: &Shared,
    f: impl FnOnce(&Runtime) -> R + Send + 'static,
) -> Result<R, ApiError> {
    on_runtime(state, None, f).await
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

/// `POST /v1/audit-config`: `{"runtime": "openclaw" | "hermes" | "claude-code", "text": "..."}` answers
/// `{"findings": [...]}`, as `warden audit-config --json` prints them.
async fn audit_config(State(state): State<Shared>, body: Body) -> Result<Response, ApiError> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct AuditRequest {
        runtime: String,
        text: String,
    }
    let body = body.map_err(|rejection| error(rejection.status(), rejection.body_text()))?;
    let mut de = serde_json::Deserializer::from_slice(&body);
    let request: AuditRequest =
        serde_path_to_error::deserialize(&mut de).map_err(|e| error(StatusCode::BAD_REQUEST, e.to_string()))?;
    let runtime = crate::cli::harden::parse_runtime(&request.runtime).map_err(|m| error(StatusCode::BAD_REQUEST, m))?;
    let findings = blocking(&state, move |rt| rt.audit_config(runtime, &request.text)).await?.map_err(call_error)?;
    let findings: Vec<_> = findings.iter().map(crate::cli::harden::FindingJson::from).collect();
    Ok(axum::Json(json!({ "findings": findings })).into_response())
}

/// `ok` and Warden's version to anyone; the policy version only with the token.
async fn health(State(state): State<Shared>, headers: HeaderMap) -> Response {
    let mut body = json!({ "status": "ok", "version": env!("CARGO_PKG_VERSION") });
    if authorized(&state, &headers) {
        body["policyVersion"] = json!(state.policy_version());
    }
    axum::Json(body).into_response()
}

/// `PUT /v1/policy`: the body is a whole configuration. With the admin token
/// it is validated and swapped in (200 with the old and new versions), or
/// refused with every error (400), the policy in force unchanged. The
/// bearer token is not enough (403); without `--admin-token-file` the route
/// answers 403 to everyone. The file is not written.
async fn put_policy(State(state): State<Shared>, headers: HeaderMap, body: Body) -> Result<Response, ApiError> {
    let Some(admin) = state.admin_digest else {
        return Err(error(
            StatusCode::FORBIDDEN,
            "policy updates over HTTP are off: start `warden serve` with `--admin-token-file` to allow them",
        ));
    };
    let Some(presented) = presented_digest(&headers) else {
        let mut response =
            error(StatusCode::UNAUTHORIZED, "the admin token is required as `Authorization: Bearer`").into_response();
        response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return Ok(response);
    };
    if !bool::from(presented.ct_eq(&admin)) {
        return Err(error(StatusCode::FORBIDDEN, "changing the policy requires the admin token, not the bearer token"));
    }
    let body = body.map_err(|rejection| error(rejection.status(), rejection.body_text()))?;
    let text = String::from_utf8(body.to_vec())
        .map_err(|e| error(StatusCode::BAD_REQUEST, format!("the body is not UTF-8: {e}")))?;
    let _permit = state
        .permits
        .acquire()
        .await
        .map_err(|_| error(StatusCode::SERVICE_UNAVAILABLE, "the service is shutting down"))?;
    let shared = state.clone();
    let outcome = tokio::task::spawn_blocking(move || shared.reload(&text, "PUT /v1/policy"))
        .await
        .map_err(|e| error(StatusCode::INTERNAL_SERVER_ERROR, format!("reload thread failed: {e}")))?;
    match outcome {
        Ok((old, new)) => Ok(axum::Json(json!({ "previousVersion": old, "policyVersion": new })).into_response()),
        Err(StartError::Config(errors)) => {
            let message = one_line(&StartError::Config(errors.clone()));
            let errors: Vec<_> =
                errors.iter().map(|(path, message)| json!({"path": path, "message": message})).collect();
            eprintln!("warden: policy from PUT /v1/policy refused, the policy in force stays: {message}");
            Ok((
                StatusCode::BAD_REQUEST,
                axum::Json(json!({
                    "error": format!("the configuration is refused; the policy in force stays: {message}"),
                    "errors": errors,
                    "policyVersion": state.policy_version(),
                })),
            )
                .into_response())
        }
        Err(e) => Err(error(StatusCode::INTERNAL_SERVER_ERROR, format!("the policy in force stays: {e}"))),
    }
}

/// Polls `path` every [`CONFIG_POLL_MS`] and swaps in each new content that
/// is a valid configuration; content seen before (valid or not) is not read
/// again, so an invalid edit is reported once and a policy set by `PUT`
/// stays until the file changes.
async fn watch_config(state: Shared, path: PathBuf, mut seen: Result<[u8; 32], String>) {
    let mut tick = tokio::time::interval(Duration::from_millis(CONFIG_POLL_MS));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let file = path.clone();
        let read = tokio::task::spawn_blocking(move || std::fs::read(file))
            .await
            .unwrap_or_else(|e| Err(std::io::Error::other(e.to_string())));
        let now: Result<[u8; 32], String> = match &read {
            Ok(bytes) => Ok(Sha256::digest(bytes).into()),
            Err(e) => Err(e.to_string()),
        };
        if now == seen {
            continue;
        }
        seen = now;
        let shown = path.display().to_string();
        let bytes = match read {
            Ok(bytes) => bytes,
            Err(e) => {
                eprintln!("warden: cannot read the configuration {shown}: {e}; the policy in force stays");
                continue;
            }
        };
        let Ok(text) = String::from_utf8(bytes) else {
            eprintln!("warden: the configuration {shown} is not UTF-8; the policy in force stays");
            continue;
        };
        let shared = state.clone();
        let source = shown.clone();
        match tokio::task::spawn_blocking(move || shared.reload(&text, &source)).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => eprintln!(
                "warden: the configuration {shown} is refused, the policy in force stays ({}): {}",
                state.policy_version(),
                one_line(&e)
            ),
            Err(e) => eprintln!("warden: reloading {shown} failed: {e}; the policy in force stays"),
        }
    }
}

async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI).into_response()
}

async fn diagnostics(State(state): State<Shared>) -> Result<Response, ApiError> {
    let report = blocking(&state, |rt| rt.diagnostics()).await?.map_err(call_error)?;
    Ok(axum::Json(DiagnosticsJson::from(&report)).into_response())
}

/// `POST /v1/scan`: `{"documents": [{"name", "kind", "text"}]}` in, `{"findings", "truncated"}` out.
async fn scan(State(state): State<Shared>, body: Body) -> Result<Response, ApiError> {
    use crate::bindings::exports::warden::guard::scan::Document;
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Request {
        documents: Vec<DocumentJson>,
    }
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct DocumentJson {
        name: String,
        kind: crate::cli::ScanKind,
        text: String,
    }
    let body = body.map_err(|rejection| error(rejection.status(), rejection.body_text()))?;
    let request: Request = serde_json::from_slice(&body).map_err(|e| error(StatusCode::BAD_REQUEST, e.to_string()))?;
    let documents: Vec<Document> =
        request.documents.into_iter().map(|d| Document { name: d.name, kind: d.kind.into(), text: d.text }).collect();
    let report = blocking(&state, move |rt| rt.scan_documents(&documents)).await?.map_err(call_error)?;
    let findings: Vec<serde_json::Value> = report.findings.iter().map(crate::cli::scan_finding_json).collect();
    Ok(axum::Json(serde_json::json!({"findings": findings, "truncated": report.truncated})).into_response())
}

async fn check_tool(State(state): State<Shared>, body: Body) -> Result<Response, ApiError> {
    let size = body.as_ref().map_or(0, Bytes::len);
    let call: json::ToolCallJson = parse(&state, body)?;
    let call = call.into();
    let verdict = quick(&state, size, move |rt| rt.check_tool_call(&call)).await?;
    Ok(axum::Json(VerdictJson::from(&verdict)).into_response())
}

async fn check_outbound(State(state): State<Shared>, body: Body) -> Result<Response, ApiError> {
    let size = body.as_ref().map_or(0, Bytes::len);
    let message: json::OutboundJson = parse(&state, body)?;
    let message = message.into_wit().map_err(|e| error(StatusCode::BAD_REQUEST, e))?;
    let verdict = quick(&state, size, move |rt| rt.check_outbound(&message)).await?;
    Ok(axum::Json(VerdictJson::from(&verdict)).into_response())
}

async fn check_tool_result(State(state): State<Shared>, body: Body) -> Result<Response, ApiError> {
    let size = body.as_ref().map_or(0, Bytes::len);
    let result: json::ToolResultJson = parse(&state, body)?;
    let result = result.into();
    let observation = quick(&state, size, move |rt| rt.observe_tool_result(&result)).await?.map_err(call_error)?;
    Ok(axum::Json(json::ObservationJson::from(&observation)).into_response())
}

async fn check_turn(State(state): State<Shared>, body: Body) -> Result<Response, ApiError> {
    let size = body.as_ref().map_or(0, Bytes::len);
    let turn: json::TurnJson = parse(&state, body)?;
    let turn = turn.into();
    let outcome = quick(&state, size, move |rt| rt.check_turn(&turn)).await?;
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

fn page(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CONTENT_SECURITY_POLICY, INBOX_CSP),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
}

async fn inbox_page() -> Response {
    page("text/html; charset=utf-8", INBOX_HTML)
}

async fn inbox_script() -> Response {
    page("text/javascript; charset=utf-8", INBOX_JS)
}

fn ask_error(e: crate::runtime::AskCallError) -> ApiError {
    use crate::bindings::exports::warden::guard::asks::AskError;
    use crate::runtime::AskCallError as E;
    let status = match &e {
        E::Ask(AskError::UnknownAsk(_)) => StatusCode::NOT_FOUND,
        E::Ask(AskError::Expired(_)) => StatusCode::GONE,
        E::Ask(AskError::ScopeTooBroad(_) | AskError::InvalidInput(_)) => StatusCode::BAD_REQUEST,
        E::Ask(AskError::NotConfigured) => StatusCode::CONFLICT,
        E::Ask(AskError::Storage(_)) => StatusCode::SERVICE_UNAVAILABLE,
        E::Ask(AskError::Other(_)) => StatusCode::UNPROCESSABLE_ENTITY,
        E::Guest(_) => StatusCode::INTERNAL_SERVER_ERROR,
    };
    error(status, e.to_string())
}

/// `GET /v1/asks?limit=N&before=MS`: the pending asks, newest first.
async fn asks_list(
    State(state): State<Shared>,
    query: Result<axum::extract::Query<AsksQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let axum::extract::Query(query) = query.map_err(|e| error(StatusCode::BAD_REQUEST, e.body_text()))?;
    let limit = query.limit.unwrap_or(crate::cli::asks::DEFAULT_LIST_LIMIT);
    let now = crate::json::now_ms();
    let asks = blocking(&state, move |rt| rt.asks_list(limit, query.before, now)).await?.map_err(ask_error)?;
    let asks: Vec<_> = asks.iter().map(crate::cli::asks::PendingAskJson::from).collect();
    Ok(axum::Json(json!({ "asks": asks })).into_response())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AsksQuery {
    limit: Option<u32>,
    before: Option<u64>,
}

/// `GET /v1/asks/recent`: the answered asks, newest first.
async fn asks_recent(State(state): State<Shared>) -> Result<Response, ApiError> {
    let recent = blocking(&state, |rt| rt.asks_recent(crate::cli::asks::RECENT_LIMIT)).await?.map_err(ask_error)?;
    let recent: Vec<_> = recent.iter().map(crate::cli::asks::AnsweredAskJson::from).collect();
    Ok(axum::Json(json!({ "recent": recent })).into_response())
}

/// `POST /v1/asks/{id}`: `{"answer": "allow" | "deny", "scope": "once" | "session" | "always"}`.
async fn asks_answer(
    State(state): State<Shared>,
    axum::extract::Path(id): axum::extract::Path<String>,
    body: Body,
) -> Result<Response, ApiError> {
    use crate::bindings::exports::warden::guard::asks::AskAnswer;
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct AnswerJson {
        answer: AnswerWord,
        scope: json::ScopeJson,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum AnswerWord {
        Allow,
        Deny,
    }
    let body = body.map_err(|rejection| error(rejection.status(), rejection.body_text()))?;
    let mut de = serde_json::Deserializer::from_slice(&body);
    let request: AnswerJson =
        serde_path_to_error::deserialize(&mut de).map_err(|e| error(StatusCode::BAD_REQUEST, e.to_string()))?;
    let answer = AskAnswer {
        allow: matches!(request.answer, AnswerWord::Allow),
        scope: request.scope.into(),
        now_ms: crate::json::now_ms(),
    };
    let answered = blocking(&state, move |rt| rt.asks_answer(&id, answer)).await?.map_err(ask_error)?;
    Ok(axum::Json(json!({ "answered": crate::cli::asks::AnsweredAskJson::from(&answered) })).into_response())
}

/// `GET /v1/gate/status`: the consent ledger's summary, as `warden gate status --json` prints it.
async fn gate_status(State(state): State<Shared>) -> Result<Response, ApiError> {
    let status = blocking(&state, |rt| rt.gate(|g, s| g.call_status(s))).await?.map_err(call_error)?;
    Ok(axum::Json(json::GateStatusJson::from(&status)).into_response())
}

/// `POST /v1/gate/consent`, as `warden gate consent` records it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ConsentJson {
    channel: String,
    recipient: String,
    offset: Option<String>,
    how: Option<String>,
    now_ms: Option<u64>,
    idempotency_key: Option<String>,
}

/// `POST /v1/gate/opt-out`, as `warden gate optout` records it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct OptOutJson {
    recipient: String,
    now_ms: Option<u64>,
    idempotency_key: Option<String>,
}

/// `POST /v1/gate/revoke`, as `warden gate revoke` records it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RevokeJson {
    channel: String,
    recipient: String,
    now_ms: Option<u64>,
    idempotency_key: Option<String>,
}

/// `POST /v1/gate/variables`, as `warden gate variables` records it: `variables` replaces the stored ones.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct VariablesJson {
    channel: String,
    recipient: String,
    variables: std::collections::BTreeMap<String, String>,
    now_ms: Option<u64>,
    idempotency_key: Option<String>,
}

impl json::Timed for ConsentJson {
    fn request_time(&self) -> (&'static str, Option<u64>) {
        ("nowMs", self.now_ms)
    }
}
impl json::Timed for OptOutJson {
    fn request_time(&self) -> (&'static str, Option<u64>) {
        ("nowMs", self.now_ms)
    }
}
impl json::Timed for RevokeJson {
    fn request_time(&self) -> (&'static str, Option<u64>) {
        ("nowMs", self.now_ms)
    }
}
impl json::Timed for VariablesJson {
    fn request_time(&self) -> (&'static str, Option<u64>) {
        ("nowMs", self.now_ms)
    }
}

async fn gate_consent(State(state): State<Shared>, body: Body) -> Result<Response, ApiError> {
    let r: ConsentJson = parse(&state, body)?;
    let now = r.now_ms.unwrap_or_else(crate::json::now_ms);
    let channel = r.channel.clone();
    blocking(&state, move |rt| {
        rt.gate(|g, s| {
            let (offset, how, key) = (r.offset.as_deref(), r.how.as_deref(), r.idempotency_key.as_deref());
            g.call_consent(s, &r.channel, &r.recipient, offset, how, now, key)
        })
    })
    .await?
    .map_err(call_error)?;
    Ok(axum::Json(json!({"recorded": "consent", "channel": channel})).into_response())
}

async fn gate_opt_out(State(state): State<Shared>, body: Body) -> Result<Response, ApiError> {
    let r: OptOutJson = parse(&state, body)?;
    let now = r.now_ms.unwrap_or_else(crate::json::now_ms);
    blocking(&state, move |rt| rt.gate(|g, s| g.call_opt_out(s, &r.recipient, now, r.idempotency_key.as_deref())))
        .await?
        .map_err(call_error)?;
    Ok(axum::Json(json!({"recorded": "optout"})).into_response())
}

async fn gate_revoke(State(state): State<Shared>, body: Body) -> Result<Response, ApiError> {
    let r: RevokeJson = parse(&state, body)?;
    let now = r.now_ms.unwrap_or_else(crate::json::now_ms);
    let channel = r.channel.clone();
    let had = blocking(&state, move |rt| {
        rt.gate(|g, s| g.call_revoke(s, &r.channel, &r.recipient, now, r.idempotency_key.as_deref()))
    })
    .await?
    .map_err(call_error)?;
    Ok(axum::Json(json!({"recorded": "revoke", "channel": channel, "hadConsent": had})).into_response())
}

async fn gate_variables(State(state): State<Shared>, body: Body) -> Result<Response, ApiError> {
    let r: VariablesJson = parse(&state, body)?;
    let now = r.now_ms.unwrap_or_else(crate::json::now_ms);
    let channel = r.channel.clone();
    let count = r.variables.len();
    blocking(&state, move |rt| {
        let variables: Vec<(String, String)> = r.variables.into_iter().collect();
        rt.gate(|g, s| g.call_set_variables(s, &r.channel, &r.recipient, &variables, now, r.idempotency_key.as_deref()))
    })
    .await?
    .map_err(call_error)?;
    Ok(axum::Json(json!({"recorded": "variables", "channel": channel, "variables": count})).into_response())
}

/// The token of an `Authorization` value in the `Bearer` scheme, the scheme
/// in any case and one or more spaces before the token (RFC 9110, 11.4).
pub fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, rest) = value.split_once(' ')?;
    let token = rest.trim_start_matches(' ');
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// Whether the request carries the service's token. Both sides are hashed
/// first, so the comparison takes the same time whatever the length or
/// content of what was presented.
fn authorized(state: &AppState, headers: &HeaderMap) -> bool {
    let Some(digest) = presented_digest(headers) else { return false };
    digest.ct_eq(&state.token_digest).into()
}

/// The digest of the request's bearer token, if it sends one.
fn presented_digest(headers: &HeaderMap) -> Option<[u8; 32]> {
    let presented = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(bearer_token)?;
    Some(Sha256::digest(presented.as_bytes()).into())
}

/// Reserves the request's body bytes (its declared length, or the largest
/// body for a body of unknown length) from the in-flight budget until the
/// answer is sent; a request the budget cannot hold now is answered 503.
async fn body_budget(State(state): State<Shared>, request: Request, next: Next) -> Response {
    let hint = request.body().size_hint();
    if hint.lower() > state.max_body_bytes as u64 {
        return error(StatusCode::PAYLOAD_TOO_LARGE, "the request body is larger than the service accepts")
            .into_response();
    }
    let wanted = hint.exact().unwrap_or(state.max_body_bytes as u64).min(state.max_body_bytes as u64) as u32;
    if wanted == 0 {
        return next.run(request).await;
    }
    let Ok(_reserved) = state.body_bytes.clone().try_acquire_many_owned(wanted) else {
        let message = format!(
            "the service is already reading or checking {} bytes of request bodies, as many as it accepts at once; \
             retry shortly",
            state.max_inflight_body_bytes
        );
        let mut response = error(StatusCode::SERVICE_UNAVAILABLE, message).into_response();
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        return response;
    };
    next.run(request).await
}

/// Refuses requests without the bearer token.
async fn authorize(State(state): State<Shared>, headers: HeaderMap, request: Request, next: Next) -> Response {
    if authorized(&state, &headers) {
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
    routes(shared_state(runtime, options))
}

fn shared_state(runtime: Arc<Runtime>, options: &ServeOptions) -> Shared {
    Arc::new(AppState {
        runtime: RwLock::new(runtime),
        reloading: Mutex::new(()),
        token_digest: Sha256::digest(options.token.as_bytes()).into(),
        admin_digest: options.admin_token.as_ref().map(|t| Sha256::digest(t.trim().as_bytes()).into()),
        permits: Semaphore::new(options.concurrency.max(1)),
        max_body_bytes: options.max_body_bytes,
        max_inflight_body_bytes: options.max_inflight_body_bytes,
        body_bytes: Arc::new(Semaphore::new(options.max_inflight_body_bytes.min(MAX_INFLIGHT_BODY_BYTES))),
        clock: options.clock,
    })
}

fn routes(state: Shared) -> Router {
    let max_body_bytes = state.max_body_bytes;
    let protected = Router::new()
        .route("/v1/openapi.json", get(openapi))
        .route("/v1/diagnostics", get(diagnostics))
        .route("/v1/check/turn", post(check_turn))
        .route("/v1/check/tool", post(check_tool))
        .route("/v1/check/outbound", post(check_outbound))
        .route("/v1/check/tool-result", post(check_tool_result))
        .route("/v1/record", post(record))
        .route("/v1/audit-config", post(audit_config))
        .route("/v1/scan", post(scan))
        .route("/v1/asks", get(asks_list))
        .route("/v1/asks/recent", get(asks_recent))
        .route("/v1/asks/{id}", post(asks_answer))
        .route("/v1/gate/status", get(gate_status))
        .route("/v1/gate/consent", post(gate_consent))
        .route("/v1/gate/opt-out", post(gate_opt_out))
        .route("/v1/gate/revoke", post(gate_revoke))
        .route("/v1/gate/variables", post(gate_variables))
        .route_layer(middleware::from_fn_with_state(state.clone(), authorize));
    Router::new()
        .route("/v1/health", get(health))
        .route("/v1/policy", put(put_policy))
        .route("/", get(inbox_page))
        .route("/inbox", get(inbox_page))
        .route("/inbox.js", get(inbox_script))
        .merge(protected)
        .fallback(|| async { error(StatusCode::NOT_FOUND, "no such endpoint; see /v1/openapi.json") })
        .layer(middleware::from_fn_with_state(state.clone(), body_budget))
        .layer(DefaultBodyLimit::max(max_body_bytes))
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
    options.check().map_err(std::io::Error::other)?;
    let listener = TcpListener::bind(listen).await?;
    ready(listener.local_addr()?);
    let state = shared_state(runtime.clone(), &options);
    if let Some(path) = options.config_file.clone() {
        let seen = Ok(Sha256::digest(runtime.config_text().as_bytes()).into());
        tokio::spawn(watch_config(state.clone(), path, seen));
    }
    drop(runtime);
    let app = routes(state.clone());
    let listener = LimitedListener {
        inner: listener,
        open: Arc::new(Semaphore::new(options.max_connections)),
        max_connections: options.max_connections,
    };
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            let _ = tokio::signal::ctrl_c().await;
            // Checks waiting on a classifier answer `cancelled` instead of holding the shutdown.
            match state.runtime.read() {
                Ok(runtime) => runtime.cancel_requests(),
                Err(poisoned) => poisoned.into_inner().cancel_requests(),
            }
        })
        .await
}

/// A listener that keeps at most `max_connections` connections open: the
/// next one is answered 503 and closed without reaching the service.
struct LimitedListener {
    inner: TcpListener,
    open: Arc<Semaphore>,
    max_connections: usize,
}

/// A connection that holds one of the listener's places until it closes.
struct LimitedStream {
    stream: TcpStream,
    _place: OwnedSemaphorePermit,
}

impl axum::serve::Listener for LimitedListener {
    type Io = LimitedStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let (stream, addr) = axum::serve::Listener::accept(&mut self.inner).await;
            match self.open.clone().try_acquire_owned() {
                Ok(place) => return (LimitedStream { stream, _place: place }, addr),
                Err(_) => {
                    tokio::spawn(refuse_connection(stream, self.max_connections));
                }
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

/// Answers a connection over the limit with 503, then closes it.
async fn refuse_connection(mut stream: TcpStream, max_connections: usize) {
    let body = json!({
        "error": format!("the service has {max_connections} connections open, as many as it accepts; retry shortly")
    })
    .to_string();
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         retry-after: 1\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(REFUSAL_TIMEOUT, async {
        stream.write_all(answer.as_bytes()).await?;
        stream.shutdown().await?;
        // Read what the client sent, so closing does not reset the connection before it reads the answer.
        let mut sink = [0u8; 4096];
        while stream.read(&mut sink).await? > 0 {}
        Ok::<(), std::io::Error>(())
    })
    .await;
}

impl AsyncRead for LimitedStream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for LimitedStream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}
