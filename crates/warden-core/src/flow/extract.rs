//! Destination-like values in text: what a message, a share, an invitation, a
//! payment or a fetch could be sent to.
//!
//! Every value comes out in one canonical form, so the same destination
//! written two ways (`Bob@Example.COM` and `bob@example.com`, an IBAN with or
//! without spaces) compares equal wherever it is seen: in a tool's result, in
//! the person's own message, or in a call's argument.

use crate::prelude::*;

/// What kind of destination a value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ValueKind {
    /// `name@domain`, lowercased.
    Email,
    /// A phone number, as `+` and digits.
    Phone,
    /// The host of a URL or a bare domain, lowercased, without a trailing dot.
    Host,
    /// An IBAN, uppercased, without spaces.
    Iban,
    /// A bank account number that is not an IBAN.
    Account,
    /// A chat or user handle (`@name`, `<@U123>`).
    Handle,
}

impl ValueKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ValueKind::Email => "email",
            ValueKind::Phone => "phone",
            ValueKind::Host => "host",
            ValueKind::Iban => "iban",
            ValueKind::Account => "account",
            ValueKind::Handle => "handle",
        }
    }
}

/// One destination-like value, in canonical form.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Found {
    pub kind: ValueKind,
    /// The canonical text; this is what is hashed and compared.
    pub value: String,
}

/// Every destination-like value in `text`, canonical, without repeats, in the
/// order first seen, at most `limit` of them.
pub fn extract(text: &str, limit: usize) -> Vec<Found> {
    let mut out: Vec<Found> = Vec::new();
    for word in text.split(|c: char| c.is_whitespace() || matches!(c, '<' | '>' | '"' | '\'' | ',' | ';' | '(' | ')')) {
        if out.len() >= limit {
            break;
        }
        if let Some(found) = destination(word)
            && !out.contains(&found)
        {
            out.push(found);
        }
    }
    out
}

/// The canonical form of one value a call names as a destination (a
/// recipient argument), or `None` when it holds nothing destination-like.
pub fn destination(text: &str) -> Option<Found> {
    let word = text.trim().trim_end_matches(['.', ':', '!', '?']);
    if let Some(rest) = word.strip_prefix("https://").or_else(|| word.strip_prefix("http://")) {
        let host = rest.split(['/', '?', '#', ':']).next().unwrap_or_default();
        return (!host.is_empty()).then(|| Found { kind: ValueKind::Host, value: host.to_ascii_lowercase() });
    }
    let (local, domain) = word.split_once('@')?;
    if local.is_empty() || !domain.contains('.') {
        return None;
    }
    Some(Found { kind: ValueKind::Email, value: word.to_ascii_lowercase() })
}

/// The hosts of the links in `text` (URLs with a scheme and bare domains),
/// canonical, without repeats, at most `limit`.
pub fn link_hosts(text: &str, limit: usize) -> Vec<String> {
    extract(text, usize::MAX).into_iter().filter(|f| f.kind == ValueKind::Host).map(|f| f.value).take(limit).collect()
}
