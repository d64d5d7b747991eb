//! The configuration: one JSON document, validated once at `configure` into
//! typed, already-checked values. The hot path only ever sees those values.
//!
//! Parsing is strict: unknown fields are refused, every limit is a named
//! constant next to the setting it bounds, and every error is reported at once
//! with its field path.

pub mod destinations;
pub mod reader;

use crate::audit::AuditConfig;
use crate::digest;
use crate::dlp::DlpConfig;
use crate::flow::FlowConfig;
use crate::gate::GateConfig;
use crate::pin::PinConfig;
use crate::prelude::*;
use crate::safety::SafetyConfig;
use crate::session::{ContextConfig, DriftConfig};
use crate::tools::ToolsConfig;
use destinations::{Destination, MAX_DESTINATIONS};
use reader::{ConfigError, Node, Reader};
use serde::Serialize;

/// Largest configuration document, in bytes (1 MiB).
pub const MAX_CONFIG_BYTES: usize = 1024 * 1024;

/// Top-level fields.
const TOP_LEVEL: &[&str] = &[
    "$schema",
    "debug",
    "destinations",
    "pin",
    "safety",
    "tools",
    "gate",
    "dlp",
    "flow",
    "context",
    "drift",
    "audit",
    "profile",
    "risk",
];

/// The whole Warden configuration.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields, title = "Warden configuration"))]
#[serde(rename_all = "camelCase", default)]
pub struct Config {
    /// Editor hint; ignored.
    #[serde(rename = "$schema", skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Allow message text of users in debug log lines. Off by default.
    pub debug: bool,
    /// HTTP destinations the host may reach for the component; credentials stay with the host.
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_DESTINATIONS)))]
    pub destinations: Vec<Destination>,
    /// Reply pinning: while an answer is owed to a chat, outgoing tools may write only to it.
    pub pin: PinConfig,
    /// Inbound safety scenarios, checked against who is asking.
    pub safety: SafetyConfig,
    /// The tool-call judge.
    pub tools: ToolsConfig,
    /// The consent gate for outbound messages.
    pub gate: GateConfig,
    /// Data-loss prevention for outbound messages and prompt-injection checks of peer messages.
    pub dlp: DlpConfig,
    /// Where a destination came from: the person's words, consent, or content the agent read.
    #[serde(skip_serializing_if = "FlowConfig::is_absent")]
    pub flow: FlowConfig,
    /// A keyed hash chain of every decision, for `warden audit verify`, `export` and `replay`.
    #[serde(skip_serializing_if = "AuditConfig::is_absent")]
    pub audit: AuditConfig,
    /// The tool call judged in its turn: a person's stop, long runs without them, failed steps, confirmations.
    #[serde(skip_serializing_if = "ContextConfig::is_absent")]
    pub context: ContextConfig,
    /// Tool calls compared with what the person first asked for in the session.
    #[serde(skip_serializing_if = "DriftConfig::is_absent")]
    pub drift: DriftConfig,
    /// Agent profiles: what each agent usually does, and what a call outside that decides.
    #[serde(skip_serializing_if = "crate::profile::ProfileConfig::is_absent")]
    pub profile: crate::profile::ProfileConfig,
    /// Cross-session risk fingerprints: patterns of calls that ended in a deny before.
    #[serde(skip_serializing_if = "crate::risk::RiskConfig::is_absent")]
    pub risk: crate::risk::RiskConfig,
}

impl Config {
    /// Parses and validates a configuration document, reporting every error.
    pub fn parse(text: &str) -> Result<Config, Vec<ConfigError>> {
        if text.len() > MAX_CONFIG_BYTES {
            return Err(vec![ConfigError {
                path: String::new(),
                message: format!("the configuration must be at most {MAX_CONFIG_BYTES} bytes, got {}", text.len()),
            }]);
        }
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            vec![ConfigError {
                path: String::new(),
                message: format!("not valid JSON at line {} column {}: {}", e.line(), e.column(), json_error_text(&e)),
            }]
        })?;
        let mut r = Reader::new();
        let root = Node { path: String::new(), value: &value };
        let Some(obj) = r.object(&root, TOP_LEVEL) else {
            return Err(r.into_errors());
        };
        let schema = r.optional_string(&obj, "$schema", reader::Text::non_blank(2048));
        let debug = r.bool(&obj, "debug", false);
        let destinations = r
            .unique_list(
                &obj,
                "destinations",
                MAX_DESTINATIONS,
                destinations::read_destination,
                "destination name",
                ".name",
                |d| d.name.clone(),
            )
            .unwrap_or_default();
        let section = r.section(&obj, "pin", PinConfig::FIELDS);
        let pin = PinConfig::read(&mut r, section);
        let section = r.section(&obj, "safety", SafetyConfig::FIELDS);
        let safety = SafetyConfig::read(&mut r, section, &destinations);
        let section = r.section(&obj, "tools", ToolsConfig::FIELDS);
        let tools = ToolsConfig::read(&mut r, section);
        let section = r.section(&obj, "gate", GateConfig::FIELDS);
        let gate = GateConfig::read(&mut r, section);
        let section = r.section(&obj, "dlp", DlpConfig::FIELDS);
        let dlp = DlpConfig::read(&mut r, section, &destinations);
        let section = r.section(&obj, "flow", FlowConfig::FIELDS);
        let flow = FlowConfig::read(&mut r, section);
        let section = r.section(&obj, "context", ContextConfig::FIELDS);
        let context = ContextConfig::read(&mut r, section);
        let section = r.section(&obj, "drift", DriftConfig::FIELDS);
        let drift = DriftConfig::read(&mut r, section);
        let section = r.section(&obj, "audit", AuditConfig::FIELDS);
        let audit = AuditConfig::read(&mut r, section);
        let section = r.section(&obj, "profile", crate::profile::ProfileConfig::FIELDS);
        let profile = crate::profile::ProfileConfig::read(&mut r, section);
        let section = r.section(&obj, "risk", crate::risk::RiskConfig::FIELDS);
        let risk = crate::risk::RiskConfig::read(&mut r, section);
        if r.has_errors() {
            return Err(r.into_errors());
        }
        Ok(Config {
            schema,
            debug,
            destinations,
            pin,
            safety,
            tools,
            gate,
            dlp,
            flow,
            context,
            drift,
            audit,
            profile,
            risk,
        })
    }

    /// Digest of everything that can change a decision: remembered approvals
    /// and cached answers are bound to it. Logging settings are left out.
    pub fn policy_version(&self) -> String {
        let mut value = serde_json::to_value(self).unwrap_or_default();
        if let Some(map) = value.as_object_mut() {
            map.remove("$schema");
            map.remove("debug");
        }
        digest::versioned(&value)
    }
}

/// serde_json's message without its trailing position, which is reported separately.
fn json_error_text(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests;
