//! The tool call judged in its turn: what the person last said, how many
//! calls the agent made since, and whether a step failed.
//!
//! The component learns the turn from what hosts already send: the person's
//! message from `check-turn` (trigger `user`), every call from
//! `check-tool-call`, and failures from `observe-tool-result` (`is-error`).
//! Per session it keeps one fixed-size record in the `context` namespace
//! under the session's digest: when the person last wrote, whether that
//! message asked to stop or confirmed, the calls since, and whether a failure
//! is waiting. Message text is never stored, only these facts.
//!
//! Rules, as findings of the tool judge (see [`crate::tools`]):
//! - `context.user-stop` (deny): the person's latest message asks to stop;
//!   every call is refused until the person writes again. Checked before
//!   remembered answers, so an earlier "always allow" does not pass it.
//! - `context.tool-loop` (ask): more than `maxCallsPerMessage` calls since
//!   the person's last message.
//! - `context.after-error` (ask): the first call that is not a read after a
//!   reported failure.
//! - `context.confirmation-required` (ask): a call of a `confirmKinds` kind
//!   while the person's latest message does not confirm.
//!
//! The asks come after remembered answers, so a person's approval of the
//! exact call is remembered as for every other ask of the judge.
//!
//! Failure modes: a tool call whose context cannot be read or written is
//! refused (`tools.storage-unavailable`, fail-closed, like the judge). A
//! person's message that cannot be recorded leaves the earlier context in
//! place and the turn unchanged (check-turn fails open), with the signal
//! `context.storage-unavailable`; so a stop that could not be recorded does
//! not stop. A failure report that cannot be recorded is an error to the
//! host. Calls without a session have no context and are not judged by it.

pub mod config;
pub mod drift;
#[cfg(test)]
mod tests;
pub mod words;

pub use config::ContextConfig;
pub use drift::DriftConfig;

use crate::model::{Mode, Signal, ToolCall, ToolResult, Trigger, Turn};
use crate::ports::{Condition, Ports, StorageError};
use crate::prelude::*;
use crate::tools::Finding;
use crate::tools::taxonomy::Kind;
use serde::{Deserialize, Serialize};

/// Storage namespace of the session records.
pub const NAMESPACE: &str = "context";
/// Format of the session record.
pub const FORMAT: u8 = 1;

/// The person asked to stop.
pub const USER_STOP: &str = "context.user-stop";
/// Too many calls since the person's last message.
pub const TOOL_LOOP: &str = "context.tool-loop";
/// The first call that is not a read after a reported failure.
pub const AFTER_ERROR: &str = "context.after-error";
/// A kind the person confirms first.
pub const CONFIRMATION_REQUIRED: &str = "context.confirmation-required";
/// Signal: a person's message or a failure report could not be recorded.
pub const STORAGE_UNAVAILABLE: &str = "context.storage-unavailable";
/// Signal: the person's message asks to stop.
pub const STOP_REQUESTED: &str = "context.stop-requested";

/// What a session's record holds. Every field is a fixed-size fact, so the
/// record stays the same size however long the session runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    /// Format of the record.
    #[serde(rename = "f")]
    pub format: u8,
    /// When the person last wrote, or 0.
    #[serde(rename = "m")]
    pub message_at_ms: u64,
    /// When the record last changed.
    #[serde(rename = "u")]
    pub updated_at_ms: u64,
    /// The person's latest message asks to stop.
    #[serde(rename = "s")]
    pub stop: bool,
    /// The person's latest message confirms.
    #[serde(rename = "c")]
    pub confirmed: bool,
    /// Calls since the person's latest message (saturating).
    #[serde(rename = "n")]
    pub calls: u32,
    /// A failure was reported and no call that is not a read has run since.
    #[serde(rename = "e")]
    pub error_pending: bool,
}

/// What the turn context says about one call, before the judge decides.
#[derive(Debug, Clone, Default)]
pub struct Pre {
    /// The stop finding, checked before remembered answers.
    pub stop: Option<Finding>,
    /// Ask findings, checked with the judge's ask rules.
    pub asks: Vec<Finding>,
    /// Signals: observe-mode findings and notes.
    pub signals: Vec<Signal>,
}

/// The record key of a session.
pub fn key(session: &str) -> String {
    format!("s:{}", crate::flow::record::session_digest(Some(session)))
}

fn session_of(s: Option<&str>) -> Option<&str> {
    s.filter(|s| !s.is_empty())
}

fn fresh(config: &ContextConfig, state: Option<State>, now_ms: u64) -> State {
    match state {
        Some(s) if s.format == FORMAT && now_ms.saturating_sub(s.updated_at_ms) <= config.idle_ms() => s,
        _ => State { format: FORMAT, ..State::default() },
    }
}

/// Records the person's message of a turn. Returns signals for the turn.
pub fn on_turn(config: &ContextConfig, ports: &Ports<'_>, turn: &Turn) -> Vec<Signal> {
    if !config.enabled || turn.trigger != Trigger::User {
        return Vec::new();
    }
    let Some(session) = session_of(turn.session_id.as_deref()) else {
        return Vec::new();
    };
    let stop = config.stop && words::asks_to_stop(&turn.message);
    let state = State {
        format: FORMAT,
        message_at_ms: turn.now_ms,
        updated_at_ms: turn.now_ms,
        stop,
        confirmed: words::confirms(&turn.message),
        calls: 0,
        error_pending: false,
    };
    match crate::store::put_json(ports.storage, NAMESPACE, &key(session), &state, Condition::Any) {
        Ok(_) if stop => vec![Signal::new(
            STOP_REQUESTED,
            "The person's message asks to stop: tool calls are refused until they write again.",
        )],
        Ok(_) => Vec::new(),
        Err(e) => vec![Signal::new(
            STORAGE_UNAVAILABLE,
            format!(
                "The person's message could not be recorded for the turn context ({e}); the earlier context stays."
            ),
        )],
    }
}

/// Records a reported tool failure.
pub fn on_result(config: &ContextConfig, ports: &Ports<'_>, result: &ToolResult) -> Result<(), StorageError> {
    if !config.enabled || !config.after_error || !result.is_error {
        return Ok(());
    }
    let Some(session) = session_of(result.session_id.as_deref()) else {
        return Ok(());
    };
    crate::store::update_json::<State>(ports.storage, NAMESPACE, &key(session), |current| {
        let mut s = fresh(config, current, result.now_ms);
        s.error_pending = true;
        s.updated_at_ms = s.updated_at_ms.max(result.now_ms);
        Some(s)
    })?;
    Ok(())
}

/// Judges a call in its turn and counts it. `kind` is the call's tool kind;
/// `decision_of` says what a rule decides under the judge's settings, for
/// observe-mode signals.
pub fn before_call(
    config: &ContextConfig,
    ports: &Ports<'_>,
    call: &ToolCall,
    kind: Kind,
    decision_of: &dyn Fn(&str) -> &'static str,
) -> Result<Pre, StorageError> {
    if !config.enabled {
        return Ok(Pre::default());
    }
    let Some(session) = session_of(call.session_id.as_deref()) else {
        return Ok(Pre::default());
    };
    let mut seen = State::default();
    crate::store::update_json::<State>(ports.storage, NAMESPACE, &key(session), |current| {
        let mut s = fresh(config, current, call.now_ms);
        seen = s.clone();
        s.calls = s.calls.saturating_add(1);
        if kind != Kind::Read {
            s.error_pending = false;
        }
        s.updated_at_ms = s.updated_at_ms.max(call.now_ms);
        Some(s)
    })?;
    let mut pre = Pre::default();
    let tool = crate::config::reader::Shortened(&call.tool_name);
    if seen.stop {
        pre.stop = Some(Finding {
            rule: USER_STOP,
            reason: format!("The person's latest message asks to stop, so `{tool}` is not run until they write again."),
        });
    }
    let calls = u64::from(seen.calls).saturating_add(1);
    if config.max_calls_per_message > 0 && calls > config.max_calls_per_message {
        pre.asks.push(Finding {
            rule: TOOL_LOOP,
            reason: format!(
                "This is call {calls} since the person's last message (more than {}), so a person approves `{tool}`.",
                config.max_calls_per_message
            ),
        });
    }
    if config.after_error && seen.error_pending && kind != Kind::Read {
        pre.asks.push(Finding {
            rule: AFTER_ERROR,
            reason: format!("An earlier step of this session failed, so a person approves `{tool}` before it runs."),
        });
    }
    if config.confirm_kinds.contains(&kind) && !seen.confirmed {
        pre.asks.push(Finding {
            rule: CONFIRMATION_REQUIRED,
            reason: format!(
                "`{tool}` is a {} tool, which runs only after the person's latest message confirms.",
                kind.as_str()
            ),
        });
    }
    if config.mode == Mode::Observe {
        for f in pre.stop.take().into_iter().chain(core::mem::take(&mut pre.asks)) {
            pre.signals.push(Signal::new(f.rule, format!("observed: {}. {}", decision_of(f.rule), f.reason)));
        }
    }
    Ok(pre)
}
