//! Cross-session risk fingerprints: the shape of the calls that led to a
//! deny, recognized when it starts again in another session.
//!
//! Each call is reduced to a step: its tool kind, the sensitive targets its
//! arguments touch (the drift check's categories: ssh keys, cloud, system
//! and crypto credentials, exfiltration, privilege escalation, persistence),
//! whether it names a network host, and a keyed hash of what runs (a shell
//! call's program, else the tool's name). A session keeps its last `length`
//! steps. When a call is denied (by any rule but this check's own, a stop,
//! or a storage failure), the steps ending with it are a pattern, counted
//! once per session in a slot chosen by its keyed hash. When the steps of a
//! new call complete a pattern counted `recurrences` times within
//! `windowDays`, the call asks (`risk.recurring-pattern`, high), and in
//! observe mode it is a signal.
//!
//! Stored (namespace `risk`): per session one record of at most
//! [`config::MAX_LENGTH`] steps and [`MAX_COUNTED`] pattern hashes; at most
//! `maxPatterns` pattern slots, a newer pattern taking an occupied slot. No
//! tool name, argument, path or host is stored in clear.
//!
//! Failure mode: a record that cannot be read or written adds the signal
//! `risk.unavailable` and decides nothing (fail-open): the patterns are a
//! memory of past denies, and the rules that denied them still decide.

pub mod config;
#[cfg(test)]
mod tests;

pub use config::RiskConfig;

use crate::digest::MacKey;
use crate::model::{Decision, Mode, Signal, ToolCall, Verdict};
use crate::ports::{Storage, StorageError};
use crate::prelude::*;
use crate::tools::Finding;
use crate::tools::exec::Parsed;
use crate::tools::taxonomy::{Kind, ToolEntry};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Storage namespace of the check.
pub const NAMESPACE: &str = "risk";
/// Format of the records.
pub const FORMAT: u8 = 1;
/// Patterns one session counts at most (a session denied again and again counts each pattern once).
pub const MAX_COUNTED: usize = 8;
/// Fewest steps in a pattern: a call denied on its own is the judge's
/// business; a pattern is that call and what led to it.
pub const MIN_STEPS: usize = 2;
/// Patterns kept in one slot; past it the least recently denied goes.
pub const MAX_PER_SLOT: usize = 4;
/// The rule: the calls so far repeat a pattern that ended in a deny before.
pub const RECURRING_PATTERN: &str = "risk.recurring-pattern";
/// Signal: a record could not be read or written.
pub const UNAVAILABLE: &str = "risk.unavailable";
/// Rules whose denies are not counted: this check's own, a person's stop,
/// and failures of storage or of the audit trail.
pub const NOT_COUNTED: &[&str] = &["risk.", "context.user-stop", "tools.storage-unavailable", "audit."];
/// Shell words skipped to find the program of a command the parser refuses.
const WRAPPERS: &[&str] = &["sudo", "env", "nohup", "time", "exec", "command", "builtin", "nice", "doas"];

/// One session's last steps and the patterns it has counted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Session {
    #[serde(rename = "f")]
    pub format: u8,
    /// The last steps, oldest first.
    #[serde(rename = "s")]
    pub steps: Vec<u64>,
    /// Hashes of the patterns this session has counted.
    #[serde(rename = "c")]
    pub counted: Vec<String>,
}

/// One remembered pattern.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pattern {
    /// Its steps, oldest first (at least [`MIN_STEPS`]).
    #[serde(rename = "s")]
    pub steps: Vec<u64>,
    /// Sessions in which it ended in a deny.
    #[serde(rename = "n")]
    pub denies: u64,
    /// When it last ended in a deny.
    #[serde(rename = "t")]
    pub last_ms: u64,
    /// The rule of the last deny.
    #[serde(rename = "r")]
    pub rule: String,
}

/// One slot: the patterns whose last two steps hash to it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slot {
    #[serde(rename = "f")]
    pub format: u8,
    #[serde(rename = "p")]
    pub patterns: Vec<Pattern>,
}

/// What the check found before the judge, and what it writes after.
#[derive(Debug, Clone, Default)]
pub struct Pending {
    /// The ask, in enforce mode.
    pub ask: Option<Finding>,
    /// Signals for the verdict.
    pub signals: Vec<Signal>,
    /// The session's record key, when the call has a session and its record was read.
    session_key: Option<String>,
    session: Session,
    version: Option<u64>,
    /// The pattern this call would complete.
    pattern: String,
    /// The slot of the patterns this call's steps end with.
    slot: String,
    /// The call's time.
    now_ms: u64,
}

fn keyed(secret: &MacKey, what: &str, value: &[u8]) -> String {
    let mac = secret.mac(&[b"risk", what.as_bytes(), value]);
    crate::digest::hex(mac.get(..12).unwrap_or(&mac))
}

/// The program a shell command runs first, as the exec gate's parser reads
/// it (after `sudo -u x`, `env A=b`, `bash -c '…'` and folders); a command
/// the parser refuses falls back to its first plain word.
/// `parsed` is the exec gate's parse of its command: used when it is this
/// command, so the command is parsed once a call.
fn program(command: &str, parsed: Option<&Parsed<'_>>) -> String {
    let owned;
    let script = match parsed {
        Some((text, script)) if *text == command => script.as_ref().ok(),
        _ => {
            owned = crate::shell::parse(command);
            owned.as_ref().ok()
        }
    };
    if let Some(script) = script {
        let context = crate::shell::commands::Context { cwd: None, home: &crate::paths::NO_HOME, secret: &|_| false };
        let analysis = crate::shell::commands::analyse(script, &context);
        if let Some(first) = analysis.invocations.iter().find(|i| !i.program.is_empty()) {
            return first.program.to_lowercase();
        }
    }
    command
        .split(|c: char| c.is_whitespace() || matches!(c, ';' | '|' | '&' | '(' | ')' | '`'))
        .find(|w| !w.is_empty() && !w.contains('=') && !w.starts_with('-') && !WRAPPERS.contains(w))
        .map(|w| w.trim_matches(|c| c == '"' || c == '\''))
        .map(|w| w.rsplit('/').next().unwrap_or(w).to_lowercase())
        .unwrap_or_default()
}

/// A call as one step: kind (4 bits), network (1 bit), targets (8 bits) and
/// a 32-bit keyed hash of what runs (`parsed`: the exec gate's parse, see [`program`]).
pub fn step(
    secret: &MacKey,
    call: &ToolCall,
    entry: Option<&ToolEntry>,
    args: &Value,
    parsed: Option<&Parsed<'_>>,
) -> u64 {
    let kind = entry.map_or(Kind::Other, |e| e.kind);
    let text = crate::session::drift::call_text(call);
    let targets = crate::session::drift::target_bits(&text);
    let network = !crate::flow::extract::link_hosts(&text, 1).is_empty();
    let runs = if kind == Kind::Shell {
        let fields = entry.map(|e| e.command_fields.as_slice()).unwrap_or_default();
        let command = fields
            .iter()
            .map(String::as_str)
            .chain(["command", "cmd"])
            .find_map(|f| args.get(f).and_then(Value::as_str))
            .unwrap_or("");
        program(command, parsed)
    } else {
        call.tool_name.to_lowercase()
    };
    let mac = secret.mac(&[b"risk", b"runs", runs.as_bytes()]);
    let runs = u64::from(u32::from_be_bytes([mac[0], mac[1], mac[2], mac[3]]));
    let kind = Kind::ALL.iter().position(|(_, k)| *k == kind).unwrap_or(0) as u64 & 0xf;
    (kind << 41) | (u64::from(network) << 40) | (u64::from(targets) << 32) | runs
}

/// The keyed hash of the pattern made of `steps`.
fn pattern_hash(secret: &MacKey, steps: &[u64]) -> String {
    let bytes: Vec<u8> = steps.iter().flat_map(|s| s.to_be_bytes()).collect();
    keyed(secret, "pattern", &bytes)
}

/// The slot of the patterns that end with `steps`' last two steps, one of `maxPatterns`.
fn slot_key(config: &RiskConfig, secret: &MacKey, steps: &[u64]) -> String {
    let tail = steps.get(steps.len().saturating_sub(MIN_STEPS)..).unwrap_or(steps);
    let bytes: Vec<u8> = tail.iter().flat_map(|s| s.to_be_bytes()).collect();
    let mac = secret.mac(&[b"risk", b"slot", &bytes]);
    let n = u64::from_be_bytes([mac[0], mac[1], mac[2], mac[3], mac[4], mac[5], mac[6], mac[7]]);
    format!("p:{}", n % config.max_patterns.max(1))
}

fn session_key(secret: &MacKey, session: &str) -> String {
    format!("s:{}", keyed(secret, "session", session.as_bytes()))
}

fn unavailable(e: &StorageError) -> Signal {
    Signal::new(UNAVAILABLE, format!("risk patterns could not be read or written ({e}); nothing was decided by them"))
}

/// Before the judge: reads the session's steps and the slot of the pattern
/// this call would complete (two reads), and asks when it recurs.
pub fn before_call(
    config: &RiskConfig,
    secret: &MacKey,
    storage: &dyn Storage,
    call: &ToolCall,
    entry: Option<&ToolEntry>,
    args: &Value,
    parsed: Option<&Parsed<'_>>,
) -> Pending {
    let mut pending = Pending::default();
    if !config.enabled {
        return pending;
    }
    let Some(session) = call.session_id.as_deref().filter(|s| !s.is_empty()) else {
        return pending;
    };
    let key = session_key(secret, session);
    let (mut state, version) = match crate::store::get_json::<Session>(storage, NAMESPACE, &key) {
        Ok(Some((s, v))) if s.format == FORMAT => (s, Some(v)),
        Ok(Some((_, v))) => (Session::default(), Some(v)),
        Ok(None) => (Session::default(), None),
        Err(e) => {
            pending.signals.push(unavailable(&e));
            return pending;
        }
    };
    state.format = FORMAT;
    let length = config.length();
    let mut steps: Vec<u64> = state.steps.iter().rev().take(length.saturating_sub(1)).rev().copied().collect();
    steps.push(step(secret, call, entry, args, parsed));
    let hash = pattern_hash(secret, &steps);
    let slot = slot_key(config, secret, &steps);
    let recurring = |p: &&Pattern| {
        p.steps.len() >= MIN_STEPS
            && steps.ends_with(&p.steps)
            && p.denies >= config.recurrences
            && call.now_ms.saturating_sub(p.last_ms) <= config.window_ms()
    };
    if steps.len() >= MIN_STEPS {
        match crate::store::get_json::<Slot>(storage, NAMESPACE, &slot) {
            Ok(Some((slot, _))) if slot.format == FORMAT => {
                if let Some(p) = slot.patterns.iter().filter(recurring).max_by_key(|p| (p.denies, p.steps.len())) {
                    let finding = Finding {
                        rule: RECURRING_PATTERN,
                        reason: format!(
                            "The last {} call(s) of this session repeat a pattern that ended in a deny in {} other \
                             session(s) (last by `{}`).",
                            p.steps.len(),
                            p.denies,
                            crate::config::reader::Shortened(&p.rule)
                        ),
                    };
                    if config.mode == Mode::Observe {
                        let detail = format!("observed: ask. {}", finding.reason);
                        pending.signals.push(Signal::new(RECURRING_PATTERN, detail));
                    } else {
                        pending.ask = Some(finding);
                    }
                }
            }
            Ok(_) => {}
            Err(e) => pending.signals.push(unavailable(&e)),
        }
    }
    state.steps = steps;
    pending.session_key = Some(key);
    pending.session = state;
    pending.version = version;
    pending.pattern = hash;
    pending.now_ms = call.now_ms;
    pending.slot = slot;
    pending
}

fn counted(verdict: &Verdict) -> bool {
    let denied = verdict.decision == Decision::Deny || verdict.observed == Some(Decision::Deny);
    denied && !NOT_COUNTED.iter().any(|p| verdict.rule.starts_with(p))
}

/// After the judge: keeps the session's steps (one write) and, when the call
/// was denied, counts its pattern once for the session (a read and a write).
/// Failures become the `risk.unavailable` signal on the verdict.
pub fn after_call(config: &RiskConfig, storage: &dyn Storage, pending: Pending, verdict: &mut Verdict) {
    let Some(key) = pending.session_key else { return };
    let mut session = pending.session;
    let fail = |e: StorageError, verdict: &mut Verdict| verdict.signals.push(unavailable(&e));
    let steps = session.steps.clone();
    let count = counted(verdict) && steps.len() >= MIN_STEPS && !session.counted.contains(&pending.pattern);
    if count {
        if session.counted.len() >= MAX_COUNTED {
            session.counted.remove(0);
        }
        session.counted.push(pending.pattern.clone());
        let now = pending.now_ms;
        let rule = verdict.rule.clone();
        let window = config.window_ms();
        let written = crate::store::update_json::<Slot>(storage, NAMESPACE, &pending.slot, |current| {
            let mut slot =
                current.filter(|s| s.format == FORMAT).unwrap_or(Slot { format: FORMAT, patterns: Vec::new() });
            slot.patterns.retain(|p| now.saturating_sub(p.last_ms) <= window);
            match slot.patterns.iter_mut().find(|p| p.steps == steps) {
                Some(p) => {
                    p.denies = p.denies.saturating_add(1);
                    p.last_ms = p.last_ms.max(now);
                    p.rule.clone_from(&rule);
                }
                None => {
                    if slot.patterns.len() >= MAX_PER_SLOT
                        && let Some(i) = slot.patterns.iter().enumerate().min_by_key(|(_, p)| p.last_ms).map(|(i, _)| i)
                    {
                        slot.patterns.remove(i);
                    }
                    slot.patterns.push(Pattern { steps: steps.clone(), denies: 1, last_ms: now, rule: rule.clone() });
                }
            }
            Some(slot)
        });
        if let Err(e) = written {
            fail(e, verdict);
        }
    }
    let when = match pending.version {
        Some(v) => crate::ports::Condition::Version(v),
        None => crate::ports::Condition::Absent,
    };
    match crate::store::put_json(storage, NAMESPACE, &key, &session, when) {
        Ok(_) => {}
        // Another call of the session wrote first: its steps are as good as
        // these, and the next call reads them.
        Err(StorageError::Conflict) => {}
        Err(e) => fail(e, verdict),
    }
}
