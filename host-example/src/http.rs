//! The host side of the `http` import: an allow-listed gateway.
//!
//! The component names a destination and a URL; the gateway refuses anything
//! outside that destination's base URL before any connection is attempted,
//! attaches the destination's credential itself (from an environment variable
//! or a key file that is reread when it changes), enforces the request's
//! timeout and caps the response size. The component never sees a key.

use crate::bindings::warden::guard::http::{HttpError, Method, Request, Response};
use serde::Deserialize;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// Longest timeout a request may ask for.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(60);
/// Most requests of one `send-all` batch that run at the same time.
pub const MAX_CONCURRENT: usize = 32;
/// Largest request body, in bytes (4 MiB).
pub const MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;
/// How often a waiting request looks whether the host cancelled it.
pub const CANCEL_POLL: Duration = Duration::from_millis(10);
/// Default response size cap, in bytes, when a destination sets none.
pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 1024 * 1024;

/// Headers the component may never set: credentials belong to the host.
const RESERVED_HEADERS: &[&str] = &["authorization", "proxy-authorization", "cookie", "host", "content-length"];

/// Where the host reads a destination's key from.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct CredentialSpec {
    pub env: Option<String>,
    pub file: Option<PathBuf>,
    #[serde(default = "default_header")]
    pub header: String,
    #[serde(default = "default_scheme")]
    pub scheme: String,
}

fn default_header() -> String {
    "authorization".into()
}

fn default_scheme() -> String {
    "Bearer".into()
}

fn default_max_response_bytes() -> u64 {
    DEFAULT_MAX_RESPONSE_BYTES
}

/// One allowed destination, as the configuration's `destinations` lists it.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct DestinationSpec {
    pub name: String,
    pub base_url: String,
    pub credential: Option<CredentialSpec>,
    #[serde(default = "default_max_response_bytes")]
    pub max_response_bytes: u64,
}

/// A key read from a file, with what identified the file's version.
struct FileKey {
    modified: Option<SystemTime>,
    len: u64,
    key: String,
}

/// The allow-listed HTTP client behind the `http` import.
pub struct HttpGateway {
    agent: ureq::Agent,
    destinations: Vec<DestinationSpec>,
    file_keys: Mutex<HashMap<PathBuf, FileKey>>,
    cancelled: Arc<AtomicBool>,
}

impl HttpGateway {
    /// A gateway that allows exactly `destinations`.
    pub fn new(destinations: Vec<DestinationSpec>) -> HttpGateway {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_global(Some(MAX_TIMEOUT))
            .build()
            .into();
        HttpGateway {
            agent,
            destinations,
            file_keys: Mutex::new(HashMap::new()),
            cancelled: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Cancels every request in flight and refuses new ones with `cancelled`
    /// (the host is stopping, or the session ended), until [`resume`](Self::resume).
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
    }

    /// Lets requests run again after [`cancel`](Self::cancel).
    pub fn resume(&self) {
        self.cancelled.store(false, Ordering::SeqCst);
    }

    /// Reads the `destinations` section of a configuration the component accepted.
    pub fn from_config(config: &serde_json::Value) -> Result<HttpGateway, String> {
        let list = match config.get("destinations") {
            None => Vec::new(),
            Some(v) => serde_json::from_value(v.clone()).map_err(|e| format!("destinations: {e}"))?,
        };
        Ok(HttpGateway::new(list))
    }

    /// The destination `name` if `url` lies inside its base URL.
    fn allowed(&self, name: &str, url: &str) -> Option<&DestinationSpec> {
        let dest = self.destinations.iter().find(|d| d.name == name)?;
        within(&dest.base_url, url).then_some(dest)
    }

    fn key(&self, credential: &CredentialSpec) -> Option<String> {
        if let Some(var) = &credential.env {
            return std::env::var(var).ok().map(|k| k.trim().to_string()).filter(|k| !k.is_empty());
        }
        let path = credential.file.as_ref()?;
        let meta = std::fs::metadata(path).ok()?;
        let modified = meta.modified().ok();
        let mut cache = self.file_keys.lock().ok()?;
        if let Some(cached) = cache.get(path)
            && cached.modified == modified
            && cached.len == meta.len()
        {
            return Some(cached.key.clone());
        }
        let key = std::fs::read_to_string(path).ok()?.trim().to_string();
        if key.is_empty() {
            cache.remove(path);
            return None;
        }
        cache.insert(path.clone(), FileKey { modified, len: meta.len(), key: key.clone() });
        Some(key)
    }

    /// Sends one request.
    pub fn send(&self, req: &Request) -> Result<Response, HttpError> {
        let Some(dest) = self.allowed(&req.destination, &req.url) else {
            return Err(HttpError::Denied);
        };
        if req.body.len() > MAX_REQUEST_BYTES {
            return Err(HttpError::TooLarge);
        }
        let credential = match &dest.credential {
            None => None,
            Some(c) => match self.key(c) {
                Some(key) => Some((c.header.clone(), join_scheme(&c.scheme, &key))),
                None => return Err(HttpError::MissingCredential),
            },
        };
        let timeout = Duration::from_millis(u64::from(req.timeout_ms)).min(MAX_TIMEOUT);
        if timeout.is_zero() {
            return Err(HttpError::Timeout);
        }
        let mut builder = http_builder(req.method, &req.url);
        for (name, value) in &req.headers {
            let lower = name.to_ascii_lowercase();
            let reserved = RESERVED_HEADERS.contains(&lower.as_str())
                || credential.as_ref().is_some_and(|(h, _)| h.eq_ignore_ascii_case(name));
            if !reserved {
                builder = builder.header(name.as_str(), value.as_str());
            }
        }
        if let Some((header, value)) = &credential {
            builder = builder.header(header.as_str(), value.as_str());
        }
        let request =
            builder.body(req.body.clone()).map_err(|e| HttpError::Transport(format!("invalid request: {e}")))?;
        let request = self.agent.configure_request(request).timeout_global(Some(timeout)).build();
        if self.cancelled.load(Ordering::SeqCst) {
            return Err(HttpError::Cancelled);
        }
        // The exchange runs on its own thread so that a cancellation answers
        // at once; the abandoned exchange still ends within its timeout.
        let (agent, limit) = (self.agent.clone(), dest.max_response_bytes);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("warden-http".into())
            .spawn(move || {
                let _ = tx.send(exchange(&agent, request, limit));
            })
            .map_err(|e| HttpError::Transport(format!("cannot start the request thread: {e}")))?;
        loop {
            match rx.recv_timeout(CANCEL_POLL) {
                Ok(answer) => return answer,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) if self.cancelled.load(Ordering::SeqCst) => {
                    return Err(HttpError::Cancelled);
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => continue,
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(HttpError::Transport("the request thread stopped".into()));
                }
            }
        }
    }

    /// Sends every request concurrently, answers in request order.
    pub fn send_all(&self, reqs: &[Request]) -> Vec<Result<Response, HttpError>> {
        let mut out = Vec::with_capacity(reqs.len());
        for chunk in reqs.chunks(MAX_CONCURRENT) {
            std::thread::scope(|scope| {
                let handles: Vec<_> = chunk
                    .iter()
                    .map(|r| std::thread::Builder::new().spawn_scoped(scope, move || self.send(r)))
                    .collect();
                for handle in handles {
                    out.push(match handle {
                        Ok(h) => h.join().unwrap_or_else(|_| Err(HttpError::Transport("request thread failed".into()))),
                        Err(e) => Err(HttpError::Transport(format!("cannot start request thread: {e}"))),
                    });
                }
            });
        }
        out
    }
}

/// One exchange: send, then read the body up to `limit` bytes.
fn exchange(agent: &ureq::Agent, request: ureq::http::Request<Vec<u8>>, limit: u64) -> Result<Response, HttpError> {
    let mut response = agent.run(request).map_err(transport)?;
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .filter_map(|(k, v)| Some((k.as_str().to_string(), v.to_str().ok()?.to_string())))
        .collect();
    let body = response.body_mut().with_config().limit(limit).read_to_vec().map_err(transport)?;
    Ok(Response { status, headers, body })
}

fn http_builder(method: Method, url: &str) -> ureq::http::request::Builder {
    let m = match method {
        Method::Get => "GET",
        Method::Post => "POST",
        Method::Put => "PUT",
        Method::Delete => "DELETE",
    };
    ureq::http::Request::builder().method(m).uri(url)
}

fn join_scheme(scheme: &str, key: &str) -> String {
    if scheme.is_empty() { key.to_string() } else { format!("{scheme} {key}") }
}

fn transport(e: ureq::Error) -> HttpError {
    match e {
        ureq::Error::Timeout(_) => HttpError::Timeout,
        ureq::Error::BodyExceedsLimit(_) => HttpError::TooLarge,
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => HttpError::Timeout,
        other => HttpError::Transport(other.to_string()),
    }
}

/// Whether `url` lies inside `base`: the same prefix ending at a path
/// boundary, and no dot segments that a server could resolve outside it.
pub fn within(base: &str, url: &str) -> bool {
    let base = base.trim_end_matches('/');
    let Some(rest) = url.strip_prefix(base) else {
        return false;
    };
    let boundary = rest.is_empty() || rest.starts_with('/') || rest.starts_with('?');
    let path = rest.split(['?', '#']).next().unwrap_or_default();
    let dot_segment = path.split('/').any(|seg| {
        seg == "." || seg == ".." || seg.eq_ignore_ascii_case("%2e") || seg.to_ascii_lowercase().contains("%2e%2e")
    });
    boundary && !dot_segment && !url.contains('\\') && !url.contains('@')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_must_stay_inside_the_destination_base() {
        let cases = [
            ("http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1/chat/completions", true),
            ("http://127.0.0.1:9/v1/", "http://127.0.0.1:9/v1/chat", true),
            ("http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1", true),
            ("http://127.0.0.1:9/v1", "http://127.0.0.1:9/v10/chat", false),
            ("http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1/../admin", false),
            ("http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1/%2e%2e/admin", false),
            ("http://api.example", "http://api.example.evil.test/x", false),
            ("http://api.example", "http://api.example@evil.test/x", false),
            ("http://api.example", "https://api.example/x", false),
        ];
        for (base, url, expected) in cases {
            assert_eq!(within(base, url), expected, "{base} {url}");
        }
    }
}
