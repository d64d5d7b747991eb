//! The configured policy and the order in which its checks run.

use crate::config::Config;
use crate::config::reader::ConfigError;
use crate::counters;
use crate::model::{
    Approval, CheckStatus, ConfigReport, Decision, Diagnostics, OutboundMessage, OutcomeReport, PinState, PolicyError,
    Risk, SafetyOutcome, ToolCall, Turn, TurnEnd, TurnOutcome, TurnStart, Usage, Verdict,
};
use crate::pin;
use crate::ports::{Level, Ports};
use crate::prelude::*;
use crate::rules;
use serde_json::Value;

/// Failure mode names, as reports spell them.
const FAIL_OPEN: &str = "fail-open";
const FAIL_CLOSED: &str = "fail-closed";

/// A validated configuration, ready to decide.
#[derive(Debug, Clone)]
pub struct Warden {
    config: Config,
    policy_version: String,
}

impl Warden {
    /// Validates `text` and builds the policy, or returns every error at once.
    pub fn configure(text: &str) -> Result<Warden, Vec<ConfigError>> {
        let config = Config::parse(text)?;
        let policy_version = config.policy_version();
        Ok(Warden { config, policy_version })
    }

    /// The validated configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Digest of the effective configuration.
    pub fn policy_version(&self) -> &str {
        &self.policy_version
    }

    /// What `configure` reports.
    pub fn report(&self) -> ConfigReport {
        ConfigReport { policy_version: self.policy_version.clone(), checks: self.checks(), warnings: Vec::new() }
    }

    fn checks(&self) -> Vec<CheckStatus> {
        let status = |check: &str, active: bool, reason: Option<&str>, failure_mode: &str| CheckStatus {
            check: check.to_string(),
            active,
            mode: "enforce".to_string(),
            reason: reason.map(str::to_string),
            failure_mode: failure_mode.to_string(),
        };
        let pin_on = self.config.pin.enabled;
        vec![
            status("pin", pin_on, (!pin_on).then_some("disabled"), FAIL_CLOSED),
            status("safety", false, Some("not_configured"), FAIL_OPEN),
            status("tools", false, Some("not_configured"), FAIL_CLOSED),
            status("gate", false, Some("not_configured"), FAIL_CLOSED),
            status("dlp", false, Some("not_configured"), FAIL_CLOSED),
        ]
    }

    /// Judges a tool call. Fails closed: arguments that are not a JSON object,
    /// and a pin that cannot be read, refuse the call.
    pub fn check_tool_call(&self, ports: &Ports<'_>, call: &ToolCall) -> Verdict {
        let verdict = self.judge_tool_call(ports, call);
        counters::bump(ports, &format!("tools.{}.{}", verdict.decision.as_str(), verdict.rule));
        let level = if verdict.decision == Decision::Allow { Level::Debug } else { Level::Info };
        ports.log.write(
            level,
            &format!(
                "tool call {}: {} by {}",
                crate::config::reader::shorten(&call.tool_name),
                verdict.decision.as_str(),
                verdict.rule
            ),
        );
        verdict
    }

    fn judge_tool_call(&self, ports: &Ports<'_>, call: &ToolCall) -> Verdict {
        let args: Value = match serde_json::from_str(&call.arguments) {
            Ok(v @ Value::Object(_)) => v,
            Ok(other) => {
                return Verdict::deny(
                    rules::INVALID_ARGUMENTS,
                    format!("arguments: must be a JSON object, got {}", json_kind(&other)),
                    Risk::Medium,
                );
            }
            Err(e) => {
                return Verdict::deny(
                    rules::INVALID_ARGUMENTS,
                    format!("arguments: not valid JSON ({e})"),
                    Risk::Medium,
                );
            }
        };
        let pinned = pin::check(&self.config.pin, ports.storage, call, Some(&args));
        match pinned {
            Some(v) if v.decision != Decision::Allow => v,
            Some(allowed) => allowed,
            None => Verdict::not_configured("tool-call"),
        }
    }

    /// Checks an inbound turn. Fails open.
    pub fn check_turn(&self, ports: &Ports<'_>, _turn: &Turn) -> TurnOutcome {
        let mut outcome = TurnOutcome::unchanged(
            SafetyOutcome::NotConfigured,
            "no safety scenarios are configured, so the turn was not checked",
        );
        outcome.rule = rules::NOT_CONFIGURED.to_string();
        counters::bump(ports, "safety.outcome.not_configured");
        outcome
    }

    /// Checks a message before it is sent or read. Fails closed.
    pub fn check_outbound(&self, ports: &Ports<'_>, _message: &OutboundMessage) -> Verdict {
        let verdict = Verdict::not_configured("outbound message");
        counters::bump(ports, &format!("outbound.allow.{}", verdict.rule));
        verdict
    }

    /// Starts a turn, pinning its reply when a chat is given.
    pub fn start_turn(&self, ports: &Ports<'_>, start: &TurnStart) -> Result<Option<PinState>, PolicyError> {
        pin::start(&self.config.pin, ports.storage, start)
    }

    /// Settles a turn, clearing its pin.
    pub fn settle_turn(&self, ports: &Ports<'_>, end: &TurnEnd) -> Result<(), PolicyError> {
        pin::settle(ports.storage, end)
    }

    /// The session's pin if it is still valid.
    pub fn current_pin(
        &self,
        ports: &Ports<'_>,
        session_id: &str,
        now_ms: u64,
    ) -> Result<Option<PinState>, PolicyError> {
        pin::current(&self.config.pin, ports.storage, session_id, now_ms)
    }

    /// Records a person's answer to an `ask`.
    pub fn record_approval(&self, _ports: &Ports<'_>, _approval: &Approval) -> Result<(), PolicyError> {
        Err(PolicyError::InvalidInput(
            "key: no check that asks for approval is configured, so there is nothing to approve".to_string(),
        ))
    }

    /// Records model usage for budgets.
    pub fn record_usage(&self, _ports: &Ports<'_>, _usage: &Usage) -> Result<(), PolicyError> {
        Ok(())
    }

    /// Records a delivery outcome.
    pub fn record_outcome(&self, _ports: &Ports<'_>, _report: &OutcomeReport) -> Result<(), PolicyError> {
        Ok(())
    }

    /// Counters, check status and warnings.
    pub fn diagnostics(&self, ports: &Ports<'_>) -> Result<Diagnostics, PolicyError> {
        Ok(Diagnostics {
            policy_version: self.policy_version.clone(),
            checks: self.checks(),
            counters: counters::all(ports)?,
            warnings: Vec::new(),
        })
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// Answers of an instance that has not been configured: every check says so
/// honestly instead of inventing a decision.
pub mod unconfigured {
    use super::*;

    pub fn tool_call() -> Verdict {
        Verdict::allow(rules::NOT_CONFIGURED, "warden has not been configured, so nothing was checked")
    }

    pub fn outbound() -> Verdict {
        tool_call()
    }

    pub fn turn() -> TurnOutcome {
        let mut outcome = TurnOutcome::unchanged(
            SafetyOutcome::NotConfigured,
            "warden has not been configured, so the turn was not checked",
        );
        outcome.rule = rules::NOT_CONFIGURED.to_string();
        outcome
    }
}
