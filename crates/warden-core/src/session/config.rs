//! The `context` section: which turn-context rules run, and their bounds.

use crate::config::reader::{Node, Obj, Reader, shown};
use crate::model::{CheckStatus, Mode};
use crate::prelude::*;
use crate::tools::taxonomy::Kind;
use serde::Serialize;

/// Default number of tool calls after the person's last message before
/// `context.tool-loop` asks.
pub const DEFAULT_MAX_CALLS_PER_MESSAGE: u64 = 20;
/// Largest `maxCallsPerMessage`; `0` turns the rule off.
pub const MAX_CALLS_PER_MESSAGE: u64 = 10_000;
/// Default time after which a session's context is forgotten, in minutes (one day).
pub const DEFAULT_IDLE_MINUTES: u64 = 24 * 60;
/// Shortest `idleMinutes`.
pub const MIN_IDLE_MINUTES: u64 = 1;
/// Longest `idleMinutes` (30 days).
pub const MAX_IDLE_MINUTES: u64 = 30 * 24 * 60;

/// The `context` section: the tool call judged in its turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase", default)]
pub struct ContextConfig {
    /// Whether tool calls are judged in their turn. On when the section is present.
    pub enabled: bool,
    /// `enforce`, or `observe` to report the rules as signals without deciding.
    pub mode: Mode,
    /// Whether a person's message asking to stop refuses the tool calls until their next message (`context.user-stop`).
    pub stop: bool,
    /// Tool calls allowed after the person's last message before each further one asks (`context.tool-loop`); `0` turns it off.
    #[cfg_attr(feature = "schema", schemars(range(max = MAX_CALLS_PER_MESSAGE)))]
    pub max_calls_per_message: u64,
    /// Whether the first call that is not a read after a reported tool failure asks (`context.after-error`).
    pub after_error: bool,
    /// Tool kinds that ask unless the person's latest message confirms (`context.confirmation-required`).
    pub confirm_kinds: Vec<Kind>,
    /// Minutes without a message, call or result after which a session's context is forgotten.
    #[cfg_attr(feature = "schema", schemars(range(min = MIN_IDLE_MINUTES, max = MAX_IDLE_MINUTES)))]
    pub idle_minutes: u64,
}

impl Default for ContextConfig {
    fn default() -> Self {
        ContextConfig {
            enabled: false,
            mode: Mode::Enforce,
            stop: true,
            max_calls_per_message: DEFAULT_MAX_CALLS_PER_MESSAGE,
            after_error: true,
            confirm_kinds: Vec::new(),
            idle_minutes: DEFAULT_IDLE_MINUTES,
        }
    }
}

fn read_kind(r: &mut Reader, node: Node<'_>) -> Option<Kind> {
    let kind = node.value.as_str().and_then(Kind::parse);
    if kind.is_none() {
        let allowed: Vec<String> = Kind::ALL.iter().map(|(n, _)| format!("`{n}`")).collect();
        r.error(node.path, format!("must be one of {}, got `{}`", allowed.join(", "), shown(node.value)));
    }
    kind
}

impl ContextConfig {
    /// Fields of the `context` section.
    pub const FIELDS: &'static [&'static str] =
        &["enabled", "mode", "stop", "maxCallsPerMessage", "afterError", "confirmKinds", "idleMinutes"];

    /// Reads the `context` section; absent means the check is off.
    pub fn read(r: &mut Reader, obj: Option<Obj<'_>>) -> ContextConfig {
        let mut c = ContextConfig::default();
        let Some(obj) = obj else {
            return c;
        };
        c.enabled = r.bool(&obj, "enabled", true);
        c.mode = crate::config::reader::mode(r, &obj);
        c.stop = r.bool(&obj, "stop", true);
        c.max_calls_per_message =
            r.int(&obj, "maxCallsPerMessage", 0..=MAX_CALLS_PER_MESSAGE, DEFAULT_MAX_CALLS_PER_MESSAGE);
        c.after_error = r.bool(&obj, "afterError", true);
        c.confirm_kinds = r
            .unique_list(&obj, "confirmKinds", Kind::ALL.len(), read_kind, "kind", "", |k| k.as_str().to_string())
            .unwrap_or_default();
        c.idle_minutes = r.int(&obj, "idleMinutes", MIN_IDLE_MINUTES..=MAX_IDLE_MINUTES, DEFAULT_IDLE_MINUTES);
        c
    }

    /// Whether the section is absent, so the policy version of a configuration without it does not change.
    pub fn is_absent(&self) -> bool {
        *self == ContextConfig::default()
    }

    /// The check's status for reports.
    pub fn status(&self) -> CheckStatus {
        CheckStatus {
            check: "context".into(),
            active: self.enabled,
            mode: self.mode.as_str().into(),
            reason: (!self.enabled).then(|| "not_configured".into()),
            failure_mode: "fail-closed".into(),
        }
    }

    /// How long a session's context lasts without activity, in milliseconds.
    pub fn idle_ms(&self) -> u64 {
        self.idle_minutes.saturating_mul(60_000)
    }
}
