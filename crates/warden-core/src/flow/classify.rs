//! The class of one destination: where it came from, strongest first.
//!
//! A value the person named is named even when it was also seen in a tool's
//! result: planting a value the person already gave changes nothing about
//! who chose it.

use super::config::FlowConfig;
use super::record::{FlowKey, Session, Source};
use crate::prelude::*;

/// Where a destination came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Class {
    /// The person named it in this session, under the same identity.
    Named,
    /// The consent ledger holds a consent for it on the tool's channel.
    Consented,
    /// `flow.trusted` (or, for hosts, `flow.trustedHosts`) lists it.
    Trusted,
    /// A person approved an ask about it (this session or always).
    Approved,
    /// Seen only in content the agent read, last in this source.
    Untrusted(Source),
    /// None of these.
    Unknown,
}

impl Class {
    /// Whether the class passes the destination on to the other checks.
    pub fn passes(&self) -> bool {
        matches!(self, Class::Named | Class::Consented | Class::Trusted | Class::Approved)
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            Class::Named => "named",
            Class::Consented => "consented",
            Class::Trusted => "trusted",
            Class::Approved => "approved",
            Class::Untrusted(_) => "untrusted",
            Class::Unknown => "unknown",
        }
    }
}

/// What classing needs: the settings, the key, the session's record, who is
/// asking and the values approved `always`.
pub struct Context<'a> {
    pub config: &'a FlowConfig,
    pub key: &'a FlowKey,
    pub session: &'a Session,
    /// The identity hash of the call.
    pub identity: String,
    pub always: &'a [String],
}

impl Context<'_> {
    /// Whether the person named the value with hash `h` under this identity.
    pub fn named(&self, h: &str) -> bool {
        self.session.find(h).is_some_and(|v| v.named.iter().any(|(who, _)| *who == self.identity))
    }

    /// The class of a canonical destination, `consented` already looked up.
    pub fn class(&self, canonical: &str, consented: bool, host: bool) -> Class {
        let h = self.key.value(canonical);
        if self.named(&h) {
            return Class::Named;
        }
        if consented {
            return Class::Consented;
        }
        let trusted =
            if host { self.config.host_is_trusted(canonical) } else { self.config.destination_is_trusted(canonical) };
        if trusted {
            return Class::Trusted;
        }
        let value = self.session.find(&h);
        if value.is_some_and(|v| v.approved.is_some()) || self.always.contains(&h) {
            return Class::Approved;
        }
        match value.and_then(|v| v.seen.clone()) {
            Some((source, _)) => Class::Untrusted(source),
            None => Class::Unknown,
        }
    }
}

/// Whether a host is known to a fetch: named by the person in this session
/// under the same identity, or trusted. The tool judge's ask rules skip the
/// `askKinds` ask of a fetch whose every host is known.
pub struct Known<'a> {
    context: Option<&'a Context<'a>>,
    config: Option<&'a FlowConfig>,
}

impl<'a> Known<'a> {
    /// Nothing is known (the flow check is off).
    pub fn none() -> Known<'static> {
        Known { context: None, config: None }
    }

    pub fn new(context: &'a Context<'a>) -> Known<'a> {
        Known { context: Some(context), config: Some(context.config) }
    }

    /// Whether `host` (canonical: lowercase, no trailing dot) is named or trusted.
    pub fn host_is_known(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        if self.config.is_some_and(|c| c.host_is_trusted(&host)) {
            return true;
        }
        self.context.is_some_and(|c| c.named(&c.key.value(&host)))
    }
}
