//! The core's own request and answer types. They mirror the WIT records one to
//! one; the component converts between the two and nothing else.

use crate::prelude::*;
use serde::{Deserialize, Serialize};

/// Who is acting and where. Every field is optional; see `identity` in the WIT.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Identity {
    pub provider: Option<String>,
    pub account_id: Option<String>,
    pub sender_id: Option<String>,
    pub channel_id: Option<String>,
    pub thread_id: Option<String>,
    pub agent_id: Option<String>,
}

/// What a check decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Allow,
    Ask,
    Deny,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        }
    }
}

/// How much harm the checked action could do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Risk {
    Low,
    Medium,
    High,
    Critical,
}

/// How long a person's answer to an `ask` is remembered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    Once,
    Session,
    Always,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Once => "once",
            Scope::Session => "session",
            Scope::Always => "always",
        }
    }
}

/// One contribution to a decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signal {
    pub name: String,
    pub detail: String,
}

impl Signal {
    pub fn new(name: impl Into<String>, detail: impl Into<String>) -> Self {
        Signal { name: name.into(), detail: detail.into() }
    }
}

/// The answer to a tool call or an outbound message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub decision: Decision,
    pub rule: String,
    pub reason: String,
    pub risk: Risk,
    pub scope: Option<Scope>,
    pub approval_key: Option<String>,
    pub observed: Option<Decision>,
    pub signals: Vec<Signal>,
}

impl Verdict {
    pub fn new(decision: Decision, rule: impl Into<String>, reason: impl Into<String>, risk: Risk) -> Self {
        Verdict {
            decision,
            rule: rule.into(),
            reason: reason.into(),
            risk,
            scope: None,
            approval_key: None,
            observed: None,
            signals: Vec::new(),
        }
    }

    pub fn allow(rule: impl Into<String>, reason: impl Into<String>) -> Self {
        Verdict::new(Decision::Allow, rule, reason, Risk::Low)
    }

    pub fn deny(rule: impl Into<String>, reason: impl Into<String>, risk: Risk) -> Self {
        Verdict::new(Decision::Deny, rule, reason, risk)
    }

    /// The answer of a check family that has nothing configured.
    pub fn not_configured(what: &str) -> Self {
        Verdict::allow(crate::rules::NOT_CONFIGURED, format!("no {what} rules are configured, so nothing was checked"))
    }

    pub fn with_signal(mut self, signal: Signal) -> Self {
        self.signals.push(signal);
        self
    }
}

/// Who wrote a message in a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

/// One whole message of a conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub role: Role,
    pub author: Option<String>,
    pub text: String,
}

/// Channel messages that arrived together with the current message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChannelContext {
    pub thread_starter: Option<Message>,
    pub replied_to: Option<Message>,
    pub since_last_reply: Vec<Message>,
}

/// What started a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    User,
    Automation,
    Peer,
}

/// How the host queues messages that arrive while the agent works.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueMode {
    Steer,
    Followup,
    Collect,
    Interrupt,
}

/// An inbound turn, before the model runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    pub run_id: Option<String>,
    pub session_id: Option<String>,
    pub now_ms: u64,
    pub identity: Identity,
    pub trigger: Trigger,
    pub message: String,
    pub context: ChannelContext,
    pub history: Vec<Message>,
    pub queue_mode: Option<QueueMode>,
    pub hook_timeout_ms: Option<u32>,
}

/// Why a safety check ended the way it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SafetyOutcome {
    Flagged,
    NoMatch,
    Excluded,
    NoScenarios,
    EmptyRequest,
    MissingKey,
    ProviderDisabled,
    InputTooLarge,
    TimedOut,
    Failed,
    PartialResponse,
    Cancelled,
    NotUserTriggered,
    NotConfigured,
}

impl SafetyOutcome {
    /// The outcome's name as diagnostics and logs spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            SafetyOutcome::Flagged => "flagged",
            SafetyOutcome::NoMatch => "no_match",
            SafetyOutcome::Excluded => "excluded",
            SafetyOutcome::NoScenarios => "no_scenarios",
            SafetyOutcome::EmptyRequest => "empty_request",
            SafetyOutcome::MissingKey => "missing_key",
            SafetyOutcome::ProviderDisabled => "provider_disabled",
            SafetyOutcome::InputTooLarge => "input_too_large",
            SafetyOutcome::TimedOut => "timed_out",
            SafetyOutcome::Failed => "failed",
            SafetyOutcome::PartialResponse => "partial_response",
            SafetyOutcome::Cancelled => "cancelled",
            SafetyOutcome::NotUserTriggered => "not_user_triggered",
            SafetyOutcome::NotConfigured => "not_configured",
        }
    }
}

/// The answer to an inbound turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnOutcome {
    pub proceed: bool,
    pub outcome: SafetyOutcome,
    pub rule: String,
    pub reason: String,
    pub append_context: Option<String>,
    pub scenarios: Vec<String>,
    pub missing_identity: bool,
    pub reused: bool,
    pub signals: Vec<Signal>,
}

impl TurnOutcome {
    /// A turn that proceeds unchanged, with the outcome that explains why.
    pub fn unchanged(outcome: SafetyOutcome, reason: impl Into<String>) -> Self {
        TurnOutcome {
            proceed: true,
            outcome,
            rule: format!("safety.{}", outcome.as_str()),
            reason: reason.into(),
            append_context: None,
            scenarios: Vec::new(),
            missing_identity: false,
            reused: false,
            signals: Vec::new(),
        }
    }
}

/// A tool call the agent is about to make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    pub tool_name: String,
    pub arguments: String,
    pub call_id: Option<String>,
    pub run_id: Option<String>,
    pub session_id: Option<String>,
    pub now_ms: u64,
    pub identity: Identity,
    pub cwd: Option<String>,
    pub derived_paths: Vec<String>,
}

/// A tool's result the host saw, reported so that the destinations in it are
/// known to come from content the agent read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    /// The host's tool name.
    pub tool_name: String,
    /// The host's ID of the call this result answers.
    pub call_id: Option<String>,
    pub run_id: Option<String>,
    /// The session whose later calls the result's destinations are known to.
    pub session_id: Option<String>,
    pub now_ms: u64,
    /// Who asked for the turn that made the call.
    pub identity: Identity,
    /// The result as text: JSON or plain text, as the tool gave it.
    pub content: String,
    /// Whether the tool reported a failure.
    pub is_error: bool,
}

/// What a reported tool result left known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Observation {
    /// Destination-like values found in the content.
    pub found: u32,
    /// Values recorded as seen in untrusted content of the session (new or refreshed).
    pub recorded: u32,
    /// Values not recorded because a bound was reached.
    pub dropped: u32,
    /// Contributions and warnings.
    pub signals: Vec<Signal>,
}

/// Which way a message travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Outbound,
    Inbound,
}

/// A message about to be sent, or a peer message about to be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboundMessage {
    pub direction: Direction,
    pub channel: String,
    pub recipient: String,
    pub sender: Option<String>,
    pub body: Vec<u8>,
    pub thread: Option<String>,
    pub message_id: Option<String>,
    pub session_id: Option<String>,
    pub now_ms: u64,
    pub identity: Identity,
}

/// Starts a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnStart {
    pub session_id: String,
    pub run_id: Option<String>,
    pub chat_id: Option<String>,
    pub label: Option<String>,
    pub now_ms: u64,
    /// The wake's prompt, for a wake that may arrive while an answer is owed.
    pub prompt: Option<String>,
    /// A host that runs one process per chat: the pin is permanent.
    pub dedicated: bool,
}

/// Ends a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnEnd {
    pub session_id: String,
    pub run_id: Option<String>,
    pub now_ms: u64,
}

/// The reply pin of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinState {
    pub chat_id: String,
    pub label: String,
    pub pinned_at_ms: u64,
    pub expires_at_ms: u64,
}

/// A person's answer to an `ask`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approval {
    pub key: String,
    pub allow: bool,
    pub scope: Scope,
    pub session_id: Option<String>,
    pub call_id: Option<String>,
    pub now_ms: u64,
    /// Records the answer once however often it is sent.
    pub idempotency_key: Option<String>,
}

/// Model usage the host observed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Usage {
    pub agent_id: Option<String>,
    pub session_id: Option<String>,
    pub tokens: u64,
    pub now_ms: u64,
}

/// What happened to a message after the check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Delivery {
    Sent,
    Failed,
    Reply,
}

/// A delivery outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutcomeReport {
    pub channel: String,
    pub recipient: String,
    pub delivery: Delivery,
    pub thread: Option<String>,
    pub now_ms: u64,
    /// Records the report once however often it is sent.
    pub idempotency_key: Option<String>,
}

/// Whether one check family runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckStatus {
    pub check: String,
    pub active: bool,
    pub mode: String,
    pub reason: Option<String>,
    pub failure_mode: String,
}

/// What `configure` accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigReport {
    pub policy_version: String,
    pub checks: Vec<CheckStatus>,
    pub warnings: Vec<String>,
}

/// One counter of the diagnostics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counter {
    pub name: String,
    pub value: u64,
}

/// The state of the policy, for operators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostics {
    pub policy_version: String,
    pub checks: Vec<CheckStatus>,
    pub counters: Vec<Counter>,
    pub warnings: Vec<String>,
}

/// Errors of the admin and lifecycle calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicyError {
    NotConfigured,
    InvalidInput(String),
    Storage(String),
    Other(String),
}

impl core::fmt::Display for PolicyError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            PolicyError::NotConfigured => f.write_str("warden is not configured"),
            PolicyError::InvalidInput(m) => write!(f, "invalid input: {m}"),
            PolicyError::Storage(m) => write!(f, "storage failed: {m}"),
            PolicyError::Other(m) => f.write_str(m),
        }
    }
}

impl From<crate::ports::StorageError> for PolicyError {
    fn from(e: crate::ports::StorageError) -> Self {
        PolicyError::Storage(e.to_string())
    }
}

/// Whether a check family enforces its decisions or only reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Decisions are enforced.
    #[default]
    Enforce,
    /// Decisions are computed, logged and counted, but the answer is `allow`
    /// with the decision that would have been enforced in `observed`.
    Observe,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Enforce => "enforce",
            Mode::Observe => "observe",
        }
    }
}

impl Verdict {
    /// The verdict as `mode` answers it: in observe mode anything but `allow`
    /// becomes `allow`, keeping the rule and the decision it would have been.
    pub fn under(mut self, mode: Mode) -> Verdict {
        if mode == Mode::Observe && self.decision != Decision::Allow {
            self.observed = Some(self.decision);
            self.decision = Decision::Allow;
        }
        self
    }
}

/// One ledger line of the consent gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerEntry {
    pub at_ms: u64,
    pub event: String,
    pub channel: Option<String>,
    pub recipient_hash: String,
    pub body_hash: Option<String>,
    pub thread: Option<String>,
    pub decision: Option<String>,
    pub rule: Option<String>,
}

/// A summary of the consent ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateStatus {
    pub consents: u64,
    pub opt_outs: u64,
    pub open_threads: u64,
    pub entries: u64,
    pub decisions: Vec<(String, u64)>,
}
