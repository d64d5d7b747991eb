//! Provenance at the tool seam: where a destination came from.
//!
//! The host reports what tools returned (`observe-tool-result`); the values in
//! those results that could be destinations are recorded for the session as
//! seen in untrusted content, and the values the person named in their own
//! message (`check-turn`) as named by the person. Outgoing calls (message,
//! share, invite, payment, fetch) and outbound messages then class each
//! destination: consented, trusted, named by the person, approved, seen only
//! in untrusted content, or unknown (see [`classify`]), and the `flow`
//! section says what each class decides (see [`config`]).
//!
//! Failure modes: a tool result that cannot be recorded (storage down) is an
//! error to the host and leaves its values unknown, which asks by default.
//! Values of the person's message that cannot be recorded leave them unknown
//! too; the turn itself is never changed (check-turn fails open). The flow
//! step of a tool call fails closed (`tools.storage-unavailable`), and of an
//! outbound message too (`flow.storage-unavailable`).

pub mod classify;
pub mod config;
pub mod decide;
pub mod extract;
pub mod record;
#[cfg(test)]
mod tests;

pub use classify::Known;
pub use config::FlowConfig;

use crate::gate::GateConfig;
use crate::model::{Observation, PolicyError, Signal, ToolResult, Trigger, Turn};
use crate::ports::{Level, Ports};
use crate::prelude::*;
use record::{Change, Source};

/// Rules and signals of the flow check.
pub mod rules {
    /// A destination seen only in content the agent read.
    pub const UNTRUSTED_DESTINATION: &str = "flow.untrusted-destination";
    /// A destination neither consented, named, trusted, approved nor seen.
    pub const UNKNOWN_DESTINATION: &str = "flow.unknown-destination";
    /// A link in an outgoing body whose host is not trusted.
    pub const FOREIGN_LINK: &str = "flow.foreign-link";
    /// An outbound message whose destinations raise nothing (only as a signal).
    pub const PASSED: &str = "flow.passed";
    /// The flow record of an outbound message could not be read.
    pub const STORAGE_UNAVAILABLE: &str = "flow.storage-unavailable";
    /// Signal: a tool result without a session, so nothing was recorded.
    pub const NO_SESSION: &str = "flow.no-session";
    /// Signal: values past a bound were not recorded.
    pub const DROPPED: &str = "flow.dropped";
    /// Signal: the person's values could not be recorded.
    pub const NOT_RECORDED: &str = "flow.not-recorded";
}

/// Most values recorded from one tool result or one message; more are dropped.
pub const MAX_VALUES_PER_RESULT: usize = 256;
/// Most names (words and runs of up to three words) recorded from the
/// person's message, besides its destinations; more are dropped.
pub const MAX_NAMES_PER_MESSAGE: usize = 192;
/// Longest value recorded, in characters; a longer one is dropped.
pub const MAX_VALUE_CHARS: usize = decide::MAX_VALUE_CHARS;
/// Most characters of a tool result or message searched for values; the rest is not read.
pub const MAX_CONTENT_CHARS: usize = 1024 * 1024;

/// What the flow check needs from the instance: its settings, the gate's
/// (for consent), the host's approval secret, the cached key and the
/// settings' version (values approved `always` are bound to it).
pub struct Flow<'a> {
    pub config: &'a FlowConfig,
    pub gate: &'a GateConfig,
    pub secret: &'a [u8],
    pub keys: &'a record::Keys,
    pub version: &'a str,
}

fn prefix(text: &str) -> &str {
    match text.char_indices().nth(MAX_CONTENT_CHARS) {
        Some((cut, _)) => text.get(..cut).unwrap_or(text),
        None => text,
    }
}

/// The canonical values of `text`, at most `limit`, and how many were left out.
fn values(text: &str, limit: usize) -> (Vec<String>, u32) {
    let found = extract::extract(prefix(text), limit.saturating_add(1));
    let mut out: Vec<String> = Vec::new();
    let mut dropped = 0u32;
    for f in found {
        if out.len() >= limit || f.value.chars().count() > MAX_VALUE_CHARS {
            dropped = dropped.saturating_add(1);
            continue;
        }
        if !out.contains(&f.value) {
            out.push(f.value);
        }
    }
    (out, dropped)
}

/// Records the destinations in a tool's result for its session, as seen in
/// untrusted content of that tool. A result without a session records
/// nothing (a signal says so). One storage read and one conditional write.
pub fn observe(flow: &Flow<'_>, ports: &Ports<'_>, result: &ToolResult) -> Result<Observation, PolicyError> {
    if !flow.config.enabled {
        return Ok(Observation::default());
    }
    let (found, dropped) = values(&result.content, MAX_VALUES_PER_RESULT);
    let count = u32::try_from(found.len()).unwrap_or(u32::MAX);
    let mut obs = Observation { found: count.saturating_add(dropped), recorded: 0, dropped, signals: Vec::new() };
    if dropped > 0 {
        obs.signals.push(Signal::new(
            rules::DROPPED,
            format!("{dropped} values past the bounds were not recorded; later calls see them as unknown"),
        ));
    }
    let Some(session) = result.session_id.as_deref().filter(|s| !s.trim().is_empty()) else {
        obs.dropped = obs.found;
        obs.signals.push(Signal::new(
            rules::NO_SESSION,
            "the result names no session, so its values were not recorded; later calls see them as unknown",
        ));
        return Ok(obs);
    };
    if found.is_empty() {
        return Ok(obs);
    }
    let tool: String = result.tool_name.chars().take(record::MAX_SOURCE_CHARS).collect();
    let recorded = record_values(flow, ports, session, &found, Some(Source::Tool(tool)), None, result.now_ms)?;
    obs.recorded = u32::try_from(recorded).unwrap_or(u32::MAX);
    Ok(obs)
}

/// Records `values` for a session: as seen in `source`, or as named by `named`.
fn record_values(
    flow: &Flow<'_>,
    ports: &Ports<'_>,
    session: &str,
    values: &[String],
    source: Option<Source>,
    named: Option<&crate::model::Identity>,
    now_ms: u64,
) -> Result<usize, PolicyError> {
    let key = flow.keys.get(ports.storage, flow.secret, now_ms)?;
    let hashes: Vec<String> = values.iter().map(|v| key.value(v)).collect();
    let change = match (source, named) {
        (_, Some(identity)) => Change::Named(&hashes, key.identity(identity)),
        (Some(source), None) => Change::Seen(&hashes, source),
        (None, None) => return Ok(0),
    };
    let digest = record::session_digest(Some(session));
    let recorded = record::update_session(
        ports.storage,
        &key,
        &digest,
        &change,
        now_ms,
        flow.config.ttl_ms(),
        flow.config.max_values(),
    )?;
    Ok(recorded.len())
}

/// Records the values of a turn: the person's own message (trigger `user`)
/// as named by them, bound to their identity; a peer's or an automation's
/// message, and channel-context messages written by others, as untrusted.
/// Never changes the turn: a failure only adds a signal.
pub fn record_turn(flow: &Flow<'_>, ports: &Ports<'_>, turn: &Turn) -> Vec<Signal> {
    if !flow.config.enabled {
        return Vec::new();
    }
    let Some(session) = turn.session_id.as_deref().filter(|s| !s.trim().is_empty()) else {
        return Vec::new();
    };
    let mut failures = Vec::new();
    let mut run = |text: &str, source: Option<Source>, named: Option<&crate::model::Identity>| {
        let (mut found, _) = values(text, MAX_VALUES_PER_RESULT);
        if named.is_some() {
            for f in extract::names(prefix(text), MAX_NAMES_PER_MESSAGE) {
                if !found.contains(&f.value) {
                    found.push(f.value);
                }
            }
        }
        if found.is_empty() {
            return;
        }
        if let Err(e) = record_values(flow, ports, session, &found, source, named, turn.now_ms) {
            failures.push(e);
        }
    };
    match turn.trigger {
        Trigger::User => run(&turn.message, None, Some(&turn.identity)),
        Trigger::Peer => run(&turn.message, Some(Source::Peer), None),
        Trigger::Automation => run(&turn.message, Some(Source::Automation), None),
    }
    let sender = turn.identity.sender_id.as_deref();
    let context = &turn.context;
    let others = context.thread_starter.iter().chain(&context.replied_to).chain(&context.since_last_reply);
    let mut text = String::new();
    for m in others {
        let by_person = turn.trigger == Trigger::User
            && m.role == crate::model::Role::User
            && m.author.as_deref().is_some_and(|a| Some(a) == sender);
        if !by_person {
            text.push_str(&m.text);
            text.push('\n');
        }
    }
    if !text.is_empty() {
        run(&text, Some(Source::Channel), None);
    }
    if failures.is_empty() {
        return Vec::new();
    }
    ports.log.write(Level::Warn, "flow: the turn's values could not be recorded; later calls see them as unknown");
    vec![Signal::new(
        rules::NOT_RECORDED,
        "the values of this turn could not be recorded, so later calls see them as unknown",
    )]
}
