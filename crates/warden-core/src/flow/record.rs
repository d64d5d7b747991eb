//! What the flow check stores: per session, the keyed hashes of the values
//! seen in untrusted content, named by the person or approved, and the asks
//! waiting for an answer; across sessions, the values approved `always`.
//!
//! Values are stored only as HMAC-SHA-256 (truncated to 128 bits) under a
//! key derived from the host's approval secret (`set-host-context`) and a
//! salt stored once in the `meta` record. With an approval secret, someone
//! who reads the storage but not the host's secret cannot tell which values
//! were seen or named, nor confirm a guess. Without one (a host that never
//! declared a context), the key is derived from the stored salt alone: the
//! storage still shows no value to someone browsing it, but anyone holding
//! it can confirm guesses. Tool names, times and session digests are stored
//! in clear. A record hashed under another key (the secret changed) is read
//! as empty: its values become unknown, which asks by default.
//!
//! Layout, namespace [`NAMESPACE`]: `meta` (the salt), `s/<session digest>`
//! (one record per session), `always` (values approved for every session).

use crate::digest::{MacKey, hex, hmac, sha256_hex};
use crate::ports::{Condition, Storage, StorageError};
use crate::prelude::*;
use crate::store;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Storage namespace of the flow check.
pub const NAMESPACE: &str = "flow";
/// Key of the salt record.
pub const META_KEY: &str = "meta";
/// Key of the values approved for every session.
pub const ALWAYS_KEY: &str = "always";
/// Prefix of session records: `s/<first 32 hex of SHA-256 of the session ID>`.
pub const SESSION_PREFIX: &str = "s/";
/// Most asks of one session waiting for an answer; the oldest is dropped first.
pub const MAX_PENDING_ASKS: usize = 32;
/// Most destinations one waiting ask remembers.
pub const MAX_PENDING_VALUES: usize = 64;
/// Most values approved `always`; the oldest are evicted first.
pub const MAX_ALWAYS_VALUES: usize = 1024;
/// Most identities that named one value in a session; the oldest is dropped first.
pub const MAX_NAMERS_PER_VALUE: usize = 8;
/// Longest tool name kept to name where a value came from, in characters.
pub const MAX_SOURCE_CHARS: usize = 128;

const KEYED_LABEL: &[u8] = b"warden/flow/value-key/v1";
const UNKEYED_LABEL: &[u8] = b"warden/flow/value-key/v1/unkeyed";

/// Where an untrusted value was seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "kind", content = "tool")]
pub enum Source {
    /// The result of this tool.
    Tool(String),
    /// A peer agent's turn.
    Peer,
    /// An automation's turn.
    Automation,
    /// A message of someone else in the turn's channel context.
    Channel,
}

impl Source {
    /// How a reason names it.
    pub fn describe(&self) -> String {
        match self {
            Source::Tool(t) => format!("the result of `{}`", crate::config::reader::Shortened(t)),
            Source::Peer => "a peer agent's message".into(),
            Source::Automation => "an automation's message".into(),
            Source::Channel => "a channel message written by someone else".into(),
        }
    }
}

/// The key values are hashed under, ready to MAC with, and its tag.
#[derive(Clone)]
pub struct FlowKey {
    key: MacKey,
    tag: String,
}

impl core::fmt::Debug for FlowKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("FlowKey(..)")
    }
}

impl FlowKey {
    fn derive(secret: &[u8], salt: &str) -> FlowKey {
        let key = if secret.is_empty() {
            let mut h = Sha256::new();
            h.update(UNKEYED_LABEL);
            h.update(salt.as_bytes());
            h.finalize().into()
        } else {
            hmac(secret, &[KEYED_LABEL, salt.as_bytes()])
        };
        let key = MacKey::new(&key);
        let tag = hex(&key.mac(&[b"tag"])).get(..16).unwrap_or_default().to_string();
        FlowKey { key, tag }
    }

    /// A short tag of the key, stored with each record so a record of
    /// another key is recognized.
    pub fn tag(&self) -> &str {
        &self.tag
    }

    /// The keyed hash of a canonical value.
    pub fn value(&self, canonical: &str) -> String {
        hex(&self.key.mac(&[b"value", canonical.as_bytes()])).get(..32).unwrap_or_default().to_string()
    }

    /// The keyed hash of who a turn came from: provider and sender.
    pub fn identity(&self, identity: &crate::model::Identity) -> String {
        let provider = identity.provider.as_deref().unwrap_or_default().trim().to_ascii_lowercase();
        let sender = identity.sender_id.as_deref().unwrap_or_default().trim();
        let parts: [&[u8]; 3] = [b"identity", provider.as_bytes(), sender.as_bytes()];
        hex(&self.key.mac(&parts)).get(..16).unwrap_or_default().to_string()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Meta {
    salt: String,
    #[serde(rename = "createdAtMs")]
    created_at_ms: u64,
}

/// The key, read once per instance and kept.
#[derive(Debug, Clone, Default)]
pub struct Keys(core::cell::OnceCell<FlowKey>);

impl Keys {
    /// The key under `secret`, creating the salt on first use.
    pub fn get(&self, storage: &dyn Storage, secret: &[u8], now_ms: u64) -> Result<FlowKey, StorageError> {
        if let Some(k) = self.0.get() {
            return Ok(k.clone());
        }
        let key = open(storage, secret, now_ms)?;
        let _ = self.0.set(key.clone());
        Ok(key)
    }
}

fn open(storage: &dyn Storage, secret: &[u8], now_ms: u64) -> Result<FlowKey, StorageError> {
    for _ in 0..store::MAX_CAS_ATTEMPTS {
        if let Some((meta, _)) = store::get_json::<Meta>(storage, NAMESPACE, META_KEY)? {
            return Ok(FlowKey::derive(secret, &meta.salt));
        }
        let salt = sha256_hex(format!("warden flow\n{now_ms}").as_bytes());
        let meta = Meta { salt, created_at_ms: now_ms };
        match store::put_json(storage, NAMESPACE, META_KEY, &meta, Condition::Absent) {
            Ok(_) => return Ok(FlowKey::derive(secret, &meta.salt)),
            Err(StorageError::Conflict) => continue,
            Err(e) => return Err(e),
        }
    }
    Err(StorageError::Conflict)
}

/// The digest a session's record is stored under, as the tool judge's
/// approval keys carry it (`_` without a session).
pub fn session_digest(session: Option<&str>) -> String {
    match session.filter(|s| !s.is_empty()) {
        Some(s) => sha256_hex(s.as_bytes()).get(..32).unwrap_or_default().to_string(),
        None => "_".into(),
    }
}

fn session_key(digest: &str) -> String {
    format!("{SESSION_PREFIX}{digest}")
}

/// One value of a session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Value {
    /// Keyed hash of the canonical value.
    pub h: String,
    /// Where it was last seen in untrusted content, and when.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seen: Option<(Source, u64)>,
    /// Who named it (identity hashes) and when.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub named: Vec<(String, u64)>,
    /// When a person approved it for this session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approved: Option<u64>,
}

impl Value {
    fn last(&self) -> u64 {
        let seen = self.seen.as_ref().map_or(0, |(_, at)| *at);
        let named = self.named.iter().map(|(_, at)| *at).max().unwrap_or(0);
        seen.max(named).max(self.approved.unwrap_or(0))
    }

    /// Drops what is older than `ttl_ms` (or dated implausibly ahead);
    /// whether anything is left.
    fn prune(&mut self, now_ms: u64, ttl_ms: u64) -> bool {
        let fresh = |at: u64| crate::time::age(at, now_ms).is_some_and(|age| age <= ttl_ms);
        if self.seen.as_ref().is_some_and(|(_, at)| !fresh(*at)) {
            self.seen = None;
        }
        self.named.retain(|(_, at)| fresh(*at));
        if self.approved.is_some_and(|at| !fresh(at)) {
            self.approved = None;
        }
        self.seen.is_some() || !self.named.is_empty() || self.approved.is_some()
    }
}

/// An ask waiting for an answer: the digest of its approval key and the
/// hashes of the destinations an approval makes approved.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Pending {
    pub key: String,
    pub values: Vec<String>,
    pub at: u64,
}

/// A session's record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Session {
    /// Tag of the key the hashes were made with.
    pub key: String,
    pub values: Vec<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<Pending>,
}

impl Session {
    /// The value with hash `h`, if held.
    pub fn find(&self, h: &str) -> Option<&Value> {
        self.values.iter().find(|v| v.h == h)
    }

    fn entry(&mut self, h: &str) -> &mut Value {
        let i = match self.values.iter().position(|v| v.h == h) {
            Some(i) => i,
            None => {
                self.values.push(Value { h: h.to_string(), ..Value::default() });
                self.values.len() - 1
            }
        };
        &mut self.values[i]
    }

    fn prune(&mut self, now_ms: u64, ttl_ms: u64, max: usize) {
        self.values.retain_mut(|v| v.prune(now_ms, ttl_ms));
        if self.values.len() > max {
            // Oldest first out; a stable sort keeps equal times in order.
            self.values.sort_by_key(Value::last);
            let extra = self.values.len() - max;
            self.values.drain(..extra);
        }
        self.pending.retain(|p| crate::time::age(p.at, now_ms).is_some_and(|age| age <= ttl_ms));
    }
}

/// What one change adds to a session.
pub enum Change<'a> {
    /// Values seen in untrusted content.
    Seen(&'a [String], Source),
    /// Values named by the person with this identity hash.
    Named(&'a [String], String),
    /// An ask waiting for an answer.
    Asked(Pending),
    /// The destinations of the answered ask with this key digest become approved.
    Approved(&'a str),
}

/// The session's record as this key reads it at `now_ms`: empty when absent
/// or made with another key, without what is older than `ttl_ms` or dated
/// implausibly ahead.
pub fn read_session(
    storage: &dyn Storage,
    key: &FlowKey,
    session: &str,
    now_ms: u64,
    ttl_ms: u64,
) -> Result<Session, StorageError> {
    let tag = key.tag();
    let mut s = store::get_json::<Session>(storage, NAMESPACE, &session_key(session))?
        .map(|(s, _)| s)
        .filter(|s| s.key == tag)
        .unwrap_or_default();
    s.values.retain_mut(|v| v.prune(now_ms, ttl_ms));
    Ok(s)
}

/// Applies `change` to a session's record in one conditional write, retried
/// when another writer won. Returns how many values were recorded, and the
/// destinations approved when the change is an answer.
pub fn update_session(
    storage: &dyn Storage,
    key: &FlowKey,
    session: &str,
    change: &Change<'_>,
    now_ms: u64,
    ttl_ms: u64,
    max: usize,
) -> Result<Vec<String>, StorageError> {
    let tag = key.tag();
    let mut out = Vec::new();
    store::update_json::<Session>(storage, NAMESPACE, &session_key(session), |current| {
        let mut s = current.filter(|s| s.key == tag).unwrap_or_default();
        s.key = tag.to_string();
        out.clear();
        match change {
            Change::Seen(values, source) => {
                for h in *values {
                    s.entry(h).seen = Some((source.clone(), now_ms));
                    out.push(h.clone());
                }
            }
            Change::Named(values, who) => {
                for h in *values {
                    let v = s.entry(h);
                    v.named.retain(|(w, _)| w != who);
                    v.named.push((who.clone(), now_ms));
                    if v.named.len() > MAX_NAMERS_PER_VALUE {
                        v.named.remove(0);
                    }
                    out.push(h.clone());
                }
            }
            Change::Asked(p) => {
                s.pending.retain(|q| q.key != p.key);
                s.pending.push(p.clone());
                if s.pending.len() > MAX_PENDING_ASKS {
                    s.pending.remove(0);
                }
            }
            Change::Approved(digest) => {
                let i = s.pending.iter().position(|p| p.key == *digest)?;
                let p = s.pending.remove(i);
                for h in &p.values {
                    s.entry(h).approved = Some(now_ms);
                }
                out = p.values;
            }
        }
        s.prune(now_ms, ttl_ms, max);
        Some(s)
    })?;
    Ok(out)
}

/// The values approved for every session, bound to the flow settings' version.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Always {
    pub key: String,
    pub version: String,
    pub values: Vec<(String, u64)>,
}

/// The values approved `always` under this key and settings version.
pub fn read_always(storage: &dyn Storage, key: &FlowKey, version: &str) -> Result<Vec<String>, StorageError> {
    let tag = key.tag();
    Ok(store::get_json::<Always>(storage, NAMESPACE, ALWAYS_KEY)?
        .map(|(a, _)| a)
        .filter(|a| a.key == tag && a.version == version)
        .map(|a| a.values.into_iter().map(|(h, _)| h).collect())
        .unwrap_or_default())
}

/// Adds values approved for every session.
pub fn approve_always(
    storage: &dyn Storage,
    key: &FlowKey,
    version: &str,
    values: &[String],
    now_ms: u64,
) -> Result<(), StorageError> {
    let tag = key.tag();
    store::update_json::<Always>(storage, NAMESPACE, ALWAYS_KEY, |current| {
        let mut a = current.filter(|a| a.key == tag && a.version == version).unwrap_or_default();
        a.key = tag.to_string();
        a.version = version.to_string();
        for h in values {
            a.values.retain(|(v, _)| v != h);
            a.values.push((h.clone(), now_ms));
        }
        if a.values.len() > MAX_ALWAYS_VALUES {
            let extra = a.values.len() - MAX_ALWAYS_VALUES;
            a.values.drain(..extra);
        }
        Some(a)
    })
    .map(|_| ())
}
