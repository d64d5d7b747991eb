//! The records of the trail and the keyed hashes that chain them.
//!
//! Every entry carries the HMAC-SHA-256 of its own content (canonical JSON,
//! without the `hash` field) and the hash of the entry before it. The key is
//! derived from the host's approval secret (`set-host-context`), so someone
//! who can write the database but does not hold the secret cannot write an
//! entry, a head or a floor that verifies. Without a secret the key is a
//! fixed one: the chain still shows accidental damage, but anyone can forge
//! it; `verify` says so (`keyed: false`).

use crate::digest::{MacKey, hex, hmac};
use crate::prelude::*;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

const KEYED_LABEL: &[u8] = b"warden/audit/chain-key/v1";
const UNKEYED_LABEL: &[u8] = b"warden/audit/chain-key/v1/unkeyed";

/// The `prev` of the first entry ever written.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The key the chain is hashed under, ready to MAC with, and its tag.
#[derive(Clone)]
pub struct AuditKey {
    mac: MacKey,
    tag: String,
    keyed: bool,
}

impl core::fmt::Debug for AuditKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("AuditKey(..)")
    }
}

impl Default for AuditKey {
    fn default() -> Self {
        AuditKey::derive(&[])
    }
}

impl AuditKey {
    /// The key under the host's approval secret (empty: none declared).
    pub fn derive(secret: &[u8]) -> AuditKey {
        let (key, keyed): ([u8; 32], bool) = if secret.is_empty() {
            (Sha256::digest(UNKEYED_LABEL).into(), false)
        } else {
            (hmac(secret, &[KEYED_LABEL]), true)
        };
        let mac = MacKey::new(&key);
        let tag = hex(&mac.mac(&[b"tag"])).get(..16).unwrap_or_default().to_string();
        AuditKey { mac, tag, keyed }
    }

    /// Whether the key comes from a secret.
    pub fn keyed(&self) -> bool {
        self.keyed
    }

    /// A short tag of the key, stored with each record so a record of
    /// another key is named as such.
    pub fn tag(&self) -> &str {
        &self.tag
    }

    /// The keyed digest of one input (32 hex digits), under a label saying what it is.
    pub fn digest(&self, label: &str, bytes: &[u8]) -> String {
        hex(&self.mac.mac(&[b"input", label.as_bytes(), bytes])).get(..32).unwrap_or_default().to_string()
    }

    /// The hash of a record: its canonical JSON without `field`, under a label of its kind.
    pub fn seal(&self, label: &str, value: &serde_json::Value, field: &str) -> String {
        let mut value = value.clone();
        self.seal_in_place(label, &mut value, field)
    }

    /// [`AuditKey::seal`] of `value`, which is left without `field`.
    fn seal_in_place(&self, label: &str, value: &mut serde_json::Value, field: &str) -> String {
        if let Some(map) = value.as_object_mut() {
            map.remove(field);
        }
        // A `Value`'s objects are sorted maps, so its JSON is its canonical JSON.
        let canonical = serde_json::to_vec(value).unwrap_or_default();
        hex(&self.mac.mac(&[b"seal", label.as_bytes(), &canonical]))
    }
}

/// What `warden audit replay` needs of a tool call.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct KeptCall {
    /// The tool.
    pub tool_name: String,
    /// The arguments (JSON), every string holding a secret replaced by `[redacted: <detector>]`.
    pub arguments: String,
    /// The working directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Paths the host derived.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub derived_paths: Vec<String>,
    /// The detectors whose finds were redacted; a replay of such a call may differ.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub redacted: Vec<String>,
}

/// One entry of the trail.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Entry {
    /// Position in the chain, from 1.
    pub seq: u64,
    /// The request's time, in milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// `turn`, `tool-call` or `outbound`.
    pub check: String,
    /// `allow`, `ask` or `deny` (a turn: `allow` when it proceeds).
    pub decision: String,
    /// What observe mode would have decided, when it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed: Option<String>,
    /// The rule that decided.
    pub rule: String,
    /// The verdict's risk (tool calls and outbound messages).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub risk: Option<String>,
    /// The policy version that decided.
    pub policy_version: String,
    /// Keyed hash of the session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Keyed hash of the agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Keyed digests of the request's inputs, and the names of tools and channels.
    pub inputs: BTreeMap<String, String>,
    /// What replay needs, with `audit.keepInputs`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kept: Option<KeptCall>,
    /// Entries this instance could not write since its last written one.
    #[serde(skip_serializing_if = "is_zero")]
    pub unrecorded_before: u64,
    /// Tag of the key the entry is hashed under.
    pub key: String,
    /// Hash of the entry before (the first: [`GENESIS`]).
    pub prev: String,
    /// The keyed hash of this entry.
    pub hash: String,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The newest entry, written in the same batch as it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Head {
    /// Sequence of the newest entry.
    pub seq: u64,
    /// Its hash.
    pub hash: String,
    /// Sequence of the oldest kept entry.
    pub floor: u64,
    /// Time of the oldest kept entry, for pruning by age.
    pub oldest_at_ms: u64,
    /// Tag of the key.
    pub key: String,
    /// The keyed hash of this record.
    pub mac: String,
}

/// Where the kept entries start, written when retention prunes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Floor {
    /// Sequence of the oldest kept entry.
    pub seq: u64,
    /// The hash that entry names as its `prev` (of the last pruned one).
    pub prev: String,
    /// Tag of the key.
    pub key: String,
    /// The keyed hash of this record.
    pub mac: String,
}

/// Seals a record: its JSON with `field` set to its keyed hash.
pub fn sealed<T: Serialize>(key: &AuditKey, label: &str, record: &T, field: &str) -> serde_json::Value {
    let mut value = serde_json::to_value(record).unwrap_or_default();
    let seal = key.seal_in_place(label, &mut value, field);
    if let Some(map) = value.as_object_mut() {
        map.insert(field.into(), serde_json::Value::String(seal));
    }
    value
}

/// Whether a stored record's `field` is the keyed hash of the rest of it.
pub fn is_sealed(key: &AuditKey, label: &str, value: &serde_json::Value, field: &str) -> bool {
    value.get(field).and_then(|v| v.as_str()) == Some(key.seal(label, value, field).as_str())
}
