//! Named HTTP destinations. The host enforces them (allow-list, credentials,
//! size cap); the core validates them once and checks that every classifier
//! names one that exists. The component never sees a credential, only where
//! the host should read it from.

use crate::config::reader::{Node, Reader, Text, shorten};
use crate::prelude::*;
use serde::Serialize;

/// Most destinations a configuration may list.
pub const MAX_DESTINATIONS: usize = 32;
/// Longest destination name, in characters.
pub const MAX_NAME_CHARS: usize = 64;
/// Longest base URL, in characters.
pub const MAX_URL_CHARS: usize = 2048;
/// Smallest response size cap, in bytes.
pub const MIN_RESPONSE_BYTES: u64 = 1024;
/// Largest response size cap, in bytes (16 MiB).
pub const MAX_RESPONSE_BYTES: u64 = 16 * 1024 * 1024;
/// Default response size cap, in bytes (1 MiB).
pub const DEFAULT_RESPONSE_BYTES: u64 = 1024 * 1024;

/// Where the host reads a destination's credential from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase")]
pub struct Credential {
    /// An environment variable of the host that holds the key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub env: Option<String>,
    /// A file on the host that holds the key; reread when it changes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The header the host puts the key in.
    #[serde(default = "default_header")]
    pub header: String,
    /// Text before the key in that header; empty for none.
    #[serde(default = "default_scheme")]
    pub scheme: String,
}

fn default_header() -> String {
    "authorization".to_string()
}

fn default_scheme() -> String {
    "Bearer".to_string()
}

/// One destination the component may reach through the host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase")]
pub struct Destination {
    /// The name classifiers refer to, such as `classifier`.
    #[cfg_attr(feature = "schema", schemars(regex(pattern = r"^[a-z0-9][a-z0-9_-]{0,63}$")))]
    pub name: String,
    /// Every request must start with this URL (`http://` or `https://`).
    pub base_url: String,
    /// The key the host attaches, if the destination needs one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credential: Option<Credential>,
    /// The host refuses larger responses, in bytes.
    #[serde(default = "default_max_response_bytes")]
    #[cfg_attr(feature = "schema", schemars(range(min = MIN_RESPONSE_BYTES, max = MAX_RESPONSE_BYTES)))]
    pub max_response_bytes: u64,
}

#[cfg_attr(not(feature = "schema"), allow(dead_code))]
fn default_max_response_bytes() -> u64 {
    DEFAULT_RESPONSE_BYTES
}

fn is_destination_name(s: &str) -> bool {
    let mut chars = s.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    first_ok
        && s.len() <= MAX_NAME_CHARS
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

/// The headers a destination's credential may go in, compared without case:
/// the standard credential headers and the API-key headers of the common
/// providers. Any other header (`content-type`, `host`) would let a key
/// replace a header the request needs, or travel where it is logged.
pub const CREDENTIAL_HEADERS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "x-api-key",
    "api-key",
    "x-goog-api-key",
    "x-auth-token",
    "ocp-apim-subscription-key",
];

/// What is wrong with a base URL, if anything: the same strict form the
/// hosts' allow-lists compare (see the gateways and
/// `tests/fixtures/url-allowlist`), so a base URL that passes here is one a
/// host can match requests against.
fn base_url_problem(s: &str) -> Option<&'static str> {
    if !s.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
        return Some(
            "must hold only printable ASCII: no spaces, no control characters such as CR or LF, no non-ASCII \
             letters (write an international host name in its `xn--` form)",
        );
    }
    let Some(rest) = s.strip_prefix("https://").or_else(|| s.strip_prefix("http://")) else {
        return Some("must be an absolute `http://` or `https://` URL");
    };
    if s.contains(['?', '#']) {
        return Some("must not have a query or fragment");
    }
    if s.contains('\\') {
        return Some("must not hold a backslash");
    }
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    if authority.contains('@') {
        return Some("must not hold a user name or password (`user@`): name the key in `credential` instead");
    }
    if authority.contains('%') {
        return Some("must not percent-encode its host");
    }
    let (host, port) = match authority.strip_prefix('[') {
        Some(inner) => match inner.split_once(']') {
            Some((addr, after))
                if !addr.is_empty() && addr.bytes().all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.') =>
            {
                match after {
                    "" => ("ipv6", None),
                    p => match p.strip_prefix(':') {
                        Some(p) => ("ipv6", Some(p)),
                        None => ("", None),
                    },
                }
            }
            _ => ("", None),
        },
        None => match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        },
    };
    let name_byte = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'.';
    if host.split('.').any(str::is_empty) || !host.bytes().all(name_byte) {
        return Some(
            "must name a host: letters, digits, `-` and `.` without empty labels, or an IPv6 literal in `[...]`",
        );
    }
    if let Some(p) = port
        && (p.is_empty()
            || p.len() > 5
            || p.starts_with('0')
            || !p.bytes().all(|b| b.is_ascii_digit())
            || p.parse::<u16>().is_err())
    {
        return Some("must have a port from 1 to 65535, written without leading zeros");
    }
    path_problem(path)
}

fn path_problem(path: &str) -> Option<&'static str> {
    if path.contains(';') {
        return Some("must not hold `;` in its path");
    }
    let inner = path.strip_prefix('/').unwrap_or(path);
    let parts: Vec<&str> = inner.split('/').collect();
    for (i, seg) in parts.iter().enumerate() {
        if seg.is_empty() && i + 1 < parts.len() {
            return Some("must not have an empty path segment (`//`)");
        }
        if !seg.is_empty() && seg.bytes().all(|b| b == b'.') {
            return Some("must not have a dot segment (`.` or `..`) in its path");
        }
        let bytes = seg.as_bytes();
        let mut j = 0;
        while let Some(&b) = bytes.get(j) {
            if b == b'%' {
                let digit = |k: usize| bytes.get(k).and_then(|&d| (d as char).to_digit(16));
                let (Some(hi), Some(lo)) = (digit(j + 1), digit(j + 2)) else {
                    return Some("must write `%` only before two hex digits");
                };
                let decoded = (hi * 16 + lo) as u8;
                if matches!(decoded, b'.' | b'/' | b'\\' | b'%' | b';') || !(0x20..0x7f).contains(&decoded) {
                    return Some(
                        "must not percent-encode a dot, slash, backslash, `%`, `;`, control or non-ASCII byte in its path",
                    );
                }
                j += 3;
            } else {
                j += 1;
            }
        }
    }
    None
}

fn is_credential_header(s: &str) -> bool {
    CREDENTIAL_HEADERS.iter().any(|h| h.eq_ignore_ascii_case(s))
}

/// A credential scheme: visible ASCII without spaces (`Bearer`, `Token`), or empty.
fn is_scheme(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_graphic())
}

/// A value as an error message shows it: control characters escaped, shortened.
fn escaped(text: &str) -> String {
    let quoted = serde_json::to_string(text).unwrap_or_default();
    let inner = quoted.strip_prefix('"').and_then(|q| q.strip_suffix('"')).unwrap_or(&quoted);
    shorten(inner)
}

/// Reads a string field that `problem` checks, naming the offending value escaped.
fn checked_string(
    r: &mut Reader,
    obj: &crate::config::reader::Obj<'_>,
    key: &str,
    rule: Text,
    problem: impl Fn(&str) -> Option<String>,
) -> Option<String> {
    let node = obj.get(key)?;
    let text = r.string_value(&node, rule)?;
    match problem(&text) {
        Some(message) => {
            r.error(node.path, format!("`{}` {message}", escaped(&text)));
            None
        }
        None => Some(text),
    }
}

fn is_env_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn is_header_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

fn header_problem(s: &str) -> Option<String> {
    if !is_header_name(s) {
        return Some("must be an HTTP header name: letters, digits and `-`".to_string());
    }
    if !is_credential_header(s) {
        let allowed: Vec<String> = CREDENTIAL_HEADERS.iter().map(|h| format!("`{h}`")).collect();
        return Some(format!("is not a credential header; allowed: {}", allowed.join(", ")));
    }
    None
}

const NAME: Text = Text::non_blank(MAX_NAME_CHARS)
    .matching(is_destination_name, "must be lowercase letters, digits, `_` or `-`, starting with a letter or digit");
const URL: Text = Text::non_blank(MAX_URL_CHARS);
const ENV: Text = Text::non_blank(256).matching(is_env_name, "must be an environment variable name");
const PATH: Text = Text::non_blank(4096);
const HEADER: Text = Text::non_blank(128);
const HEADER_VALUE: Text = Text { max_chars: 64, non_blank: false, pattern: None };

/// Reads one destination.
pub fn read_destination(r: &mut Reader, node: Node<'_>) -> Option<Destination> {
    let obj = r.object(&node, &["name", "baseUrl", "credential", "maxResponseBytes"])?;
    let name = r.required_string(&obj, "name", NAME);
    let base_url = match obj.get("baseUrl") {
        Some(_) => checked_string(r, &obj, "baseUrl", URL, |s| base_url_problem(s).map(String::from)),
        None => {
            r.error(obj.path_of("baseUrl"), "is required");
            None
        }
    };
    let credential = match obj.get("credential") {
        None => None,
        Some(node) => {
            let c = r.object(&node, &["env", "file", "header", "scheme"])?;
            let env = r.optional_string(&c, "env", ENV);
            let file = r.optional_string(&c, "file", PATH);
            if c.get("env").is_some() == c.get("file").is_some() {
                r.error(node.path.clone(), "must name exactly one of `env` or `file`");
            }
            Some(Credential {
                env,
                file,
                header: checked_string(r, &c, "header", HEADER, header_problem).unwrap_or_else(default_header),
                scheme: checked_string(r, &c, "scheme", HEADER_VALUE, |s| {
                    (!is_scheme(s)).then(|| {
                        "must be visible ASCII without spaces or control characters such as CR or LF, like `Bearer`, \
                         or empty"
                            .to_string()
                    })
                })
                .unwrap_or_else(default_scheme),
            })
        }
    };
    let max_response_bytes =
        r.int(&obj, "maxResponseBytes", MIN_RESPONSE_BYTES..=MAX_RESPONSE_BYTES, DEFAULT_RESPONSE_BYTES);
    Some(Destination { name: name?, base_url: base_url?, credential, max_response_bytes })
}
