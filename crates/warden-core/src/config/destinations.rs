//! Named HTTP destinations. The host enforces them (allow-list, credentials,
//! size cap); the core validates them once and checks that every classifier
//! names one that exists. The component never sees a credential, only where
//! the host should read it from.

use crate::config::reader::{Node, Reader, Text};
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

fn is_base_url(s: &str) -> bool {
    let rest = s.strip_prefix("https://").or_else(|| s.strip_prefix("http://"));
    rest.is_some_and(|r| {
        let host = r.split('/').next().unwrap_or_default();
        !host.is_empty() && !s.chars().any(|c| c.is_whitespace() || c == '?' || c == '#')
    })
}

fn is_env_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn is_header_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

const NAME: Text = Text::non_blank(MAX_NAME_CHARS)
    .matching(is_destination_name, "must be lowercase letters, digits, `_` or `-`, starting with a letter or digit");
const URL: Text = Text::non_blank(MAX_URL_CHARS)
    .matching(is_base_url, "must be an absolute `http://` or `https://` URL without query or fragment");
const ENV: Text = Text::non_blank(256).matching(is_env_name, "must be an environment variable name");
const PATH: Text = Text::non_blank(4096);
const HEADER: Text = Text::non_blank(128).matching(is_header_name, "must be an HTTP header name");
const SCHEME: Text = Text { max_chars: 64, non_blank: false, pattern: None };

/// Reads one destination.
pub fn read_destination(r: &mut Reader, node: Node<'_>) -> Option<Destination> {
    let obj = r.object(&node, &["name", "baseUrl", "credential", "maxResponseBytes"])?;
    let name = r.required_string(&obj, "name", NAME);
    let base_url = r.required_string(&obj, "baseUrl", URL);
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
                header: r.optional_string(&c, "header", HEADER).unwrap_or_else(default_header),
                scheme: r.optional_string(&c, "scheme", SCHEME).unwrap_or_else(default_scheme),
            })
        }
    };
    let max_response_bytes =
        r.int(&obj, "maxResponseBytes", MIN_RESPONSE_BYTES..=MAX_RESPONSE_BYTES, DEFAULT_RESPONSE_BYTES);
    Some(Destination { name: name?, base_url: base_url?, credential, max_response_bytes })
}
