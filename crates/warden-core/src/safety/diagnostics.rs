//! What operators see of the safety check: counters, warnings about host
//! settings that defeat it, and log lines that are written once per change
//! rather than once per turn.
//!
//! Turns reveal the host settings (queue mode, hook timeout) and whether the
//! classifier's key is present; that is kept in one record in storage so that
//! `diagnostics()` on any instance can report it. Failure mode: none of this
//! changes an outcome; a record that cannot be written is logged and dropped.

use super::config::SafetyConfig;
use crate::model::{QueueMode, SafetyOutcome, Turn};
use crate::ports::{Level, Ports};
use crate::prelude::*;
use crate::store;
use serde::{Deserialize, Serialize};

/// Storage namespace of the check's own state.
pub const NAMESPACE: &str = "safety";
/// Key of the state record.
pub const STATE_KEY: &str = "state";
/// How long after the last turn in `steer` mode the warning stays, in
/// milliseconds of turns seen since (one day): queue modes can differ per
/// channel, so one turn in another mode does not prove the setting was fixed.
pub const STEER_WARNING_MS: u64 = 24 * 60 * 60 * 1000;

/// Warning: a turn arrived with queue mode `steer`.
pub const QUEUE_MODE_STEER: &str = "queue_mode_steer";
/// Warning: the host's hook timeout does not exceed `timeoutMs`.
pub const HOOK_TIMEOUT_BELOW: &str = "host_hook_timeout_below_whisperer_timeouts";

/// Counter of turns without provider, account or sender ID.
pub const MISSING_IDENTITY_COUNTER: &str = "safety.missing_identity";

/// Counter of one outcome.
pub fn outcome_counter(outcome: SafetyOutcome) -> String {
    format!("safety.outcome.{}", outcome.as_str())
}

/// Counter of one matched scenario.
pub fn scenario_counter(id: &str) -> String {
    format!("safety.scenario.{id}")
}

/// What turns have revealed, as stored.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct State {
    /// The newest turn's clock.
    pub last_turn_ms: u64,
    /// The newest turn in `steer` mode.
    pub steer_seen_ms: Option<u64>,
    /// The hook timeout the host declared last.
    pub hook_timeout_ms: Option<u32>,
    /// A missing key was logged and has not come back since.
    pub missing_key_logged: bool,
    /// The first turn without identity was logged.
    pub missing_identity_logged: bool,
}

impl State {
    fn steer_warning(&self) -> bool {
        self.steer_seen_ms
            .and_then(|seen| crate::time::age(seen, self.last_turn_ms))
            .is_some_and(|age| age <= STEER_WARNING_MS)
    }

    /// The host will cut the hook off before the classifier's deadline, or at it.
    fn hook_warning(&self, config: &SafetyConfig) -> bool {
        self.hook_timeout_ms.is_some_and(|hook| hook <= config.timeout_ms)
    }

    fn warnings(&self, config: &SafetyConfig) -> Vec<String> {
        let mut out = Vec::new();
        if self.steer_warning() {
            out.push(format!(
                "{QUEUE_MODE_STEER}: turns arrive with queue mode `steer`, which adds messages to a running turn \
                 without checking them; use `followup` or `collect`"
            ));
        }
        if let Some(hook) = self.hook_timeout_ms.filter(|_| self.hook_warning(config)) {
            out.push(format!(
                "{HOOK_TIMEOUT_BELOW}: the host's hook timeout ({hook} ms) does not exceed safety.timeoutMs \
                 ({} ms), so the host can drop a safety prompt the check added",
                config.timeout_ms
            ));
        }
        out
    }
}

/// Whether this turn showed the classifier's key present, missing, or neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeySeen {
    Present,
    Missing,
    Unknown,
}

/// Records what the turn revealed and logs what changed: a warning that
/// appears, a key that goes missing or comes back, the first turn without
/// identity. Returns the warnings in force after this turn.
pub fn observe(
    ports: &Ports<'_>,
    config: &SafetyConfig,
    turn: &Turn,
    key: KeySeen,
    missing_identity: bool,
) -> Vec<String> {
    let apply = |old: &State| {
        let mut new = old.clone();
        // A time dated further ahead than the skew is replaced, not kept (see `crate::time`).
        let latest =
            |old: u64| if crate::time::credible(old, turn.now_ms) { old.max(turn.now_ms) } else { turn.now_ms };
        new.last_turn_ms = latest(new.last_turn_ms);
        if turn.queue_mode == Some(QueueMode::Steer) {
            new.steer_seen_ms = Some(latest(new.steer_seen_ms.unwrap_or(0)));
        }
        if let Some(hook) = turn.hook_timeout_ms {
            new.hook_timeout_ms = Some(hook);
        }
        match key {
            KeySeen::Present => new.missing_key_logged = false,
            KeySeen::Missing => new.missing_key_logged = true,
            KeySeen::Unknown => {}
        }
        new.missing_identity_logged |= missing_identity;
        new
    };
    let mut before = State::default();
    let mut after = State::default();
    let result = store::update_json::<State>(ports.storage, NAMESPACE, STATE_KEY, |current| {
        before = current.unwrap_or_default();
        after = apply(&before);
        (after != before).then(|| after.clone())
    });
    if let Err(e) = result {
        ports.log.write(Level::Warn, &format!("safety: state not updated: {e}"));
        // Without the record, log as if nothing had been logged yet.
        before = State::default();
        after = apply(&before);
    }
    if key == KeySeen::Missing && !before.missing_key_logged {
        ports.log.write(
            Level::Warn,
            "safety: the classifier's credential is missing, so turns are not checked (missing_key); \
             logged once until it is back",
        );
    }
    if key == KeySeen::Present && before.missing_key_logged {
        ports.log.write(Level::Info, "safety: the classifier's credential is back; turns are checked again");
    }
    if missing_identity && !before.missing_identity_logged {
        ports.log.write(
            Level::Warn,
            "safety: a turn arrived without provider, account or sender ID (missing_identity); such requesters \
             are never approved and their channels never excluded; logged for the first such turn only",
        );
    }
    if after.steer_warning() && !before.steer_warning() {
        ports.log.write(Level::Warn, &format!("safety: warning {QUEUE_MODE_STEER}"));
    }
    if after.hook_warning(config) && !before.hook_warning(config) {
        ports.log.write(Level::Warn, &format!("safety: warning {HOOK_TIMEOUT_BELOW}"));
    }
    after.warnings(config)
}

/// Warnings in force, from what turns have revealed so far.
pub fn warnings(config: &SafetyConfig, ports: &Ports<'_>) -> Vec<String> {
    if !config.enabled {
        return Vec::new();
    }
    match store::get_json::<State>(ports.storage, NAMESPACE, STATE_KEY) {
        Ok(state) => state.map(|(s, _)| s.warnings(config)).unwrap_or_default(),
        Err(e) => vec![format!("safety_state_unreadable: {e}")],
    }
}
