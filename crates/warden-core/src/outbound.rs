//! The order of the outbound checks: data-loss prevention's deterministic
//! pre-checks, the consent gate, then the classifier; deny beats ask beats allow.

use crate::config::Config;
use crate::dlp;
use crate::gate;
use crate::model::{Approval, OutboundMessage, PolicyError, Verdict};
use crate::ports::Ports;

/// Approval keys of messages start with this.
pub const APPROVAL_KEY_PREFIX: &str = "m1:";

/// Checks a message before it is sent (or, for peer messages, read).
pub fn check(config: &Config, ports: &Ports<'_>, message: &OutboundMessage) -> Verdict {
    let dlp = dlp::check(&config.dlp, ports, message);
    let gate = gate::check(&config.gate, ports, message);
    match (dlp, gate) {
        (Some(v), _) | (None, Some(v)) => v,
        (None, None) => Verdict::not_configured("outbound message"),
    }
}

/// Records a person's answer to an `ask` about a message.
pub fn record_approval(_config: &Config, _ports: &Ports<'_>, _approval: &Approval) -> Result<(), PolicyError> {
    Err(PolicyError::InvalidInput("key: no outbound check asked for approval".into()))
}
