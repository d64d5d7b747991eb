//! The approval inbox: tool calls answered `ask`, kept until a person
//! answers them through the host.
//!
//! When the tool-call judge asks and gives an approval key, the call is kept
//! as a pending ask (namespace [`NAMESPACE`]): the tool, its arguments with
//! every string that holds a secret replaced by `[redacted: <detector>]` and
//! long strings cut, the rule and reason, the scope offered, the risk, who
//! asked and in which session, the approval key and when. The ask is written
//! in one batch together with the inbox's index (`index`), which also evicts
//! the oldest ask past [`MAX_PENDING`] and every ask older than [`ASK_TTL_MS`].
//! Allowed and denied calls never touch the inbox.
//!
//! Answering an ask records exactly what `record-approval` records for its
//! approval key (so a retried identical call is allowed by `memory.allow` or
//! refused by `memory.deny`) and then removes it. Only the host answers: the
//! `asks` interface is an export the host calls for a person, never a tool
//! the agent has; an ask's ID is a digest of its approval key, so an ID the
//! inbox did not give is unknown. An answer cannot be broader than the
//! scope the ask offered (the approval key binds it); a person who wants a
//! broader answer changes the policy instead.
//!
//! Failure modes: keeping an ask fails open (the verdict stays `ask` and
//! carries the signal `asks.unrecorded`; the person can still answer with
//! `record-approval`); answering fails closed (nothing is recorded unless
//! the ask was read and is valid).

use crate::digest::sha256_hex;
use crate::model::{Approval, PolicyError, Risk, Scope, Signal, ToolCall, Verdict};
use crate::ports::{Condition, Storage, StorageError, Write};
use crate::prelude::*;
use crate::store;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[cfg(test)]
mod tests;

/// Storage namespace of the inbox.
pub const NAMESPACE: &str = "asks";
/// Key of the inbox's index: the pending asks in order and the recent answers.
pub const INDEX_KEY: &str = "index";
/// Most pending asks kept; the oldest is evicted by the next (default 64).
pub const MAX_PENDING: usize = 64;
/// How long an ask can be answered, in milliseconds (default one hour).
pub const ASK_TTL_MS: u64 = 60 * 60 * 1000;
/// Most answered asks remembered for the list of recent decisions (default 50).
pub const MAX_RECENT: usize = 50;
/// Longest string of the shown arguments, in characters; longer ones are cut (default 200).
pub const MAX_SHOWN_STRING_CHARS: usize = 200;
/// Longest shown arguments as a whole, in characters (default 2000).
pub const MAX_SHOWN_ARGUMENT_CHARS: usize = 2000;
/// Longest identity, session or call ID kept for display, in characters (default 128).
pub const MAX_SHOWN_ID_CHARS: usize = 128;
/// Hex digits of an ask ID.
pub const ID_HEX_DIGITS: usize = 24;
/// How often keeping an ask is tried when another writer changed the index in between.
pub const MAX_INDEX_ATTEMPTS: usize = 4;
/// Signal of a verdict whose ask waits in the inbox; its detail names the ask ID.
pub const PENDING_SIGNAL: &str = "asks.pending";
/// Signal of a verdict whose ask could not be kept.
pub const UNRECORDED_SIGNAL: &str = "asks.unrecorded";

/// Why an inbox call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AskError {
    /// `configure` has not succeeded.
    NotConfigured,
    /// No pending ask has this ID.
    UnknownAsk(String),
    /// The ask is past its time to live.
    Expired(String),
    /// The answer is broader than the scope the ask offered.
    ScopeTooBroad(String),
    /// A field is invalid.
    InvalidInput(String),
    /// Storage failed; nothing was changed.
    Storage(String),
    /// Anything else.
    Other(String),
}

impl From<StorageError> for AskError {
    fn from(e: StorageError) -> Self {
        AskError::Storage(format!("the approval inbox could not be read or written ({e})"))
    }
}

impl From<PolicyError> for AskError {
    fn from(e: PolicyError) -> Self {
        match e {
            PolicyError::NotConfigured => AskError::NotConfigured,
            PolicyError::InvalidInput(m) => AskError::InvalidInput(m),
            PolicyError::Storage(m) => AskError::Storage(m),
            PolicyError::Other(m) => AskError::Other(m),
        }
    }
}

/// One pending ask, as kept and as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingAsk {
    pub id: String,
    pub tool_name: String,
    /// The arguments as JSON, secrets redacted and long strings cut.
    pub arguments: String,
    pub rule: String,
    pub reason: String,
    pub risk: Risk,
    /// The broadest scope an approval may have.
    pub scope: Scope,
    pub agent_id: Option<String>,
    pub sender_id: Option<String>,
    pub provider: Option<String>,
    pub channel_id: Option<String>,
    pub session_id: Option<String>,
    pub call_id: Option<String>,
    pub approval_key: String,
    pub created_ms: u64,
    pub expires_ms: u64,
}

/// A person's answer to one ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answer {
    pub allow: bool,
    pub scope: Scope,
    pub now_ms: u64,
}

/// An answered ask, for the list of recent decisions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Answered {
    pub id: String,
    pub tool_name: String,
    pub rule: String,
    pub allow: bool,
    pub scope: Scope,
    pub answered_ms: u64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Index {
    /// Pending asks, oldest first: ID and creation time.
    #[serde(default)]
    pending: Vec<(String, u64)>,
    /// Answered asks, newest first.
    #[serde(default)]
    recent: Vec<Answered>,
}

fn ask_key(id: &str) -> String {
    format!("p:{id}")
}

/// The ask ID of an approval key: a digest, so it names the ask without being the key.
pub fn ask_id(approval_key: &str) -> String {
    let mut id = sha256_hex(approval_key.as_bytes());
    id.truncate(ID_HEX_DIGITS);
    id
}

fn valid_id(id: &str) -> bool {
    id.len() == ID_HEX_DIGITS && id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn cut(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max).collect();
    out.push_str(&format!("… [{} more characters]", count - max));
    out
}

fn cut_strings(value: &mut Value) {
    match value {
        Value::String(s) => *s = cut(s, MAX_SHOWN_STRING_CHARS),
        Value::Array(items) => items.iter_mut().for_each(cut_strings),
        Value::Object(map) => {
            let old = core::mem::take(map);
            for (k, mut v) in old {
                cut_strings(&mut v);
                map.insert(cut(&k, MAX_SHOWN_STRING_CHARS), v);
            }
        }
        _ => {}
    }
}

/// The arguments as a person may see them: every string holding a secret
/// (keys too) redacted by the DLP floor, long strings cut, the whole cut.
pub fn shown_arguments(arguments: &str) -> String {
    let mut value: Value = match serde_json::from_str(arguments) {
        Ok(v) => v,
        Err(_) => return "[arguments are not JSON]".to_string(),
    };
    let mut found = BTreeSet::new();
    crate::audit::keep::walk(&mut value, &mut found);
    cut_strings(&mut value);
    let text = serde_json::to_string_pretty(&value).unwrap_or_default();
    cut(&text, MAX_SHOWN_ARGUMENT_CHARS)
}

fn shown_id(id: Option<&str>) -> Option<String> {
    id.map(|i| {
        let mut found = BTreeSet::new();
        let mut v = Value::String(i.to_string());
        crate::audit::keep::walk(&mut v, &mut found);
        cut(v.as_str().unwrap_or_default(), MAX_SHOWN_ID_CHARS)
    })
}

/// The pending ask of an `ask` verdict, or `None` when it has no approval key.
pub fn pending(call: &ToolCall, verdict: &Verdict) -> Option<PendingAsk> {
    let key = verdict.approval_key.as_ref()?;
    let scope = verdict.scope?;
    let id = &call.identity;
    Some(PendingAsk {
        id: ask_id(key),
        tool_name: cut(&call.tool_name, MAX_SHOWN_STRING_CHARS),
        arguments: shown_arguments(&call.arguments),
        rule: verdict.rule.clone(),
        reason: verdict.reason.clone(),
        risk: verdict.risk,
        scope,
        agent_id: shown_id(id.agent_id.as_deref()),
        sender_id: shown_id(id.sender_id.as_deref()),
        provider: shown_id(id.provider.as_deref()),
        channel_id: shown_id(id.channel_id.as_deref()),
        session_id: shown_id(call.session_id.as_deref()),
        call_id: shown_id(call.call_id.as_deref()),
        approval_key: key.clone(),
        created_ms: call.now_ms,
        expires_ms: call.now_ms.saturating_add(ASK_TTL_MS),
    })
}

fn live(created_ms: u64, now_ms: u64) -> bool {
    now_ms < created_ms.saturating_add(ASK_TTL_MS)
}

/// Keeps the ask of `verdict` in the inbox and names it in a signal. Fails
/// open: a storage failure leaves the verdict `ask`, with `asks.unrecorded`.
pub fn raise(storage: &dyn Storage, call: &ToolCall, verdict: &mut Verdict) {
    let Some(ask) = pending(call, verdict) else { return };
    match keep(storage, &ask) {
        Ok(()) => verdict.signals.push(Signal::new(
            PENDING_SIGNAL,
            format!("ask `{}` waits in the approval inbox until {}", ask.id, ask.expires_ms),
        )),
        Err(e) => verdict.signals.push(Signal::new(
            UNRECORDED_SIGNAL,
            format!("the ask could not be kept in the approval inbox ({e}); answer it with its approval key"),
        )),
    }
}

/// Writes `ask` and the index in one batch: expired asks and the oldest past
/// [`MAX_PENDING`] are removed in the same batch. An ask with the same ID
/// (the same call asked again) replaces the earlier one and keeps its place.
pub fn keep(storage: &dyn Storage, ask: &PendingAsk) -> Result<(), StorageError> {
    let value = serde_json::to_vec(ask).map_err(|e| StorageError::Other(format!("ask cannot be encoded: {e}")))?;
    let mut last = StorageError::Conflict;
    for _ in 0..MAX_INDEX_ATTEMPTS {
        let read = store::get_json::<Index>(storage, NAMESPACE, INDEX_KEY)?;
        let when = store::unchanged(&read);
        let mut index = read.map(|(i, _)| i).unwrap_or_default();
        let mut writes = Vec::new();
        let mut kept = Vec::with_capacity(index.pending.len() + 1);
        for (id, created) in index.pending.drain(..) {
            if id == ask.id {
                continue;
            }
            if live(created, ask.created_ms) {
                kept.push((id, created));
            } else {
                writes.push(Write::remove(NAMESPACE, &ask_key(&id), Condition::Any));
            }
        }
        kept.push((ask.id.clone(), ask.created_ms));
        while kept.len() > MAX_PENDING {
            let (id, _) = kept.remove(0);
            writes.push(Write::remove(NAMESPACE, &ask_key(&id), Condition::Any));
        }
        index.pending = kept;
        writes.push(Write::put(NAMESPACE, &ask_key(&ask.id), value.clone(), Condition::Any));
        writes.push(store::json_write(NAMESPACE, INDEX_KEY, &index, when)?);
        match storage.commit(&writes) {
            Ok(()) => return Ok(()),
            Err(crate::ports::BatchError::Conflict(_)) => last = StorageError::Conflict,
            Err(crate::ports::BatchError::Failed(e)) => return Err(e),
        }
    }
    Err(last)
}

/// Most asks one `list` answers.
pub const MAX_LIST: u32 = MAX_PENDING as u32;

fn check_limit(limit: u32, max: u32) -> Result<(), AskError> {
    if limit == 0 || limit > max {
        return Err(AskError::InvalidInput(format!("limit: `{limit}` must be 1 to {max}")));
    }
    Ok(())
}

/// The pending asks that can still be answered, newest first, created
/// before `before` when given, at most `limit` (1 to [`MAX_LIST`]).
pub fn list(storage: &dyn Storage, limit: u32, before: Option<u64>, now_ms: u64) -> Result<Vec<PendingAsk>, AskError> {
    check_limit(limit, MAX_LIST)?;
    let index = store::get_json::<Index>(storage, NAMESPACE, INDEX_KEY)?.map(|(i, _)| i).unwrap_or_default();
    let mut out = Vec::new();
    for (id, created) in index.pending.iter().rev() {
        if out.len() >= limit as usize {
            break;
        }
        if !live(*created, now_ms) || before.is_some_and(|b| *created >= b) {
            continue;
        }
        if let Some((ask, _)) = store::get_json::<PendingAsk>(storage, NAMESPACE, &ask_key(id))? {
            out.push(ask);
        }
    }
    Ok(out)
}

/// The answered asks, newest first, at most `limit` (1 to [`MAX_RECENT`]).
pub fn recent(storage: &dyn Storage, limit: u32) -> Result<Vec<Answered>, AskError> {
    check_limit(limit, MAX_RECENT as u32)?;
    let index = store::get_json::<Index>(storage, NAMESPACE, INDEX_KEY)?.map(|(i, _)| i).unwrap_or_default();
    Ok(index.recent.into_iter().take(limit as usize).collect())
}

/// Answers the ask `id`: `record` records the approval (the engine's
/// `record-approval`), then the ask leaves the inbox and joins the recent
/// answers. An ID the inbox does not hold, an expired ask and an answer
/// broader than the ask offered are refused and change nothing.
pub fn answer(
    storage: &dyn Storage,
    id: &str,
    answer: Answer,
    record: impl FnOnce(&Approval) -> Result<(), PolicyError>,
) -> Result<Answered, AskError> {
    if !valid_id(id) {
        return Err(AskError::UnknownAsk(format!(
            "id: `{}` is not an ask ID ({ID_HEX_DIGITS} lowercase hex digits, as the inbox lists them)",
            cut(id, 40)
        )));
    }
    let Some((ask, version)) = store::get_json::<PendingAsk>(storage, NAMESPACE, &ask_key(id))? else {
        return Err(AskError::UnknownAsk(format!(
            "id: `{id}` is not a pending ask; it was answered, evicted, or never asked"
        )));
    };
    if !live(ask.created_ms, answer.now_ms) {
        return Err(AskError::Expired(format!(
            "id: `{id}` expired at {} (asks can be answered for {} minutes); retry the call for a new ask",
            ask.expires_ms,
            ASK_TTL_MS / 60_000
        )));
    }
    if answer.allow && answer.scope > ask.scope {
        return Err(AskError::ScopeTooBroad(format!(
            "scope: `{}` is broader than the `{}` this ask offers",
            answer.scope.as_str(),
            ask.scope.as_str()
        )));
    }
    if answer.scope == Scope::Session && ask.session_id.is_none() {
        return Err(AskError::InvalidInput(
            "scope: `session` needs a session, and this call was asked outside any session".into(),
        ));
    }
    let approval = Approval {
        key: ask.approval_key.clone(),
        allow: answer.allow,
        scope: answer.scope,
        // The key carries the session and call digests the answer is bound to.
        session_id: None,
        call_id: None,
        now_ms: answer.now_ms,
        idempotency_key: None,
    };
    record(&approval)?;
    let answered = Answered {
        id: ask.id.clone(),
        tool_name: ask.tool_name.clone(),
        rule: ask.rule.clone(),
        allow: answer.allow,
        scope: answer.scope,
        answered_ms: answer.now_ms,
    };
    settle(storage, &ask.id, version, &answered)?;
    Ok(answered)
}

/// Removes an answered ask and notes its answer, retrying lost races on the index.
fn settle(storage: &dyn Storage, id: &str, version: u64, answered: &Answered) -> Result<(), StorageError> {
    for _ in 0..store::MAX_CAS_ATTEMPTS {
        let read = store::get_json::<Index>(storage, NAMESPACE, INDEX_KEY)?;
        let when = store::unchanged(&read);
        let mut index = read.map(|(i, _)| i).unwrap_or_default();
        index.pending.retain(|(p, _)| p != id);
        index.recent.insert(0, answered.clone());
        index.recent.truncate(MAX_RECENT);
        let writes = vec![
            Write::remove(NAMESPACE, &ask_key(id), Condition::Version(version)),
            store::json_write(NAMESPACE, INDEX_KEY, &index, when)?,
        ];
        match storage.commit(&writes) {
            Ok(()) => return Ok(()),
            Err(crate::ports::BatchError::Conflict(0)) => {
                // Someone else answered it at the same time: the approval is recorded either way.
                return Ok(());
            }
            Err(crate::ports::BatchError::Conflict(_)) => continue,
            Err(crate::ports::BatchError::Failed(e)) => return Err(e),
        }
    }
    Err(StorageError::Conflict)
}
