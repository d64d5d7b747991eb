//! Inbound safety scenarios: requester-aware checks of each human turn.
//!
//! Not available yet: the section accepts no settings and every turn answers
//! `not_configured`. Failure mode: fail-open.

use crate::config::destinations::Destination;
use crate::config::reader::{Obj, Reader};
use crate::model::{CheckStatus, Mode, SafetyOutcome, Turn, TurnOutcome};
use crate::ports::Ports;
use crate::prelude::*;
use crate::rules;
use serde::Serialize;

/// The `safety` section.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase", default)]
pub struct SafetyConfig {}

impl SafetyConfig {
    /// Fields of the `safety` section.
    pub const FIELDS: &'static [&'static str] = &[];

    /// Reads the `safety` section; its unknown fields were already reported.
    pub fn read(_r: &mut Reader, _obj: Option<Obj<'_>>, _destinations: &[Destination]) -> SafetyConfig {
        SafetyConfig {}
    }

    /// The check's status for reports.
    pub fn status(&self) -> CheckStatus {
        CheckStatus {
            check: "safety".into(),
            active: false,
            mode: Mode::Enforce.as_str().into(),
            reason: Some("not_configured".into()),
            failure_mode: "fail-open".into(),
        }
    }
}

/// Checks an inbound turn.
pub fn check(_config: &SafetyConfig, _ports: &Ports<'_>, _turn: &Turn) -> TurnOutcome {
    let mut outcome = TurnOutcome::unchanged(
        SafetyOutcome::NotConfigured,
        "no safety scenarios are configured, so the turn was not checked",
    );
    outcome.rule = rules::NOT_CONFIGURED.to_string();
    outcome
}

/// Warnings an operator should act on.
pub fn warnings(_config: &SafetyConfig, _ports: &Ports<'_>) -> Vec<String> {
    Vec::new()
}
