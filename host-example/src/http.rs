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

    /// Whether any destination is allowed: without one, every request is
    /// refused at once and a call never waits on the network.
    pub fn reaches_anything(&self) -> bool {
        !self.destinations.is_empty()
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

    /// One warning for each destination whose credential cannot be read now:
    /// an environment variable that is unset or empty, a key file that is
    /// missing, unreadable or empty. Requests to it would fail with
    /// `missing-credential`.
    pub fn credential_warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (i, dest) in self.destinations.iter().enumerate() {
            let Some(credential) = &dest.credential else { continue };
            if self.key(credential).is_some() {
                continue;
            }
            let (field, value, what) = match (&credential.env, &credential.file) {
                (Some(var), _) => ("env", var.clone(), "is not set in this environment, or is empty"),
                (None, Some(file)) => ("file", file.display().to_string(), "cannot be read, or is empty"),
                (None, None) => continue,
            };
            out.push(format!(
                "destinations[{i}].credential.{field}: `{value}` {what}; requests to `{}` will fail with \
                 `missing-credential`",
                dest.name
            ));
        }
        out
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

/// Longest request URL the gateway accepts, in bytes (8 KiB).
pub const MAX_URL_BYTES: usize = 8 * 1024;

/// A URL in the one strict form the gateway sends: what the allow-list compares.
#[derive(Debug, PartialEq, Eq)]
struct StrictUrl {
    /// `http` or `https`, lowercase.
    scheme: String,
    /// The host, lowercase; an IPv6 literal keeps its brackets.
    host: String,
    /// The port, the scheme's default when none is written.
    port: u16,
    /// The path's segments, each percent-decoded once; a trailing slash adds none.
    segments: Vec<Vec<u8>>,
    has_query: bool,
}

/// Parses `url` in the strict form, or `None` for anything else: bytes
/// outside printable ASCII, a backslash or a fragment anywhere, another
/// scheme, userinfo or a percent sign in the authority, a host or port in
/// any but the plain form, `;` in the path, a percent-escape that does not
/// decode to an ordinary byte (see [`decode_segment`]), or a segment that is
/// empty (except after a trailing slash) or only dots.
fn parse_strict(url: &str) -> Option<StrictUrl> {
    if url.len() > MAX_URL_BYTES || !url.bytes().all(|b| (0x21..=0x7e).contains(&b)) || url.contains(['\\', '#']) {
        return None;
    }
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, rest) = rest.split_at(end);
    let (host, port) = host_port(authority)?;
    let (path, has_query) = match rest.split_once('?') {
        Some((path, _)) => (path, true),
        None => (rest, false),
    };
    Some(StrictUrl { scheme, host, port: port.unwrap_or(default_port), segments: segments(path)?, has_query })
}

fn host_port(authority: &str) -> Option<(String, Option<u16>)> {
    if authority.contains(['@', '%']) {
        return None;
    }
    let (host, port) = if let Some(inner) = authority.strip_prefix('[') {
        let (addr, after) = inner.split_once(']')?;
        if addr.is_empty() || !addr.bytes().all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.') {
            return None;
        }
        let port = if after.is_empty() { None } else { Some(after.strip_prefix(':')?) };
        (format!("[{}]", addr.to_ascii_lowercase()), port)
    } else {
        let (host, port) = match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        };
        let name_byte = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'.';
        if host.split('.').any(str::is_empty) || !host.bytes().all(name_byte) {
            return None;
        }
        (host.to_ascii_lowercase(), port)
    };
    let port = match port {
        None => None,
        Some(p) => Some(port_number(p)?),
    };
    Some((host, port))
}

/// A port written plainly: 1 to 65535, digits only, no leading zero.
fn port_number(p: &str) -> Option<u16> {
    if p.is_empty() || p.len() > 5 || p.starts_with('0') || !p.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    p.parse().ok()
}

fn segments(path: &str) -> Option<Vec<Vec<u8>>> {
    if path.is_empty() {
        return Some(Vec::new());
    }
    let inner = path.strip_prefix('/')?;
    if inner.contains(';') {
        return None;
    }
    let parts: Vec<&str> = inner.split('/').collect();
    let mut out = Vec::with_capacity(parts.len());
    for (i, raw) in parts.iter().enumerate() {
        if raw.is_empty() {
            if i + 1 == parts.len() {
                break;
            }
            return None;
        }
        let segment = decode_segment(raw)?;
        if segment.iter().all(|&b| b == b'.') {
            return None;
        }
        out.push(segment);
    }
    Some(out)
}

/// Decodes the percent-escapes of one segment once. An escape must be two
/// hex digits and must not decode to a dot, slash, backslash, percent sign
/// (double encoding), semicolon, control byte or non-ASCII byte: a server
/// could resolve any of those into another path.
fn decode_segment(raw: &str) -> Option<Vec<u8>> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b != b'%' {
            out.push(b);
            i += 1;
            continue;
        }
        let (hi, lo) = (hex(*bytes.get(i + 1)?)?, hex(*bytes.get(i + 2)?)?);
        let decoded = hi << 4 | lo;
        if matches!(decoded, b'.' | b'/' | b'\\' | b'%' | b';') || !(0x20..0x7f).contains(&decoded) {
            return None;
        }
        out.push(decoded);
        i += 3;
    }
    Some(out)
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// Whether `url` lies inside `base`: both in the strict form, the same
/// scheme, host and port, the base without a query, and the base's decoded
/// segments a prefix of the URL's.
pub fn within(base: &str, url: &str) -> bool {
    let (Some(base), Some(url)) = (parse_strict(base), parse_strict(url)) else {
        return false;
    };
    !base.has_query
        && base.scheme == url.scheme
        && base.host == url.host
        && base.port == url.port
        && url.segments.starts_with(&base.segments)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shared table every host's gateway runs.
    const CASES: &str = include_str!("../../tests/fixtures/url-allowlist/cases.json");

    #[test]
    fn every_url_in_the_shared_table_gets_its_expected_answer() {
        let doc: serde_json::Value = serde_json::from_str(CASES).expect("the table is JSON");
        assert_eq!(doc["maxUrlBytes"].as_u64(), Some(MAX_URL_BYTES as u64));
        let cases = doc["cases"].as_array().expect("cases");
        let mut wrong = Vec::new();
        for case in cases {
            let (base, mut url) =
                (case["base"].as_str().unwrap_or_default(), case["url"].as_str().unwrap_or_default().to_string());
            if let Some(n) = case["padTo"].as_u64() {
                while url.len() < n as usize {
                    url.push('a');
                }
            }
            let expected = case["allow"].as_bool();
            if Some(within(base, &url)) != expected {
                wrong.push(format!("{}: {base} {url:?}", case["name"]));
            }
        }
        assert!(wrong.is_empty(), "wrong answers:\n{}", wrong.join("\n"));
        assert!(cases.len() > 90, "the table has {} cases", cases.len());
    }

    #[test]
    fn a_header_or_key_with_control_characters_is_a_transport_error_without_connecting() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let base = format!("http://127.0.0.1:{}/v1", listener.local_addr().expect("address").port());
        let key = tempfile::NamedTempFile::new().expect("key file");
        std::fs::write(key.path(), "sk-1\r\nx-evil: 1\n").expect("write key");
        let dest = |name: &str, credential: Option<CredentialSpec>| DestinationSpec {
            name: name.into(),
            base_url: base.clone(),
            credential,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
        };
        let keyed = CredentialSpec {
            env: None,
            file: Some(key.path().to_path_buf()),
            header: default_header(),
            scheme: default_scheme(),
        };
        let gateway = HttpGateway::new(vec![dest("open", None), dest("keyed", Some(keyed))]);
        let request = |destination: &str, headers: Vec<(String, String)>| Request {
            destination: destination.into(),
            method: Method::Get,
            url: format!("{base}/x"),
            headers,
            body: Vec::new(),
            timeout_ms: 1000,
        };
        for headers in [
            vec![("x-a".to_string(), "b\r\nx-evil: 1".to_string())],
            vec![("x-a".to_string(), "b\0".to_string())],
            vec![("x a".to_string(), "b".to_string())],
        ] {
            let out = gateway.send(&request("open", headers.clone()));
            assert!(matches!(out, Err(HttpError::Transport(_))), "{headers:?}: {out:?}");
        }
        let out = gateway.send(&request("keyed", Vec::new()));
        assert!(matches!(out, Err(HttpError::Transport(_))), "a key with CR LF is never sent: {out:?}");
        assert!(listener.accept().is_err(), "no connection was made");
    }
}
