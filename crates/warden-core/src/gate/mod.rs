//! The consent gate for outbound messages: opt-out, consent, recipient-local
//! quiet hours, unanswered threads, minimum gaps, approved templates and a
//! hashed ledger.
//!
//! Not available yet: the section accepts no settings, checks answer nothing
//! and the admin calls say the gate is not configured. Failure mode: fail-closed.

use crate::config::reader::{Obj, Reader};
use crate::model::{CheckStatus, GateStatus, LedgerEntry, Mode, OutboundMessage, OutcomeReport, PolicyError, Verdict};
use crate::ports::Ports;
use crate::prelude::*;
use serde::Serialize;

/// The `gate` section.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase", default)]
pub struct GateConfig {}

impl GateConfig {
    /// Fields of the `gate` section.
    pub const FIELDS: &'static [&'static str] = &[];

    /// Reads the `gate` section; its unknown fields were already reported.
    pub fn read(_r: &mut Reader, _obj: Option<Obj<'_>>) -> GateConfig {
        GateConfig {}
    }

    /// The check's status for reports.
    pub fn status(&self) -> CheckStatus {
        CheckStatus {
            check: "gate".into(),
            active: false,
            mode: Mode::Enforce.as_str().into(),
            reason: Some("not_configured".into()),
            failure_mode: "fail-closed".into(),
        }
    }
}

fn not_configured() -> PolicyError {
    PolicyError::Other("the consent gate is not configured".into())
}

/// The gate's answer to an outbound message, or `None` when it has nothing to say.
pub fn check(_config: &GateConfig, _ports: &Ports<'_>, _message: &OutboundMessage) -> Option<Verdict> {
    None
}

/// Records what happened to a checked message.
pub fn record_outcome(_config: &GateConfig, _ports: &Ports<'_>, _report: &OutcomeReport) -> Result<(), PolicyError> {
    Err(not_configured())
}

/// Records that a recipient agreed to be messaged on a channel.
pub fn consent(
    _config: &GateConfig,
    _ports: &Ports<'_>,
    _channel: &str,
    _recipient: &str,
    _offset: Option<&str>,
    _how: Option<&str>,
    _now_ms: u64,
) -> Result<(), PolicyError> {
    Err(not_configured())
}

/// Records an absolute opt-out.
pub fn opt_out(_config: &GateConfig, _ports: &Ports<'_>, _recipient: &str, _now_ms: u64) -> Result<(), PolicyError> {
    Err(not_configured())
}

/// Takes a consent back.
pub fn revoke(
    _config: &GateConfig,
    _ports: &Ports<'_>,
    _channel: &str,
    _recipient: &str,
    _now_ms: u64,
) -> Result<bool, PolicyError> {
    Err(not_configured())
}

/// Notes a reply, clearing the thread.
pub fn reply(
    _config: &GateConfig,
    _ports: &Ports<'_>,
    _channel: &str,
    _recipient: &str,
    _thread: Option<&str>,
    _now_ms: u64,
) -> Result<(), PolicyError> {
    Err(not_configured())
}

/// Stores template variables for a recipient on a channel.
pub fn set_variables(
    _config: &GateConfig,
    _ports: &Ports<'_>,
    _channel: &str,
    _recipient: &str,
    _variables: &[(String, String)],
    _now_ms: u64,
) -> Result<(), PolicyError> {
    Err(not_configured())
}

/// The newest ledger lines first.
pub fn log(_config: &GateConfig, _ports: &Ports<'_>, _limit: u32) -> Result<Vec<LedgerEntry>, PolicyError> {
    Err(not_configured())
}

/// A summary of the ledger.
pub fn status(_config: &GateConfig, _ports: &Ports<'_>) -> Result<GateStatus, PolicyError> {
    Err(not_configured())
}
