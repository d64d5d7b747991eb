//! The audit trail: one entry for every decision of `check-turn`,
//! `check-tool-call` and `check-outbound`, appended to a keyed hash chain in
//! storage, so that a later reader can prove nobody edited, removed or
//! reordered what was decided.
//!
//! Layout, namespace [`NAMESPACE`]: `e/<20-digit sequence>` (one entry
//! each), [`HEAD_KEY`] (the newest entry's sequence and hash, written in the
//! same atomic batch as that entry, conditional on the head's version, so
//! instances sharing a database keep one linear chain) and [`FLOOR_KEY`]
//! (where the kept entries start, written in the batch that prunes). The
//! head shows a removed newest entry, the floor a removed oldest one, the
//! chain a removed, edited or moved one in between.
//!
//! Entries hold no message text, no secret and no recipient in clear: the
//! session, the agent and every input are keyed digests (see [`chain`]).
//! Only with `keepInputs` is a tool call's content kept, for replay: its
//! tool, its arguments with every string that holds a secret redacted, its
//! working directory and derived paths.

pub mod chain;
pub mod config;
pub(crate) mod keep;

pub use chain::{AuditKey, Entry, Floor, Head, KeptCall};
pub use config::AuditConfig;

use crate::model::{
    Decision, Direction, OutboundMessage, PolicyError, Risk, ToolCall, Trigger, Turn, TurnOutcome, Verdict,
};
use crate::ports::{Condition, Storage, StorageError, Write};
use crate::prelude::*;
use crate::store;

/// Storage namespace of the trail.
pub const NAMESPACE: &str = "audit";
/// Key of the head record.
pub const HEAD_KEY: &str = "head";
/// Key of the floor record.
pub const FLOOR_KEY: &str = "floor";
/// Prefix of entry keys.
pub const ENTRY_PREFIX: &str = "e/";
/// Digits of the sequence in an entry's key (zero-padded, so key order is sequence order).
pub const SEQ_DIGITS: usize = 20;
/// Entries read by one storage call when the trail is walked: the entries
/// whose keys share all but the last two digits.
pub const PAGE_ENTRIES: u64 = 100;
/// Most entries one `export` call returns.
pub const MAX_EXPORT_LIMIT: u32 = 500;
/// Most entries one append prunes; a lowered bound is reached over several appends.
pub const PRUNE_PER_APPEND: usize = 64;
/// Rule of a tool call or outbound message refused because `audit.required`
/// is set and its entry could not be written.
pub const UNRECORDED_RULE: &str = "audit.unrecorded";
/// Counter of entries that could not be written.
pub const UNRECORDED_COUNTER: &str = "audit.unrecorded";

const ENTRY_LABEL: &str = "entry";
const HEAD_LABEL: &str = "head";
const FLOOR_LABEL: &str = "floor";

/// The key of entry `seq`.
pub fn entry_key(seq: u64) -> String {
    format!("{ENTRY_PREFIX}{seq:0SEQ_DIGITS$}")
}

fn page_prefix(page: u64) -> String {
    format!("{ENTRY_PREFIX}{page:0width$}", width = SEQ_DIGITS - 2)
}

fn seq_of_key(key: &str) -> Option<u64> {
    let digits = key.strip_prefix(ENTRY_PREFIX)?;
    if digits.len() != SEQ_DIGITS || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn risk_name(risk: Risk) -> String {
    match serde_json::to_value(risk) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

/// An entry before it has a place in the chain.
#[derive(Debug, Clone)]
pub struct Draft {
    entry: Entry,
}

impl Draft {
    /// The request's time.
    pub fn at_ms(&self) -> u64 {
        self.entry.at_ms
    }

    /// Which check decided.
    pub fn check(&self) -> &str {
        &self.entry.check
    }

    fn new(key: &AuditKey, check: &str, at_ms: u64, session: Option<&str>, agent: Option<&str>) -> Draft {
        let entry = Entry {
            at_ms,
            check: check.into(),
            session: session.filter(|s| !s.is_empty()).map(|s| key.digest("session", s.as_bytes())),
            agent: agent.filter(|s| !s.is_empty()).map(|s| key.digest("agent", s.as_bytes())),
            ..Entry::default()
        };
        Draft { entry }
    }

    fn verdict(mut self, verdict: &Verdict) -> Draft {
        self.entry.decision = verdict.decision.as_str().into();
        self.entry.observed = verdict.observed.map(|d| d.as_str().into());
        self.entry.rule = verdict.rule.clone();
        self.entry.risk = Some(risk_name(verdict.risk));
        self
    }

    fn input(&mut self, name: &str, value: String) {
        self.entry.inputs.insert(name.into(), value);
    }

    /// The entry of a judged tool call.
    pub fn tool_call(key: &AuditKey, call: &ToolCall, verdict: &Verdict, keep_inputs: bool) -> Draft {
        let mut d =
            Draft::new(key, "tool-call", call.now_ms, call.session_id.as_deref(), call.identity.agent_id.as_deref())
                .verdict(verdict);
        d.input("tool", crate::config::reader::shorten(&call.tool_name));
        d.input("arguments", key.digest("arguments", call.arguments.as_bytes()));
        if let Some(cwd) = &call.cwd {
            d.input("cwd", key.digest("cwd", cwd.as_bytes()));
        }
        if keep_inputs {
            match keep::tool_call(call) {
                Ok(kept) => d.entry.kept = Some(kept),
                Err(why) => d.input("notKept", why),
            }
        }
        d
    }

    /// The entry of a checked outbound or peer message.
    pub fn outbound(key: &AuditKey, message: &OutboundMessage, verdict: &Verdict) -> Draft {
        let mut d = Draft::new(
            key,
            "outbound",
            message.now_ms,
            message.session_id.as_deref(),
            message.identity.agent_id.as_deref(),
        )
        .verdict(verdict);
        let direction = match message.direction {
            Direction::Outbound => "outbound",
            Direction::Inbound => "inbound",
        };
        d.input("direction", direction.into());
        d.input("channel", crate::config::reader::shorten(&message.channel));
        d.input("recipient", key.digest("recipient", message.recipient.as_bytes()));
        d.input("body", key.digest("body", &message.body));
        d
    }

    /// The entry of a checked turn.
    pub fn turn(key: &AuditKey, turn: &Turn, outcome: &TurnOutcome) -> Draft {
        let mut d = Draft::new(key, "turn", turn.now_ms, turn.session_id.as_deref(), turn.identity.agent_id.as_deref());
        d.entry.decision = if outcome.proceed { Decision::Allow } else { Decision::Deny }.as_str().into();
        d.entry.rule = outcome.rule.clone();
        let trigger = match turn.trigger {
            Trigger::User => "user",
            Trigger::Automation => "automation",
            Trigger::Peer => "peer",
        };
        d.input("trigger", trigger.into());
        d.input("outcome", outcome.outcome.as_str().into());
        d.input("message", key.digest("message", turn.message.as_bytes()));
        let provider = turn.identity.provider.as_deref().unwrap_or_default().trim().to_ascii_lowercase();
        let sender = turn.identity.sender_id.as_deref().unwrap_or_default().trim();
        d.input("sender", key.digest("sender", format!("{provider}\n{sender}").as_bytes()));
        d
    }
}

/// Appends `draft` as the next entry, pruning what retention no longer
/// keeps in the same batch. Retries when another instance appended first.
/// Returns the entry's sequence.
pub fn append(
    config: &AuditConfig,
    key: &AuditKey,
    storage: &dyn Storage,
    policy_version: &str,
    unrecorded_before: u64,
    draft: Draft,
) -> Result<u64, StorageError> {
    let now = draft.entry.at_ms;
    for _ in 0..store::MAX_CAS_ATTEMPTS {
        let read = store::get_json::<Head>(storage, NAMESPACE, HEAD_KEY)?;
        let (seq, prev, floor, oldest) = match &read {
            Some((h, _)) => (h.seq.saturating_add(1), h.hash.clone(), h.floor.max(1), h.oldest_at_ms),
            None => (1, chain::GENESIS.to_string(), 1, now),
        };
        let mut entry = draft.entry.clone();
        entry.seq = seq;
        entry.prev = prev;
        entry.key = key.tag().into();
        entry.policy_version = policy_version.into();
        entry.unrecorded_before = unrecorded_before;
        let value = chain::sealed(key, ENTRY_LABEL, &entry, "hash");
        let hash = value.get("hash").and_then(|v| v.as_str()).unwrap_or_default().to_string();
        let bytes = serde_json::to_vec(&value).map_err(|e| StorageError::Other(format!("audit entry: {e}")))?;
        let mut writes = vec![Write::put(NAMESPACE, &entry_key(seq), bytes, Condition::Absent)];

        let mut head = Head { seq, hash, floor, oldest_at_ms: oldest, key: key.tag().into(), mac: String::new() };
        let kept_after = seq.saturating_sub(floor).saturating_add(1);
        let over_count = kept_after > config.max_entries;
        let over_age = read.is_some() && now.saturating_sub(oldest) > config.max_age_ms();
        if over_count || over_age {
            prune(config, key, storage, &entry, kept_after, &mut head, &mut writes)?;
        }
        let head = chain::sealed(key, HEAD_LABEL, &head, "mac");
        writes.push(store::json_write(NAMESPACE, HEAD_KEY, &head, store::unchanged(&read))?);
        match storage.commit(&writes) {
            Ok(()) => return Ok(seq),
            Err(crate::ports::BatchError::Conflict(_)) => continue,
            Err(crate::ports::BatchError::Failed(e)) => return Err(e),
        }
    }
    Err(StorageError::Conflict)
}

/// The oldest entries, as pruning needs them.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Oldest {
    seq: u64,
    #[serde(default)]
    at_ms: u64,
    #[serde(default)]
    prev: String,
}

fn prune(
    config: &AuditConfig,
    key: &AuditKey,
    storage: &dyn Storage,
    new: &Entry,
    kept_after: u64,
    head: &mut Head,
    writes: &mut Vec<Write>,
) -> Result<(), StorageError> {
    let excess = kept_after.saturating_sub(config.max_entries);
    let over_age = new.at_ms.saturating_sub(head.oldest_at_ms) > config.max_age_ms();
    // Only the count is over: the oldest `excess` go (one an append, once the
    // chain is full), so only they and the one after them are read. When
    // the oldest is too old, how many are is found by reading them.
    let most =
        if over_age { PRUNE_PER_APPEND } else { usize::try_from(excess).unwrap_or(usize::MAX).min(PRUNE_PER_APPEND) };
    let listed = storage.list(NAMESPACE, ENTRY_PREFIX, most as u32 + 1, false)?;
    // The listing stopped short of its limit: no entry comes after these.
    let chain_ends = listed.len() <= most;
    let mut oldest: Vec<(String, u64, Oldest)> = Vec::new();
    for (k, e) in listed {
        let Ok(o) = serde_json::from_slice::<Oldest>(&e.value) else { continue };
        if seq_of_key(&k) != Some(o.seq) || o.seq >= new.seq {
            continue;
        }
        if o.seq < head.floor {
            // Below the floor, outside the chain: removed with this batch so
            // that it never again takes a place in the listing.
            writes.push(Write::remove(NAMESPACE, &k, Condition::Version(e.version)));
            continue;
        }
        oldest.push((k, e.version, o));
    }
    let mut pruned = 0usize;
    for (i, (_, _, o)) in oldest.iter().enumerate() {
        if i >= most {
            break;
        }
        let too_many = (i as u64) < excess;
        let too_old = new.at_ms.saturating_sub(o.at_ms) > config.max_age_ms();
        if !(too_many || too_old) {
            break;
        }
        pruned = i + 1;
    }
    // Every entry read would go, but more may follow (the listing was cut at
    // its limit and some of what it returned was not the chain's): the last
    // one read stays as the floor rather than the new entry.
    if pruned > 0 && pruned == oldest.len() && !chain_ends {
        pruned -= 1;
    }
    let (floor_seq, floor_prev, oldest_at) = match oldest.get(pruned) {
        Some((_, _, o)) => (o.seq, o.prev.clone(), o.at_ms),
        None if pruned == 0 => return Ok(()),
        None => (new.seq, new.prev.clone(), new.at_ms),
    };
    head.oldest_at_ms = oldest_at;
    if pruned == 0 {
        return Ok(());
    }
    for (k, version, _) in oldest.iter().take(pruned) {
        writes.push(Write::remove(NAMESPACE, k, Condition::Version(*version)));
    }
    head.floor = floor_seq;
    let floor = Floor { seq: floor_seq, prev: floor_prev, key: key.tag().into(), mac: String::new() };
    let floor = chain::sealed(key, FLOOR_LABEL, &floor, "mac");
    writes.push(store::json_write(NAMESPACE, FLOOR_KEY, &floor, Condition::Any)?);
    Ok(())
}

/// What `verify` found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Entries whose link was checked and held.
    pub checked: u64,
    /// Whether the whole chain from the floor to the head holds.
    pub ok: bool,
    /// The sequence of the first broken link.
    pub broken_seq: Option<u64>,
    /// What is wrong with it.
    pub problem: Option<String>,
    /// Sequence of the newest entry (0: none).
    pub head_seq: u64,
    /// Sequence of the oldest kept entry.
    pub floor_seq: u64,
    /// Entries instances reported they could not write.
    pub unrecorded: u64,
    /// Whether the chain is keyed by a host secret.
    pub keyed: bool,
}

impl Report {
    fn broken(mut self, seq: u64, problem: String) -> Report {
        self.ok = false;
        self.broken_seq = Some(seq);
        self.problem = Some(problem);
        self
    }
}

fn read_value(storage: &dyn Storage, key: &str) -> Result<Option<serde_json::Value>, StorageError> {
    match storage.get(NAMESPACE, key)? {
        None => Ok(None),
        Some(e) => Ok(Some(serde_json::from_slice(&e.value).unwrap_or(serde_json::Value::Null))),
    }
}

fn storage_error(e: StorageError) -> PolicyError {
    PolicyError::Storage(e.to_string())
}

/// Walks the chain from the floor to the head and names the first link that does not hold.
pub fn verify(key: &AuditKey, storage: &dyn Storage) -> Result<Report, PolicyError> {
    let report = Report { keyed: key.keyed(), ok: true, ..Report::default() };
    let Some(head_value) = read_value(storage, HEAD_KEY).map_err(storage_error)? else {
        let any = storage.list(NAMESPACE, ENTRY_PREFIX, 1, false).map_err(storage_error)?;
        return Ok(match any.first().and_then(|(k, _)| seq_of_key(k)) {
            Some(seq) => report.broken(seq, "the head record is missing, but entries remain".into()),
            None => report,
        });
    };
    let head: Head = serde_json::from_value(head_value.clone()).unwrap_or_default();
    let mut report = Report { head_seq: head.seq, floor_seq: head.floor.max(1), ..report };
    if head.key != key.tag() {
        return Ok(report
            .broken(head.seq, "the head record was written under another key (the approval secret changed)".into()));
    }
    if !chain::is_sealed(key, HEAD_LABEL, &head_value, "mac") || head.seq == 0 {
        return Ok(report.broken(head.seq, "the head record does not match its keyed hash (it was edited)".into()));
    }
    let floor = head.floor.max(1);
    let mut expected_prev = chain::GENESIS.to_string();
    if floor > 1 {
        let Some(floor_value) = read_value(storage, FLOOR_KEY).map_err(storage_error)? else {
            return Ok(report.broken(floor, "the floor record is missing".into()));
        };
        let f: Floor = serde_json::from_value(floor_value.clone()).unwrap_or_default();
        if !chain::is_sealed(key, FLOOR_LABEL, &floor_value, "mac") || f.key != key.tag() {
            return Ok(report.broken(floor, "the floor record does not match its keyed hash (it was edited)".into()));
        }
        if f.seq != floor {
            return Ok(report
                .broken(floor, format!("the floor record says the trail starts at {}, the head says {floor}", f.seq)));
        }
        expected_prev = f.prev;
    }
    let mut expected = floor;
    let mut beyond: Option<u64> = None;
    for page in floor / PAGE_ENTRIES..=head.seq / PAGE_ENTRIES {
        let listed =
            storage.list(NAMESPACE, &page_prefix(page), PAGE_ENTRIES as u32 + 1, false).map_err(storage_error)?;
        for (k, stored) in listed {
            let Some(at) = seq_of_key(&k) else {
                return Ok(report
                    .broken(expected, format!("the key `{}` is not an entry's", crate::config::reader::shorten(&k))));
            };
            if at < floor {
                continue;
            }
            if at > head.seq {
                beyond.get_or_insert(at);
                continue;
            }
            if at > expected {
                return Ok(report.broken(expected, format!("entry {expected} is missing")));
            }
            let value: serde_json::Value = match serde_json::from_slice(&stored.value) {
                Ok(v @ serde_json::Value::Object(_)) => v,
                _ => return Ok(report.broken(at, format!("entry {at} is not readable"))),
            };
            let entry: Entry = serde_json::from_value(value.clone()).unwrap_or_default();
            if entry.key != key.tag() {
                return Ok(report
                    .broken(at, format!("entry {at} was written under another key (the approval secret changed)")));
            }
            if !chain::is_sealed(key, ENTRY_LABEL, &value, "hash") {
                return Ok(report.broken(at, format!("entry {at} does not match its keyed hash (it was edited)")));
            }
            if entry.seq != at {
                return Ok(report
                    .broken(at, format!("entry {at} holds the entry of sequence {} (entries were moved)", entry.seq)));
            }
            if entry.prev != expected_prev {
                let what = if at == floor && floor > 1 { "the floor".to_string() } else { format!("entry {}", at - 1) };
                return Ok(report.broken(at, format!("entry {at} does not follow {what} (its previous hash differs)")));
            }
            expected_prev = entry.hash;
            report.unrecorded = report.unrecorded.saturating_add(entry.unrecorded_before);
            report.checked += 1;
            expected += 1;
        }
    }
    if expected <= head.seq {
        return Ok(report.broken(expected, format!("entry {expected} is missing")));
    }
    if expected_prev != head.hash {
        return Ok(report.broken(head.seq, format!("the head names another hash than entry {}", head.seq)));
    }
    if let Some(at) = beyond {
        // Another instance may have appended while the chain was read.
        let now: Option<(Head, u64)> = store::get_json(storage, NAMESPACE, HEAD_KEY).map_err(storage_error)?;
        if now.map(|(h, _)| h.seq).unwrap_or_default() < at {
            return Ok(report.broken(at, format!("entry {at} lies past the head (the head was set back)")));
        }
    }
    Ok(report)
}

/// Up to `limit` entries after sequence `after`, oldest first.
pub fn export(storage: &dyn Storage, after: u64, limit: u32) -> Result<Vec<Entry>, PolicyError> {
    if limit == 0 || limit > MAX_EXPORT_LIMIT {
        return Err(PolicyError::InvalidInput(format!(
            "limit: must be between 1 and {MAX_EXPORT_LIMIT}, got `{limit}`"
        )));
    }
    let Some((head, _)) = store::get_json::<Head>(storage, NAMESPACE, HEAD_KEY).map_err(storage_error)? else {
        return Ok(Vec::new());
    };
    let start = after.saturating_add(1).max(head.floor.max(1));
    let mut out = Vec::new();
    let mut page = start / PAGE_ENTRIES;
    while page <= head.seq / PAGE_ENTRIES && out.len() < limit as usize {
        let listed =
            storage.list(NAMESPACE, &page_prefix(page), PAGE_ENTRIES as u32 + 1, false).map_err(storage_error)?;
        for (k, stored) in listed {
            let Some(at) = seq_of_key(&k) else { continue };
            if at < start || at > head.seq || out.len() >= limit as usize {
                continue;
            }
            let entry: Entry = serde_json::from_slice(&stored.value).map_err(|_| {
                PolicyError::Storage(format!("entry {at} is not readable; `verify` names what is wrong"))
            })?;
            out.push(entry);
        }
        page += 1;
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
