//! Token and call budgets per agent over rolling windows.
//!
//! Each budget keeps, per agent, counts in [`BUCKETS`] buckets that together
//! span its window, so a window is rolling with a granularity of 1/60 of its
//! length (one minute for an hour). Calls are counted by the judge as it
//! judges them; tokens come from the host through `record-usage`. At the
//! warning share (80% by default) a signal is added and the call still runs;
//! at 100% the call is denied. A call denied by its budget is not counted.
//! Storage failures fail closed: the judge denies the call.

use super::rules;
use crate::config::reader::{Node, Reader};
use crate::digest::sha256_hex;
use crate::model::{PolicyError, Signal, Usage};
use crate::ports::{Storage, StorageError};
use crate::prelude::*;
use crate::store;
use serde::{Deserialize, Serialize};

/// Storage namespace of budgets, keyed by `tokens:` or `calls:` and a digest of the agent ID.
pub const NAMESPACE: &str = "tools.budget";
/// Buckets per window.
pub const BUCKETS: u64 = 60;
/// Shortest window, in minutes.
pub const MIN_WINDOW_MINUTES: u64 = 1;
/// Longest window, in minutes (30 days).
pub const MAX_WINDOW_MINUTES: u64 = 43_200;
/// Default window, in minutes.
pub const DEFAULT_WINDOW_MINUTES: u64 = 60;
/// Largest token limit.
pub const MAX_TOKEN_LIMIT: u64 = 1_000_000_000_000;
/// Largest call limit.
pub const MAX_CALL_LIMIT: u64 = 1_000_000_000;
/// Default warning share, in percent of the limit.
pub const DEFAULT_WARN_PERCENT: u64 = 80;
/// The agent ID used when the host names none.
pub const DEFAULT_AGENT: &str = "default";
/// Longest agent ID accepted by `record-usage`, in characters.
pub const MAX_AGENT_CHARS: usize = 512;

/// A limit over a rolling window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase")]
pub struct Window {
    /// The most that may be used within the window.
    pub limit: u64,
    /// The window's length, in minutes. Default 60.
    #[serde(default = "default_window_minutes")]
    #[cfg_attr(feature = "schema", schemars(range(min = MIN_WINDOW_MINUTES, max = MAX_WINDOW_MINUTES)))]
    pub window_minutes: u64,
}

// Used by the schema derive, which reads serde's defaults.
#[cfg_attr(not(feature = "schema"), allow(dead_code))]
fn default_window_minutes() -> u64 {
    DEFAULT_WINDOW_MINUTES
}

#[cfg_attr(not(feature = "schema"), allow(dead_code))]
fn default_warn_percent() -> u64 {
    DEFAULT_WARN_PERCENT
}

impl Window {
    fn window_ms(&self) -> u64 {
        self.window_minutes.saturating_mul(60_000)
    }

    fn bucket_ms(&self) -> u64 {
        (self.window_ms() / BUCKETS).max(1)
    }
}

/// The `tools.budget` section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase")]
pub struct BudgetConfig {
    /// Model tokens per agent, as reported through `record-usage`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Window>,
    /// Tool calls per agent, counted by the judge.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calls: Option<Window>,
    /// Share of a limit, in percent, from which a warning signal is added. Default 80.
    #[serde(default = "default_warn_percent")]
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = 100)))]
    pub warn_percent: u64,
}

pub(super) fn read(r: &mut Reader, node: &Node<'_>) -> Option<BudgetConfig> {
    let obj = r.object(node, &["tokens", "calls", "warnPercent"])?;
    let tokens = super::config::read_window(r, &obj, "tokens", MAX_TOKEN_LIMIT);
    let calls = super::config::read_window(r, &obj, "calls", MAX_CALL_LIMIT);
    let warn_percent = r.int(&obj, "warnPercent", 1..=100, DEFAULT_WARN_PERCENT);
    Some(BudgetConfig { tokens, calls, warn_percent })
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Buckets {
    /// (bucket start in ms, amount)
    b: Vec<(u64, u64)>,
}

impl Buckets {
    fn prune(&mut self, window: &Window, now: u64) {
        let from = now.saturating_sub(window.window_ms());
        self.b
            .retain(|(start, _)| start.saturating_add(window.bucket_ms()) > from && crate::time::credible(*start, now));
        // Buckets dated further ahead than the skew `crate::time` allows (a clock
        // that jumped back, a request stamped far ahead) are dropped above.
        if self.b.len() as u64 > BUCKETS + 1 {
            let excess = self.b.len() - (BUCKETS as usize + 1);
            self.b.drain(..excess);
        }
    }

    fn total(&self) -> u64 {
        self.b.iter().fold(0u64, |sum, (_, n)| sum.saturating_add(*n))
    }

    fn add(&mut self, window: &Window, now: u64, amount: u64) {
        let start = now - now % window.bucket_ms();
        match self.b.last_mut() {
            Some((s, n)) if *s == start => *n = n.saturating_add(amount),
            _ => self.b.push((start, amount)),
        }
    }
}

fn key(what: &str, agent: &str) -> String {
    format!("{what}:{}", sha256_hex(agent.as_bytes()).get(..32).unwrap_or(""))
}

/// What the budget says about a call.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The rule that denies the call, with the reason.
    pub exceeded: Option<(&'static str, String)>,
    pub signals: Vec<Signal>,
}

fn warning(config: &BudgetConfig, used: u64, window: &Window, name: &str, what: &str) -> Option<Signal> {
    let at = (used as u128) * 100 >= (window.limit as u128) * (config.warn_percent as u128);
    at.then(|| {
        Signal::new(
            name,
            format!("{used} of {} {what} used in the last {} minutes", window.limit, window.window_minutes),
        )
    })
}

/// Checks the agent's budgets and counts the call. `count_over` counts a call
/// even when its budget is spent (observe mode, where the call still runs).
pub fn check(
    config: &BudgetConfig,
    storage: &dyn Storage,
    agent: &str,
    now: u64,
    count_over: bool,
) -> Result<Outcome, StorageError> {
    let mut out = Outcome::default();
    if let Some(window) = &config.tokens {
        let used = match store::get_json::<Buckets>(storage, NAMESPACE, &key("tokens", agent))? {
            Some((mut b, _)) => {
                b.prune(window, now);
                b.total()
            }
            None => 0,
        };
        if used >= window.limit {
            out.exceeded = Some((
                rules::BUDGET_TOKENS,
                format!(
                    "This agent used {used} tokens in the last {} minutes; its budget is {}.",
                    window.window_minutes, window.limit
                ),
            ));
        } else if let Some(s) = warning(config, used, window, rules::SIGNAL_TOKENS_WARNING, "tokens") {
            out.signals.push(s);
        }
    }
    if let Some(window) = &config.calls {
        let denied_already = out.exceeded.is_some() && !count_over;
        let mut used = 0;
        let mut over = false;
        store::update_json::<Buckets>(storage, NAMESPACE, &key("calls", agent), |b| {
            let mut b = b.unwrap_or_default();
            b.prune(window, now);
            used = b.total();
            over = used >= window.limit;
            if denied_already || (over && !count_over) {
                return None;
            }
            b.add(window, now, 1);
            Some(b)
        })?;
        if over {
            out.exceeded = out.exceeded.or(Some((
                rules::BUDGET_CALLS,
                format!(
                    "This agent made {used} tool calls in the last {} minutes; its budget is {}.",
                    window.window_minutes, window.limit
                ),
            )));
        } else if let Some(s) = warning(config, used + 1, window, rules::SIGNAL_CALLS_WARNING, "calls") {
            out.signals.push(s);
        }
    }
    Ok(out)
}

/// Adds reported tokens to the agent's token budget.
pub fn record(config: Option<&BudgetConfig>, storage: &dyn Storage, usage: &Usage) -> Result<(), PolicyError> {
    let agent = usage.agent_id.as_deref().unwrap_or(DEFAULT_AGENT);
    let chars = agent.chars().count();
    if agent.trim().is_empty() || chars > MAX_AGENT_CHARS {
        return Err(PolicyError::InvalidInput(format!(
            "agentId: must be 1 to {MAX_AGENT_CHARS} characters and not blank, got {chars}"
        )));
    }
    let Some(window) = config.and_then(|c| c.tokens.as_ref()) else {
        return Ok(());
    };
    if usage.tokens == 0 {
        return Ok(());
    }
    store::update_json::<Buckets>(storage, NAMESPACE, &key("tokens", agent), |b| {
        let mut b = b.unwrap_or_default();
        b.prune(window, usage.now_ms);
        b.add(window, usage.now_ms, usage.tokens);
        Some(b)
    })?;
    Ok(())
}
