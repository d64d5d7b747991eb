//! Pinned tool descriptions in storage, and the approval of a change.
//!
//! A pin is stored under a keyed hash of the server and tool name (the
//! slot) and holds a keyed hash of the tool's canonical text. The approval
//! key of a change binds the slot and the new hash with an HMAC under the
//! host's approval secret: `mcp1:<slot>:<hash>:<mac>`, lowercase hex. Only a
//! person holding that key, which the proxy writes to its operator log and
//! never to the client, can re-pin the tool; `warden approve` records it.

use super::NAMESPACE;
use crate::digest::{hex, hmac};
use crate::model::{Approval, PolicyError, Scope};
use crate::ports::{Condition, Storage, StorageError};
use crate::prelude::*;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The prefix of an approval key of a changed tool description.
pub const APPROVAL_KEY_PREFIX: &str = "mcp1:";
/// Longest approval key of a changed description, in bytes.
pub const MAX_KEY_BYTES: usize = 256;

const KEYED_LABEL: &[u8] = b"warden/mcp-pins/key/v1";
const UNKEYED_LABEL: &[u8] = b"warden/mcp-pins/key/v1/unkeyed";
const MAC_LABEL: &[u8] = b"warden.mcp.approval-key.v1";
const SLOT_HEX: usize = 32;
const HASH_HEX: usize = 64;
const MAC_HEX: usize = 64;

/// Who made a pin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PinnedBy {
    /// The tool's first sight.
    FirstUse,
    /// A person approving a change.
    Person,
}

/// One stored pin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pin {
    /// Keyed hash of the tool's canonical text.
    pub hash: String,
    /// Who pinned it.
    pub by: PinnedBy,
    /// When, in milliseconds since the Unix epoch.
    pub at_ms: u64,
}

/// The key slots and hashes are made with.
pub struct PinKeys {
    key: [u8; 32],
}

impl core::fmt::Debug for PinKeys {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("PinKeys(..)")
    }
}

impl PinKeys {
    /// The key under the host's approval secret; a fixed one when the host declared none.
    pub fn derive(secret: &[u8]) -> PinKeys {
        let key = if secret.is_empty() { Sha256::digest(UNKEYED_LABEL).into() } else { hmac(secret, &[KEYED_LABEL]) };
        PinKeys { key }
    }

    /// The storage key of a server's tool.
    pub fn slot(&self, server: &str, tool: &str) -> String {
        let full = hex(&hmac(&self.key, &[b"slot", server.as_bytes(), tool.as_bytes()]));
        full.get(..SLOT_HEX).unwrap_or_default().to_string()
    }

    /// The keyed hash of a tool's canonical text.
    pub fn description_hash(&self, canonical: &[u8]) -> String {
        hex(&hmac(&self.key, &[b"description", canonical]))
    }

    /// The approval key that re-pins `slot` to `hash`.
    pub fn approval_key(&self, secret: &[u8], slot: &str, hash: &str) -> String {
        format!("{APPROVAL_KEY_PREFIX}{slot}:{hash}:{}", key_mac(secret, slot, hash))
    }
}

fn key_mac(secret: &[u8], slot: &str, hash: &str) -> String {
    hex(&hmac(secret, &[MAC_LABEL, slot.as_bytes(), hash.as_bytes()]))
}

/// The pin in `slot`, if any.
pub fn read(storage: &dyn Storage, slot: &str) -> Result<Option<Pin>, PolicyError> {
    crate::store::get_json::<Pin>(storage, NAMESPACE, slot)
        .map(|found| found.map(|(pin, _)| pin))
        .map_err(storage_error)
}

/// Pins `hash` in `slot`. A first sight writes only where nothing is
/// pinned yet, so two proxies seeing a tool at once cannot overwrite a
/// person's approval; the one that loses reads the pin again.
pub fn pin(storage: &dyn Storage, slot: &str, hash: &str, by: PinnedBy, now_ms: u64) -> Result<(), PolicyError> {
    let value = Pin { hash: hash.to_string(), by, at_ms: now_ms };
    let when = if by == PinnedBy::FirstUse { Condition::Absent } else { Condition::Any };
    match crate::store::put_json(storage, NAMESPACE, slot, &value, when) {
        Ok(_) => Ok(()),
        Err(StorageError::Conflict) if by == PinnedBy::FirstUse => match read(storage, slot)? {
            Some(pin) if pin.hash == hash => Ok(()),
            _ => Err(PolicyError::Storage("another proxy pinned this tool at the same moment; list again".into())),
        },
        Err(e) => Err(storage_error(e)),
    }
}

fn storage_error(e: StorageError) -> PolicyError {
    PolicyError::Storage(format!("the pins of MCP tools cannot be read or written: {e}"))
}

fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Records a person's answer to a changed description: an approval re-pins
/// the tool to the new text; a refusal changes nothing (the tool stays
/// removed). Only `always` scope fits: a pin is not bound to a session.
pub fn record_approval(secret: &[u8], storage: &dyn Storage, approval: &Approval) -> Result<(), PolicyError> {
    let shown = crate::config::reader::shorten(&approval.key);
    let bad = |why: &str| {
        PolicyError::InvalidInput(format!("key: `{shown}` is not an approval key of a changed MCP tool ({why})"))
    };
    if approval.key.len() > MAX_KEY_BYTES {
        return Err(bad(&format!("longer than {MAX_KEY_BYTES} bytes")));
    }
    let rest = approval.key.strip_prefix(APPROVAL_KEY_PREFIX).ok_or_else(|| bad("no `mcp1:` prefix"))?;
    let parts: Vec<&str> = rest.split(':').collect();
    let [slot, hash, code] = parts.as_slice() else {
        return Err(bad("expected 4 fields separated by `:`"));
    };
    if !(is_hex(slot, SLOT_HEX) && is_hex(hash, HASH_HEX) && is_hex(code, MAC_HEX)) {
        return Err(bad("a field is not lowercase hex of its length"));
    }
    if secret.is_empty() {
        return Err(PolicyError::InvalidInput(
            "key: the host declared no approval secret (`set-host-context`), so no answer can be authenticated".into(),
        ));
    }
    // Compared in full; the code is public once printed, so timing tells nothing new.
    if key_mac(secret, slot, hash) != *code {
        return Err(bad("it was not made by this host"));
    }
    if approval.scope != Scope::Always {
        return Err(PolicyError::InvalidInput(format!(
            "scope: `{}` does not fit a changed MCP tool; its approval re-pins the new description for good, so use \
             `always`",
            approval.scope.as_str()
        )));
    }
    if !approval.allow {
        return Ok(());
    }
    pin(storage, slot, hash, PinnedBy::Person, approval.now_ms)
}
