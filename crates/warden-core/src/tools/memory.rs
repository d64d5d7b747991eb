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
//!
//! Markers: every answer is recorded together with a marker
//! `m:<version>:<tool>` (version and tool as in the approval key) and the key
//! [`FORMAT_KEY`], in one batch. A call first reads its tool's marker, one
//! storage read, and looks up answers and computes its fingerprint only when
//! the marker is there. A marker stays after its answers are used up or
//! forgotten, which costs those calls the full lookup and changes nothing
//! else. Storage that holds answers but no [`FORMAT_KEY`] was written before
//! markers existed: an instance that finds it so ([`Index`]) reads every
//! answer key of every call, as before.

use crate::digest::{canonical_json, sha256_hex};
use crate::idempotency::{self, Keyed};
use crate::model::{Approval, PolicyError, Scope};
use crate::ports::{Condition, Storage, StorageError, Write};
use crate::prelude::*;
use crate::store;
use core::cell::Cell;
use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::Sha256;

/// Storage namespace of remembered answers.
pub const NAMESPACE: &str = "tools.memory";
/// Longest session or call ID accepted with an approval, in characters.
pub const MAX_ID_CHARS: usize = 512;
/// Most once-only answers of a session cleared when it settles.
pub const MAX_CLEARED: u32 = 1000;

/// Key present once answers are recorded with their markers.
pub const FORMAT_KEY: &str = "format";
/// Value of [`FORMAT_KEY`].
const FORMAT_VALUE: &[u8] = b"markers";

fn marker_key(version_tag: &str, tool_tag: &str) -> String {
    format!("m:{version_tag}:{tool_tag}")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// Not read yet, or storage failed when it was.
    Unknown,
    /// Every answer in storage has its marker.
    Marked,
    /// Storage holds answers recorded without markers.
    Unmarked,
}

/// What an instance learned once about the answers in storage: whether
/// markers can be trusted; and the marker key last looked up, by policy
/// version and tool, so a run of calls to one tool hashes its name once.
pub struct Index(Cell<Format>, Cell<Option<LastMarker>>);

/// A marker key and the policy version and tool it is for.
#[derive(Debug, Clone)]
struct LastMarker {
    version: String,
    tool: String,
    key: String,
}

impl Default for Index {
    fn default() -> Self {
        Index(Cell::new(Format::Unknown), Cell::new(None))
    }
}

impl core::fmt::Debug for Index {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("Index").field(&self.0.get()).finish()
    }
}

impl Clone for Index {
    /// What was learned about storage; the remembered marker key is looked up again.
    fn clone(&self) -> Self {
        Index(self.0.clone(), Cell::new(None))
    }
}

impl Index {
    /// Reads, once per instance, whether the answers in storage carry
    /// markers: [`FORMAT_KEY`] is there, or no answer is. A read that fails
    /// is tried again on the next call.
    pub fn prepare(&self, storage: &dyn Storage) {
        if self.0.get() != Format::Unknown {
            return;
        }
        let format = match storage.get(NAMESPACE, FORMAT_KEY) {
            Ok(Some(_)) => Format::Marked,
            Ok(None) => match storage.list(NAMESPACE, "", 1, false) {
                Ok(entries) if entries.is_empty() => Format::Marked,
                Ok(_) => Format::Unmarked,
                Err(_) => Format::Unknown,
            },
            Err(_) => Format::Unknown,
        };
        self.0.set(format);
    }

    /// Whether an answer may be remembered for `tool` under `version`: one
    /// read of its marker when markers can be trusted, else `true`.
    pub fn may_remember(&self, storage: &dyn Storage, version: &str, tool: &str) -> Result<bool, StorageError> {
        self.prepare(storage);
        if self.0.get() != Format::Marked {
            return Ok(true);
        }
        let last = match self.1.take() {
            Some(m) if m.version == version && m.tool == tool => m,
            _ => LastMarker {
                version: version.to_string(),
                tool: tool.to_string(),
                key: marker_key(version_tag(version), &tool_tag(tool)),
            },
        };
        let found = storage.get(NAMESPACE, &last.key);
        self.1.set(Some(last));
        Ok(found?.is_some())
    }

    fn marked(&self) -> bool {
        self.0.get() == Format::Marked
    }
}

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

fn tool_tag(tool: &str) -> String {
    sha256_hex(tool.as_bytes()).get(..16).unwrap_or("").to_string()
}

fn scope_char(scope: Scope) -> char {
    match scope {
        Scope::Once => 'o',
        Scope::Session => 's',
        Scope::Always => 'a',
    }
}

/// Label the authentication code of a key starts from, so it cannot be
/// mistaken for any other code made with the same secret.
const MAC_LABEL: &[u8] = b"warden.tools.approval-key.v2";

/// What an approval key binds, as carried in the key.
struct KeyFields<'k> {
    offered: Scope,
    version_tag: &'k str,
    tool_tag: &'k str,
    fp: &'k str,
    /// Digest of the session the call was asked in, or `_`.
    session: &'k str,
    /// Digest of the call ID the call was asked with, or `_`.
    call: &'k str,
}

fn mac(secret: &[u8], version: &str, k: &KeyFields<'_>) -> Option<Hmac<Sha256>> {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(secret).ok()?;
    let scope = [scope_char(k.offered) as u8];
    for part in [
        MAC_LABEL,
        &scope,
        version.as_bytes(),
        k.tool_tag.as_bytes(),
        k.fp.as_bytes(),
        k.session.as_bytes(),
        k.call.as_bytes(),
    ] {
        mac.update(&(part.len() as u64).to_be_bytes());
        mac.update(part);
    }
    Some(mac)
}

/// The approval key of an `ask`: the broadest scope it offers, the policy
/// version it was asked under, the tool, the call's fingerprint, the session
/// and call ID it was asked with, and an HMAC-SHA256 of all of them under the
/// host's approval secret. Format:
/// `t2:<scope>:<version>:<tool>:<fingerprint>:<session>:<call>:<mac>`, every
/// field lowercase hex (session and call `_` when absent).
pub fn approval_key(
    secret: &[u8],
    offered: Scope,
    version: &str,
    tool: &str,
    fp: &str,
    session: Option<&str>,
    call: Option<&str>,
) -> String {
    let tool = tool_tag(tool);
    let session = id_digest(session);
    let call = id_digest(call);
    let fields =
        KeyFields { offered, version_tag: version_tag(version), tool_tag: &tool, fp, session: &session, call: &call };
    let code =
        mac(secret, version, &fields).map(|m| crate::digest::hex(&m.finalize().into_bytes())).unwrap_or_default();
    format!(
        "{}{}:{}:{tool}:{fp}:{session}:{call}:{code}",
        super::APPROVAL_KEY_PREFIX,
        scope_char(offered),
        fields.version_tag
    )
}

fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

fn is_id(s: &str) -> bool {
    s == "_" || is_hex(s, 32)
}

/// Longest approval key accepted, in bytes.
pub const MAX_KEY_BYTES: usize = 256;

fn shown_key(key: &str) -> String {
    crate::config::reader::shorten(key)
}

fn parse_key<'k>(key: &'k str) -> Result<(KeyFields<'k>, &'k str), PolicyError> {
    let bad = |why: &str| {
        PolicyError::InvalidInput(format!(
            "key: `{}` is not an approval key a tool-call verdict gave ({why})",
            shown_key(key)
        ))
    };
    if key.len() > MAX_KEY_BYTES {
        return Err(bad(&format!("longer than {MAX_KEY_BYTES} bytes")));
    }
    if key.starts_with(super::OLD_APPROVAL_KEY_PREFIX) {
        return Err(PolicyError::InvalidInput(format!(
            "key: `{}` is a key of an earlier format, which cannot be authenticated; judge the call again for a new key",
            shown_key(key)
        )));
    }
    let rest = key.strip_prefix(super::APPROVAL_KEY_PREFIX).ok_or_else(|| bad("no `t2:` prefix"))?;
    let parts: Vec<&str> = rest.split(':').collect();
    let [scope, version_tag, tool_tag, fp, session, call, code] = parts.as_slice() else {
        return Err(bad("expected 8 fields separated by `:`"));
    };
    let offered = match *scope {
        "o" => Scope::Once,
        "s" => Scope::Session,
        "a" => Scope::Always,
        _ => return Err(bad("the scope must be `o`, `s` or `a`")),
    };
    let well_formed = is_hex(version_tag, 16)
        && is_hex(tool_tag, 16)
        && is_hex(fp, 64)
        && is_id(session)
        && is_id(call)
        && is_hex(code, 64);
    if !well_formed {
        return Err(bad("a field is not lowercase hex of its length"));
    }
    Ok((KeyFields { offered, version_tag, tool_tag, fp, session, call }, code))
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
    stored_key(scope, fp, &id_digest(session), &id_digest(call))
}

fn stored_key(scope: Scope, fp: &str, session: &str, call: &str) -> String {
    match scope {
        Scope::Always => format!("a:{fp}"),
        Scope::Session => format!("s:{session}:{fp}"),
        Scope::Once => format!("o:{session}:{fp}:{call}"),
    }
}

/// The session or call an answer is bound to: the one the key was asked
/// with; an answer may name it again, or name one when the call was asked
/// without, but never another.
fn bound_id(field: &str, in_key: &str, given: Option<&str>) -> Result<String, PolicyError> {
    let given_digest = given.map(|g| id_digest(Some(g)));
    match (in_key, given_digest) {
        ("_", Some(d)) => Ok(d),
        ("_", None) => Ok("_".to_string()),
        (k, None) => Ok(k.to_string()),
        (k, Some(d)) if d == k => Ok(d),
        (_, Some(_)) => Err(PolicyError::InvalidInput(format!(
            "{field}: `{}` is not the {} this call was asked in; a key answers only its own",
            shown_key(given.unwrap_or_default()),
            if field == "sessionId" { "session" } else { "call" }
        ))),
    }
}

/// Records a person's answer.
pub fn record(
    storage: &dyn Storage,
    index: &Index,
    secret: &[u8],
    version: &str,
    approval: &Approval,
) -> Result<(), PolicyError> {
    let (fields, code) = parse_key(&approval.key)?;
    if secret.is_empty() {
        return Err(PolicyError::InvalidInput(
            "key: the host declared no approval secret (`set-host-context`), so no answer can be authenticated".into(),
        ));
    }
    if fields.version_tag != version_tag(version) {
        return Err(PolicyError::InvalidInput(
            "key: the tool-call policy changed since this call was asked, or the key was altered; judge the call again for a new key"
                .into(),
        ));
    }
    let authentic = mac(secret, version, &fields)
        .is_some_and(|m| decode_hex(code).is_some_and(|bytes| m.verify_slice(&bytes).is_ok()));
    if !authentic {
        return Err(PolicyError::InvalidInput(format!(
            "key: `{}` was altered or was not given by this warden (its authentication code does not match)",
            shown_key(&approval.key)
        )));
    }
    check_id("sessionId", approval.session_id.as_deref())?;
    check_id("callId", approval.call_id.as_deref())?;
    if approval.allow && approval.scope > fields.offered {
        return Err(PolicyError::InvalidInput(format!(
            "scope: `{}` is broader than the `{}` this call offers",
            approval.scope.as_str(),
            fields.offered.as_str()
        )));
    }
    let session = bound_id("sessionId", fields.session, approval.session_id.as_deref())?;
    let call = bound_id("callId", fields.call, approval.call_id.as_deref())?;
    if approval.scope == Scope::Session && session == "_" {
        return Err(PolicyError::InvalidInput(
            "sessionId: is required for a `session` answer, and this call was asked outside any session".into(),
        ));
    }
    let key = stored_key(approval.scope, fields.fp, &session, &call);
    let marker = marker_key(fields.version_tag, fields.tool_tag);
    // Storage with answers of before markers stays without the format key,
    // so that no instance trusts markers there.
    index.prepare(storage);
    let marked = index.marked();
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
        let mut writes = vec![
            store::json_write(NAMESPACE, &key, &record, when)?,
            Write::put(NAMESPACE, &marker, b"1".to_vec(), Condition::Any),
        ];
        if marked {
            writes.push(Write::put(NAMESPACE, FORMAT_KEY, FORMAT_VALUE.to_vec(), Condition::Any));
        }
        Ok(writes)
    })
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    let digit = |c: u8| (c as char).to_digit(16).and_then(|d| u8::try_from(d).ok());
    text.as_bytes()
        .chunks(2)
        .map(|pair| match pair {
            [hi, lo] => Some(digit(*hi)? << 4 | digit(*lo)?),
            _ => None,
        })
        .collect()
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

#[cfg(test)]
#[path = "memory_marker_tests.rs"]
mod marker_tests;
