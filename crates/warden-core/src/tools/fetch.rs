//! Fetch destinations: which hosts a fetch tool may reach without asking.
//!
//! `tools.fetch` lists host globs to allow (`allowHosts`) and to deny
//! (`denyHosts`), and what happens to a host on neither list (`unlisted`:
//! `allow`, `ask` or `deny`, default `ask`). For a tool of kind `fetch`, every
//! URL in its URL fields is read down to its host; a denied host denies the
//! call (`fetch.denied-host`), a call whose hosts are all allowed (or named by
//! the person in this session) is not asked for being a fetch, and any other
//! call gets `fetch.unlisted-host` with the `unlisted` decision. The deny list
//! wins over the allow list.
//!
//! A host is compared as a browser would reach it, in the one canonical form
//! the flow step also writes hosts in (`flow::extract::extract_hosts`):
//! lowercased, without userinfo, port or trailing dot, percent-escapes
//! decoded, full-width dots and letters folded, invisible characters dropped,
//! numeric IPv4 forms (`2130706433`, `0x7f.1`, `0177.0.0.1`) and IPv4-mapped
//! IPv6 addresses written as a dotted quad, internationalized labels in
//! punycode (`bücher.de` is `xn--bcher-kva.de`). A URL that is ambiguous
//! between parsers (a `\` in its authority, a space or a control character
//! in its host) or that has no host (`file://`, `data:`) is never
//! allow-listed. A host written in Unicode matches a list entry by its
//! punycode; since a Unicode spelling may reach a denied host through a
//! mapping the fold does not know, such a host, an unreadable one, or a call
//! past `MAX_URLS`, is asked for (`fetch.unchecked-host`) even with
//! `unlisted: allow` while `denyHosts` is set.

use super::Finding;
use super::rules;
use crate::config::reader::{Node, Obj, Reader, shorten, shown};
use crate::flow::extract::extract_hosts::{canonical_host, label_char, written_in_unicode};
use crate::model::Decision;
use crate::prelude::*;
use core::net::Ipv4Addr;
use serde::Serialize;
use serde_json::Value;

/// Most host globs in `allowHosts` or `denyHosts`.
pub const MAX_HOSTS: usize = 512;
/// Longest host glob, in characters (a DNS name's longest form).
pub const MAX_HOST_CHARS: usize = 253;
/// Most URLs of one call that are read; the ones past it are not allow-listed.
pub const MAX_URLS: usize = 64;

/// What happens to a host on neither list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Unlisted {
    /// Reached without asking.
    Allow,
    /// A person approves it first.
    Ask,
    /// Refused.
    Deny,
}

impl Unlisted {
    pub fn decision(self) -> Decision {
        match self {
            Unlisted::Allow => Decision::Allow,
            Unlisted::Ask => Decision::Ask,
            Unlisted::Deny => Decision::Deny,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Unlisted::Allow => "allow",
            Unlisted::Ask => "ask",
            Unlisted::Deny => "deny",
        }
    }
}

/// A host glob: `docs.rs` is that host, `*.example.com` any host under
/// `example.com` (not `example.com` itself).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(transparent)]
pub struct HostGlob(String);

impl HostGlob {
    /// Checks and normalizes a glob: lowercase ASCII labels, an optional `*.`
    /// in front, or an IP address.
    pub fn new(text: &str) -> Result<HostGlob, String> {
        let t = text.trim();
        let (wild, rest) = match t.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, t),
        };
        if !rest.is_ascii() {
            return Err("must be ASCII; write an internationalized host in its `xn--` form".into());
        }
        if rest.contains('*') {
            return Err("may use `*` only as a whole first label, like `*.example.com`".into());
        }
        let host = match normalize_host(rest) {
            Ok(r) => r.host,
            Err(why) => return Err(format!("is not a host name: {why}")),
        };
        if wild && (host.starts_with('[') || host.parse::<Ipv4Addr>().is_ok()) {
            return Err("`*.` applies to names, not to IP addresses".into());
        }
        Ok(HostGlob(if wild { format!("*.{host}") } else { host }))
    }

    /// Whether a normalized host matches.
    pub fn matches(&self, host: &str) -> bool {
        match self.0.strip_prefix("*.") {
            Some(suffix) => {
                host.len() > suffix.len() + 1 && host.ends_with(suffix) && {
                    let cut = host.len() - suffix.len();
                    host.as_bytes().get(cut - 1) == Some(&b'.')
                }
            }
            None => self.0 == host,
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The `tools.fetch` section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase")]
pub struct FetchConfig {
    /// Hosts fetched without asking: `docs.rs`, `*.example.com`.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_HOSTS)))]
    pub allow_hosts: Vec<HostGlob>,
    /// Hosts never fetched (`fetch.denied-host`); wins over `allowHosts`.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_HOSTS)))]
    pub deny_hosts: Vec<HostGlob>,
    /// A host on neither list: `allow`, `ask` (default) or `deny` (`fetch.unlisted-host`).
    #[serde(default = "default_unlisted")]
    pub unlisted: Unlisted,
}

// Used by the schema derive, which reads serde's defaults.
#[cfg_attr(not(feature = "schema"), allow(dead_code))]
fn default_unlisted() -> Unlisted {
    Unlisted::Ask
}

pub(super) fn read(r: &mut Reader, node: &Node<'_>) -> Option<FetchConfig> {
    let obj = r.object(node, &["allowHosts", "denyHosts", "unlisted"])?;
    let allow_hosts = read_hosts(r, &obj, "allowHosts").unwrap_or_default();
    let deny_hosts = read_hosts(r, &obj, "denyHosts").unwrap_or_default();
    let unlisted = match obj.get("unlisted") {
        None => Unlisted::Ask,
        Some(n) => match n.value.as_str() {
            Some("allow") => Unlisted::Allow,
            Some("ask") => Unlisted::Ask,
            Some("deny") => Unlisted::Deny,
            _ => {
                r.error(n.path, format!("must be `allow`, `ask` or `deny`, got `{}`", shown(n.value)));
                Unlisted::Ask
            }
        },
    };
    Some(FetchConfig { allow_hosts, deny_hosts, unlisted })
}

fn read_hosts(r: &mut Reader, obj: &Obj<'_>, key: &str) -> Option<Vec<HostGlob>> {
    r.unique_list(
        obj,
        key,
        MAX_HOSTS,
        |r, n| {
            let text = r.string_value(&n, crate::config::reader::Text::non_blank(MAX_HOST_CHARS))?;
            match HostGlob::new(&text) {
                Ok(g) => Some(g),
                Err(why) => {
                    r.error(n.path, format!("`{}` {why}", shorten(&text)));
                    None
                }
            }
        },
        "host",
        "",
        |g| g.0.clone(),
    )
}

/// What the fetch step decided about a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Every host is allow-listed or named by the person: not asked for being a fetch.
    Allowed,
    /// An objection (`fetch.denied-host` or `fetch.unlisted-host`).
    Finding(Finding),
    /// Unlisted hosts with `unlisted: allow`.
    Unlisted,
}

/// The URLs in a call's URL fields (strings, or lists of strings).
fn urls<'a>(fields: &[String], args: &'a Value) -> Vec<&'a str> {
    let mut out = Vec::new();
    for f in fields {
        match args.get(f.as_str()) {
            Some(Value::String(s)) => out.push(s.as_str()),
            Some(Value::Array(items)) => out.extend(items.iter().filter_map(Value::as_str)),
            _ => {}
        }
    }
    out
}

/// Judges the hosts of a fetch call. `named` answers whether the person
/// named a host in their own words this session.
pub fn check(config: &FetchConfig, url_fields: &[String], args: &Value, named: &dyn Fn(&str) -> bool) -> Outcome {
    let urls = urls(url_fields, args);
    let mut unlisted: Option<String> = None;
    // Why a URL could not be compared with `denyHosts` as the host it reaches.
    let mut unchecked: Option<String> = None;
    if urls.is_empty() {
        unlisted = Some("it names no URL".into());
    }
    if urls.len() > MAX_URLS {
        let why = format!("it names {} URLs, more than the {MAX_URLS} that are read", urls.len());
        unchecked = Some(why.clone());
        unlisted = Some(why);
    }
    for url in urls.iter().take(MAX_URLS) {
        let reached = match reach(url) {
            Ok(r) => r,
            Err(why) => {
                let why = format!("`{}` {why}", shorten(url));
                unchecked.get_or_insert_with(|| why.clone());
                unlisted.get_or_insert(why);
                continue;
            }
        };
        let host = reached.host;
        if let Some(g) = config.deny_hosts.iter().find(|g| g.matches(&host)) {
            return Outcome::Finding(Finding {
                rule: rules::FETCH_DENIED_HOST,
                reason: format!("`{}` is denied by `denyHosts` (`{}`).", shorten(&host), g.as_str()),
            });
        }
        let listed = config.allow_hosts.iter().any(|g| g.matches(&host)) || named(&host);
        if !listed {
            unlisted.get_or_insert_with(|| format!("`{}` is not in `allowHosts`", shorten(&host)));
            if reached.unicode {
                unchecked.get_or_insert_with(|| {
                    format!("`{}` is written in Unicode, which may spell a denied host another way", shorten(url))
                });
            }
        }
    }
    match unlisted {
        None => Outcome::Allowed,
        Some(_) if config.unlisted == Unlisted::Allow => match unchecked.filter(|_| !config.deny_hosts.is_empty()) {
            Some(why) => Outcome::Finding(Finding {
                rule: rules::FETCH_UNCHECKED_HOST,
                reason: format!("This fetch cannot be checked against `denyHosts`: {why}."),
            }),
            None => Outcome::Unlisted,
        },
        Some(why) => Outcome::Finding(Finding {
            rule: rules::FETCH_UNLISTED_HOST,
            reason: format!("This fetch is not allow-listed: {why}."),
        }),
    }
}

/// The host a URL reaches, normalized, or why it has none that can be trusted.
pub fn url_host(url: &str) -> Result<String, &'static str> {
    reach(url).map(|r| r.host)
}

fn reach(url: &str) -> Result<Reached, &'static str> {
    // Browsers drop tabs and newlines anywhere and spaces at the ends.
    let cleaned: String = url.trim().chars().filter(|c| !matches!(c, '\t' | '\n' | '\r')).collect();
    let rest = match scheme_of(&cleaned) {
        Some((scheme, rest)) => {
            if !matches!(scheme.as_str(), "http" | "https" | "ws" | "wss") {
                return Err("has no web host");
            }
            // `https:evil.com` and `https:///evil.com` reach `evil.com` in a browser.
            rest.trim_start_matches('/')
        }
        None => cleaned.strip_prefix("//").unwrap_or(&cleaned),
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = rest.get(..end).unwrap_or_default();
    if authority.contains('\\') {
        return Err("has a `\\` in its host part, which parsers read differently");
    }
    // Userinfo ends at the last `@`.
    let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if hostport.starts_with('[') {
        let close = hostport.find(']').ok_or("has an unclosed `[`")?;
        check_port(hostport.get(close + 1..).unwrap_or_default())?;
        hostport.get(..=close).unwrap_or_default()
    } else {
        match hostport.rsplit_once(':') {
            Some((h, port)) => {
                check_port(&format!(":{port}"))?;
                h
            }
            None => hostport,
        }
    };
    normalize_host(host)
}

fn scheme_of(text: &str) -> Option<(String, &str)> {
    let colon = text.find(':')?;
    let scheme = text.get(..colon)?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    if !first.is_ascii_alphabetic() || !chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')) {
        return None;
    }
    let rest = text.get(colon + 1..)?;
    // `host:8080/x` is a host and a port, not a scheme.
    if !rest.starts_with("//") && rest.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    Some((scheme.to_ascii_lowercase(), rest))
}

fn check_port(text: &str) -> Result<(), &'static str> {
    match text.strip_prefix(':') {
        None if text.is_empty() => Ok(()),
        Some(p) if p.bytes().all(|b| b.is_ascii_digit()) && p.len() <= 5 => Ok(()),
        _ => Err("has a port that is not a number"),
    }
}

/// A host as it is compared, and whether it was written in Unicode.
struct Reached {
    host: String,
    unicode: bool,
}

/// The canonical form of a host (see [`canonical_host`]) after its
/// percent-escapes are decoded, or why it is not a host.
fn normalize_host(host: &str) -> Result<Reached, &'static str> {
    let decoded = percent_decode(host)?;
    let mut work = 0;
    match canonical_host(&decoded, &mut work) {
        Some(canonical) => Ok(Reached { host: canonical, unicode: written_in_unicode(&decoded) }),
        None => Err(unreadable(&decoded)),
    }
}

/// Why a decoded host has no canonical form.
fn unreadable(host: &str) -> &'static str {
    let host = host.strip_suffix('.').unwrap_or(host);
    if host.is_empty() {
        return "has an empty host";
    }
    if host.starts_with('[') {
        return "has an IPv6 address that cannot be read";
    }
    if host.chars().any(|c| c.is_control() || c.is_whitespace() || (c.is_ascii() && !label_char(c) && c != '.')) {
        return "has a character no host holds";
    }
    if host.split('.').any(str::is_empty) {
        return "has an empty label";
    }
    if host.rsplit('.').next().is_some_and(|last| last.starts_with(|c: char| c.is_ascii_digit())) {
        return "ends in a number but is not an IPv4 address";
    }
    if host.split('.').any(|l| l.starts_with('-') || l.ends_with('-')) {
        return "has a label that starts or ends with `-`";
    }
    "is not a host name (too long, or a character no host holds)"
}

fn percent_decode(text: &str) -> Result<String, &'static str> {
    if !text.contains('%') {
        return Ok(text.to_string());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = bytes.get(i + 1..i + 3).and_then(|h| core::str::from_utf8(h).ok());
            let v = hex.and_then(|h| u8::from_str_radix(h, 16).ok()).ok_or("has a broken percent-escape")?;
            out.push(v);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "has percent-escapes that are not UTF-8")
}
