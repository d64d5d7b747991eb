//! Data-loss prevention for outbound messages and prompt-injection checks for
//! inbound peer messages.
//!
//! Not available yet: the section accepts no settings and checks answer
//! nothing. Failure mode: fail-closed.

use crate::config::destinations::Destination;
use crate::config::reader::{Obj, Reader};
use crate::model::{CheckStatus, Mode, OutboundMessage, Verdict};
use crate::ports::Ports;
use serde::Serialize;

/// The `dlp` section.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase", default)]
pub struct DlpConfig {}

impl DlpConfig {
    /// Fields of the `dlp` section.
    pub const FIELDS: &'static [&'static str] = &[];

    /// Reads the `dlp` section; its unknown fields were already reported.
    pub fn read(_r: &mut Reader, _obj: Option<Obj<'_>>, _destinations: &[Destination]) -> DlpConfig {
        DlpConfig {}
    }

    /// The check's status for reports.
    pub fn status(&self) -> crate::model::CheckStatus {
        CheckStatus {
            check: "dlp".into(),
            active: false,
            mode: Mode::Enforce.as_str().into(),
            reason: Some("not_configured".into()),
            failure_mode: "fail-closed".into(),
        }
    }
}

/// The DLP answer to a message, or `None` when it has nothing to say.
pub fn check(_config: &DlpConfig, _ports: &Ports<'_>, _message: &OutboundMessage) -> Option<Verdict> {
    None
}
