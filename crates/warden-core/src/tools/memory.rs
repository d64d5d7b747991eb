//! Decision memory: a person's answers to `ask` verdicts.
//!
//! An answer is keyed by the tool and a SHA-256 fingerprint of its
//! normalized arguments (a shell command as the parser prints it, paths
//! normalized, fields that change nothing such as `description` left out),
//! so `ls  -la` and `ls -la` are one call and `ls -la /etc` another. Every
//! answer is bound to the policy version (the digest of the `tools` section):
//! after the owner edits the policy, earlier answers no longer apply and the
//! call is asked again.
//!
//! Scopes: `once` answers one call (the call with the approval's call ID,
//! else the next matching call of the session) and is consumed when used;
//! `session` answers every matching call of one session; `always` every
//! matching call. Within a scope a deny beats an allow; across scopes
//! `always` beats `session`, which beats `once`.
//!
//! Storage (namespace [`NAMESPACE`]): `a:<fp>` for always, `s:<session>:<fp>`
//! for session and `o:<session>:<fp>:<call>` for once answers, where session
//! and call are digests (or `_` when absent). Failure mode: fail-closed; an
//! answer that cannot be read or consumed refuses the call.

use crate::digest::{canonical_json, sha256_hex};
use crate::idempotency::{self, Keyed};
use crate::model::{Approval, PolicyError, Scope};
use crate::ports::{Condition, Storage, StorageError};
use crate::prelude::*;
use crate::store;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Storage namespace of remembered answers.
pub const NAMESPACE: &str = "tools.memory";
/// Longest session or call ID accepted with an approval, in characters.
pub const MAX_ID_CHARS: usize = 512;
/// Most once-only answers of a session cleared when it settles.
pub const MAX_CLEARED: u32 = 1000;

/// Argument fields left out of fingerprints: they describe a call but do not change what it does.
pub const IGNORED_FIELDS: &[&str] = &["description", "timeout", "run_in_background"];

/// A remembered answer.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Record {
    version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    allowed_at: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    denied_at: Option<u64>,
}

/// The fingerprint of a call: tool and normalized arguments.
pub fn fingerprint(tool: &str, normalized: &Value) -> String {
    let value = serde_json::json!({"tool": tool, "args": normalized});
    sha256_hex(&canonical_json(&value))
}

fn id_digest(id: Option<&str>) -> String {
    match id {
        Some(id) => sha256_hex(id.as_bytes()).get(..32).unwrap_or("").to_string(),
        None => "_".to_string(),
    }
}

fn version_tag(version: &str) -> &str {
    let hex = version.strip_prefix("sha256:").unwrap_or(version);
    hex.get(..16).unwrap_or(hex)
}

fn scope_char(scope: Scope) -> char {
    match scope {
        Scope::Once => 'o',
        Scope::Session => 's',
        Scope::Always => 'a',
    }
}

/// The approval key of an `ask`: the broadest scope it offers, the policy
/// version it was asked under and the call's fingerprint.
pub fn approval_key(offered: Scope, version: &str, fp: &str) -> String {
    format!("{}{}:{}:{fp}", super::APPROVAL_KEY_PREFIX, scope_char(offered), version_tag(version))
}

fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

fn parse_key<'k>(key: &'k str, version: &str) -> Result<(Scope, &'k str), PolicyError> {
    let bad = || {
        PolicyError::InvalidInput(format!(
            "key: `{}` is not an approval key a tool-call verdict gave",
            crate::config::reader::shorten(key)
        ))
    };
    let rest = key.strip_prefix(super::APPROVAL_KEY_PREFIX).ok_or_else(bad)?;
    let mut parts = rest.split(':');
    let (Some(scope), Some(tag), Some(fp), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return Err(bad());
    };
    let scope = match scope {
        "o" => Scope::Once,
        "s" => Scope::Session,
        "a" => Scope::Always,
        _ => return Err(bad()),
    };
    if !is_hex(tag, 16) || !is_hex(fp, 64) {
        return Err(bad());
    }
    if tag != version_tag(version) {
        return Err(PolicyError::InvalidInput(
            "key: the tool-call policy changed since this call was asked; judge the call again for a new key".into(),
        ));
    }
    Ok((scope, fp))
}

fn check_id(field: &str, id: Option<&str>) -> Result<(), PolicyError> {
    if let Some(id) = id {
        let chars = id.chars().count();
        if id.trim().is_empty() || chars > MAX_ID_CHARS {
            return Err(PolicyError::InvalidInput(format!(
                "{field}: must be 1 to {MAX_ID_CHARS} characters and not blank, got {chars}"
            )));
        }
    }
    Ok(())
}

fn key_of(scope: Scope, fp: &str, session: Option<&str>, call: Option<&str>) -> String {
    match scope {
        Scope::Always => format!("a:{fp}"),
        Scope::Session => format!("s:{}:{fp}", id_digest(session)),
        Scope::Once => format!("o:{}:{fp}:{}", id_digest(session), id_digest(call)),
    }
}

/// Records a person's answer.
pub fn record(storage: &dyn Storage, version: &str, approval: &Approval) -> Result<(), PolicyError> {
    let (offered, fp) = parse_key(&approval.key, version)?;
    check_id("sessionId", approval.session_id.as_deref())?;
    check_id("callId", approval.call_id.as_deref())?;
    if approval.allow && approval.scope > offered {
        return Err(PolicyError::InvalidInput(format!(
            "scope: `{}` is broader than the `{}` this call offers",
            approval.scope.as_str(),
            offered.as_str()
        )));
    }
    if approval.scope == Scope::Session && approval.session_id.is_none() {
        return Err(PolicyError::InvalidInput("sessionId: is required for a `session` answer".into()));
    }
    let key = key_of(approval.scope, fp, approval.session_id.as_deref(), approval.call_id.as_deref());
    let request = serde_json::json!({
        "key": approval.key, "allow": approval.allow, "scope": approval.scope.as_str(),
        "sessionId": approval.session_id, "callId": approval.call_id,
    });
    let keyed = Keyed::new(NAMESPACE, "approval", approval.idempotency_key.as_deref(), &request, approval.now_ms)?;
    // The answer and the claim of its idempotency key are one batch.
    idempotency::commit_once(storage, keyed.as_ref(), || {
        let read = store::get_json::<Record>(storage, NAMESPACE, &key)?;
        let when = store::unchanged(&read);
        let mut record = read.map(|(r, _)| r).filter(|r| r.version == version).unwrap_or_default();
        record.version = version.to_string();
        if approval.allow {
            record.allowed_at = Some(approval.now_ms);
        } else {
            record.denied_at = Some(approval.now_ms);
        }
        Ok(vec![store::json_write(NAMESPACE, &key, &record, when)?])
    })
}

/// A remembered answer that applies to a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Saved {
    pub allow: bool,
    pub scope: Scope,
    /// For `once` answers: the record to consume and its version.
    consume: Option<(String, u64)>,
}

/// The answer remembered for this call, if any.
pub fn lookup(
    storage: &dyn Storage,
    version: &str,
    fp: &str,
    session: Option<&str>,
    call: Option<&str>,
) -> Result<Option<Saved>, StorageError> {
    let mut keys: Vec<(Scope, String)> = vec![(Scope::Always, key_of(Scope::Always, fp, None, None))];
    if session.is_some() {
        keys.push((Scope::Session, key_of(Scope::Session, fp, session, None)));
    }
    let sessions: Vec<Option<&str>> = if session.is_some() { vec![session, None] } else { vec![None] };
    for s in sessions {
        if call.is_some() {
            keys.push((Scope::Once, key_of(Scope::Once, fp, s, call)));
        }
        keys.push((Scope::Once, key_of(Scope::Once, fp, s, None)));
    }
    for (scope, key) in keys {
        let Some((record, entry_version)) = store::get_json::<Record>(storage, NAMESPACE, &key)? else {
            continue;
        };
        if record.version != version {
            continue;
        }
        let consume = (scope == Scope::Once).then(|| (key.clone(), entry_version));
        if record.denied_at.is_some() {
            return Ok(Some(Saved { allow: false, scope, consume }));
        }
        if record.allowed_at.is_some() {
            return Ok(Some(Saved { allow: true, scope, consume }));
        }
    }
    Ok(None)
}

/// Uses up a `once` answer. Returns whether this call got it: a concurrent
/// call that consumed it first leaves nothing for this one.
pub fn consume(storage: &dyn Storage, saved: &Saved) -> Result<bool, StorageError> {
    let Some((key, version)) = &saved.consume else {
        return Ok(true);
    };
    match storage.delete(NAMESPACE, key, Condition::Version(*version)) {
        Ok(deleted) => Ok(deleted),
        Err(StorageError::Conflict) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Forgets the unused `once` answers of a session.
pub fn clear_session(storage: &dyn Storage, session: &str) -> Result<(), PolicyError> {
    check_id("sessionId", Some(session))?;
    let prefix = format!("o:{}:", id_digest(Some(session)));
    for (key, _) in storage.list(NAMESPACE, &prefix, MAX_CLEARED, false)? {
        storage.delete(NAMESPACE, &key, Condition::Any)?;
    }
    Ok(())
}
