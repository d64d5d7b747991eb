//! Provenance at the tool seam: where a destination came from.
//!
//! The host reports what tools returned (`observe-tool-result`); the values in
//! those results that could be destinations are recorded for the session as
//! seen in untrusted content, and the values the person named in their own
//! message (`check-turn`) as named by the person. Outgoing calls (message,
//! share, invite, payment, fetch) and outbound messages then class each
//! destination: consented, named by the person, seen only in untrusted
//! content, or unknown.

pub mod extract;

use crate::model::{Observation, PolicyError, ToolResult};
use crate::ports::Ports;

/// Records the destinations in a tool's result for its session.
pub fn observe(_ports: &Ports<'_>, _result: &ToolResult) -> Result<Observation, PolicyError> {
    Ok(Observation::default())
}
