//! The tool-call judge: allow, ask or deny, with approval scopes.
//!
//! Not available yet: the section accepts no settings and every call answers
//! `not-configured`. Failure mode: fail-closed.

use crate::config::reader::{Obj, Reader};
use crate::model::{Approval, CheckStatus, Mode, PolicyError, ToolCall, Usage, Verdict};
use crate::ports::Ports;
use serde::Serialize;
use serde_json::Value;

/// Approval keys of tool calls start with this.
pub const APPROVAL_KEY_PREFIX: &str = "t1:";

/// The `tools` section.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase", default)]
pub struct ToolsConfig {}

impl ToolsConfig {
    /// Fields of the `tools` section.
    pub const FIELDS: &'static [&'static str] = &[];

    /// Reads the `tools` section; its unknown fields were already reported.
    pub fn read(_r: &mut Reader, _obj: Option<Obj<'_>>) -> ToolsConfig {
        ToolsConfig {}
    }

    /// The check's status for reports.
    pub fn status(&self) -> CheckStatus {
        CheckStatus {
            check: "tools".into(),
            active: false,
            mode: Mode::Enforce.as_str().into(),
            reason: Some("not_configured".into()),
            failure_mode: "fail-closed".into(),
        }
    }
}

/// Judges a tool call whose arguments are the JSON object `args`. `version`
/// is the digest of this section; remembered answers are bound to it.
pub fn judge(_config: &ToolsConfig, _version: &str, _ports: &Ports<'_>, _call: &ToolCall, _args: &Value) -> Verdict {
    Verdict::not_configured("tool-call")
}

/// Records a person's answer to an `ask` of this judge.
pub fn record_approval(
    _config: &ToolsConfig,
    _version: &str,
    _ports: &Ports<'_>,
    _approval: &Approval,
) -> Result<(), PolicyError> {
    Err(PolicyError::InvalidInput("key: the tool-call judge is not configured, so it asked nothing".into()))
}

/// Records model usage for budgets.
pub fn record_usage(_config: &ToolsConfig, _ports: &Ports<'_>, _usage: &Usage) -> Result<(), PolicyError> {
    Ok(())
}
