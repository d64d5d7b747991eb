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

/// The hosts of a fetch call known to the flow check: named by the person in
/// this session under the call's identity, trusted (`flow.trustedHosts`) or
/// approved. The tool judge's ask rules skip the `askKinds` ask of a fetch
/// whose every host is known; other steps may ask the same.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Known {
    hosts: Vec<String>,
}

impl Known {
    pub(super) fn add(&mut self, host: &str) {
        if !self.hosts.iter().any(|h| h == host) {
            self.hosts.push(host.to_string());
        }
    }

    /// Whether `host` of this call is known (canonical: lowercase, without a trailing dot).
    pub fn host_is_known(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        self.hosts.contains(&host)
    }
}
