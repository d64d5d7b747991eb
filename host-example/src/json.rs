//! The JSON mapping of the WIT records, as the `warden` command, the HTTP
//! service and the adapters use it.
//!
//! Field names are the WIT names in camelCase (`tool-name` → `toolName`);
//! enum cases are the WIT case names (`allow`, `no-match`, `session`);
//! `option` fields may be omitted; `nowMs` may be omitted on input, and the
//! host's clock is used; a `nowMs` that is given must be near the host's clock
//! ([`crate::clock`]) unless the host runs for replay. Input is strict: an
//! unknown field, a wrong type or a missing required field is refused with the
//! field's path, before anything reaches the component or storage.

use crate::bindings::exports::warden::guard::gate;
use crate::bindings::exports::warden::guard::policy as wit;
use crate::bindings::warden::guard::types as t;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The host's clock, in milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    crate::clock::system_now_ms()
}

/// A request that may carry its own time: the field's path and value.
pub trait Timed {
    fn request_time(&self) -> (&'static str, Option<u64>);
}

macro_rules! timed {
    ($($t:ty),*) => {
        $(impl Timed for $t {
            fn request_time(&self) -> (&'static str, Option<u64>) {
                ("nowMs", self.now_ms)
            }
        })*
    };
}

timed!(
    TurnJson,
    ToolCallJson,
    ToolResultJson,
    OutboundJson,
    TurnStartJson,
    TurnEndJson,
    ApprovalJson,
    UsageJson,
    OutcomeJson
);

/// Parses a request as [`parse`] does, then checks its `nowMs` against the host's clock.
pub fn parse_request<T: serde::de::DeserializeOwned + Timed>(
    text: &str,
    clock: crate::clock::Clock,
) -> Result<T, String> {
    let request: T = parse(text)?;
    let (field, value) = request.request_time();
    clock.admit(field, value)?;
    Ok(request)
}

/// Parses `text` as `T`, naming the offending field on error:
/// `toolName: invalid type: integer `7`, expected a string`. A syntax error
/// says where and what was expected; no message names a Rust type.
pub fn parse<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, String> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if !inner.is_data() {
            return not_json(&inner);
        }
        let message = inner.to_string();
        let message = match message.rfind(" at line ") {
            Some(i) => &message[..i],
            None => &message,
        };
        let message = plain_words(message);
        if path == "." || path.is_empty() { message } else { format!("{path}: {message}") }
    })?;
    de.end().map_err(|e| {
        format!(
            "the request is one JSON value followed by more text at line {}, column {}: send exactly one JSON object",
            e.line(),
            e.column()
        )
    })?;
    Ok(value)
}

/// A syntax error, with where it is and what it is.
fn not_json(e: &serde_json::Error) -> String {
    let message = e.to_string();
    let what = match message.rfind(" at line ") {
        Some(i) => &message[..i],
        None => &message,
    };
    let what = what.replace("EOF while parsing", "the text ends inside");
    format!("the request is not valid JSON: {what} (at line {}, column {})", e.line(), e.column())
}

/// serde's words for what it expected, in the words of JSON: `struct
/// ToolCallJson` is an object, `u64` a non-negative integer.
pub fn plain_words(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut words = message.split_inclusive(' ').peekable();
    while let Some(word) = words.next() {
        let bare = word.trim_end_matches([' ', ',']);
        let tail = &word[bare.len()..];
        let replaced = match bare {
            "struct" | "enum" if words.peek().is_some() => {
                let name = words.next().unwrap_or_default();
                let name_bare = name.trim_end_matches([' ', ',']);
                out.push_str(if bare == "struct" { "a JSON object" } else { "one of the allowed values" });
                out.push_str(&name[name_bare.len()..]);
                continue;
            }
            "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => "a non-negative integer",
            "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "an integer",
            "f32" | "f64" => "a number",
            "sequence" => "array",
            "map" => "object",
            "unit" => "null",
            "char" => "a single character",
            other => other,
        };
        out.push_str(replaced);
        out.push_str(tail);
    }
    out.replace("a array", "an array").replace("a object", "an object")
}

/// `identity`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IdentityJson {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
}

impl From<IdentityJson> for t::Identity {
    fn from(i: IdentityJson) -> Self {
        t::Identity {
            provider: i.provider,
            account_id: i.account_id,
            sender_id: i.sender_id,
            channel_id: i.channel_id,
            thread_id: i.thread_id,
            agent_id: i.agent_id,
        }
    }
}

/// `role`.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RoleJson {
    User,
    Assistant,
}

/// `message`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MessageJson {
    pub role: RoleJson,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    pub text: String,
}

impl From<MessageJson> for t::Message {
    fn from(m: MessageJson) -> Self {
        t::Message {
            role: match m.role {
                RoleJson::User => t::Role::User,
                RoleJson::Assistant => t::Role::Assistant,
            },
            author: m.author,
            text: m.text,
        }
    }
}

/// `channel-context`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChannelContextJson {
    #[serde(default)]
    pub thread_starter: Option<MessageJson>,
    #[serde(default)]
    pub replied_to: Option<MessageJson>,
    #[serde(default)]
    pub since_last_reply: Vec<MessageJson>,
}

/// `trigger`.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum TriggerJson {
    #[default]
    User,
    Automation,
    Peer,
}

/// `queue-mode`.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum QueueModeJson {
    Steer,
    Followup,
    Collect,
    Interrupt,
}

/// `turn`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TurnJson {
    #[serde(default)]
    pub run_id: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub now_ms: Option<u64>,
    #[serde(default)]
    pub identity: IdentityJson,
    #[serde(default)]
    pub trigger: TriggerJson,
    pub message: String,
    #[serde(default)]
    pub context: ChannelContextJson,
    #[serde(default)]
    pub history: Vec<MessageJson>,
    #[serde(default)]
    pub queue_mode: Option<QueueModeJson>,
    #[serde(default)]
    pub hook_timeout_ms: Option<u32>,
}

impl From<TurnJson> for wit::Turn {
    fn from(x: TurnJson) -> Self {
        wit::Turn {
            run_id: x.run_id,
            session_id: x.session_id,
            now_ms: x.now_ms.unwrap_or_else(now_ms),
            identity: x.identity.into(),
            trigger: match x.trigger {
                TriggerJson::User => wit::Trigger::User,
                TriggerJson::Automation => wit::Trigger::Automation,
                TriggerJson::Peer => wit::Trigger::Peer,
            },
            message: x.message,
            context: t::ChannelContext {
                thread_starter: x.context.thread_starter.map(Into::into),
                replied_to: x.context.replied_to.map(Into::into),
                since_last_reply: x.context.since_last_reply.into_iter().map(Into::into).collect(),
            },
            history: x.history.into_iter().map(Into::into).collect(),
            queue_mode: x.queue_mode.map(|q| match q {
                QueueModeJson::Steer => wit::QueueMode::Steer,
                QueueModeJson::Followup => wit::QueueMode::Followup,
                QueueModeJson::Collect => wit::QueueMode::Collect,
                QueueModeJson::Interrupt => wit::QueueMode::Interrupt,
            }),
            hook_timeout_ms: x.hook_timeout_ms,
        }
    }
}

/// `tool-call`. `arguments` may be a JSON object or its text.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolCallJson {
    pub tool_name: String,
    pub arguments: Value,
    #[serde(default)]
    pub call_id: Option<String>,
    #[serde(default)]
    pub run_id: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub now_ms: Option<u64>,
    #[serde(default)]
    pub identity: IdentityJson,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub derived_paths: Vec<String>,
}

impl From<ToolCallJson> for wit::ToolCall {
    fn from(c: ToolCallJson) -> Self {
        wit::ToolCall {
            tool_name: c.tool_name,
            arguments: match c.arguments {
                Value::String(text) => text,
                other => other.to_string(),
            },
            call_id: c.call_id,
            run_id: c.run_id,
            session_id: c.session_id,
            now_ms: c.now_ms.unwrap_or_else(now_ms),
            identity: c.identity.into(),
            cwd: c.cwd,
            derived_paths: c.derived_paths,
        }
    }
}

/// `tool-result`. `content` may be text or any JSON value, which is passed on
/// as its JSON text (a host that has the tool's output as JSON need not
/// serialize it first).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolResultJson {
    pub tool_name: String,
    pub content: Value,
    #[serde(default)]
    pub call_id: Option<String>,
    #[serde(default)]
    pub run_id: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub now_ms: Option<u64>,
    #[serde(default)]
    pub identity: IdentityJson,
    #[serde(default)]
    pub is_error: bool,
}

impl From<ToolResultJson> for wit::ToolResult {
    fn from(r: ToolResultJson) -> Self {
        wit::ToolResult {
            tool_name: r.tool_name,
            content: match r.content {
                Value::String(text) => text,
                other => other.to_string(),
            },
            call_id: r.call_id,
            run_id: r.run_id,
            session_id: r.session_id,
            now_ms: r.now_ms.unwrap_or_else(now_ms),
            identity: r.identity.into(),
            is_error: r.is_error,
        }
    }
}

/// `observation` (answer of `check tool-result`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ObservationJson {
    pub found: u32,
    pub recorded: u32,
    pub dropped: u32,
    pub signals: Vec<SignalJson>,
}

impl From<&wit::Observation> for ObservationJson {
    fn from(o: &wit::Observation) -> Self {
        ObservationJson { found: o.found, recorded: o.recorded, dropped: o.dropped, signals: signals(&o.signals) }
    }
}

/// `direction`.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum DirectionJson {
    #[default]
    Outbound,
    Inbound,
}

/// `outbound-message`. The body is `body` (text) or `bodyBytes` (a list of
/// byte values, for bodies that are not valid UTF-8), exactly one of them.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OutboundJson {
    #[serde(default)]
    pub direction: DirectionJson,
    pub channel: String,
    pub recipient: String,
    #[serde(default)]
    pub sender: Option<String>,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub body_bytes: Option<Vec<u8>>,
    #[serde(default)]
    pub thread: Option<String>,
    #[serde(default)]
    pub message_id: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub now_ms: Option<u64>,
    #[serde(default)]
    pub identity: IdentityJson,
}

impl OutboundJson {
    /// Converts, checking that exactly one body form is given.
    pub fn into_wit(self) -> Result<wit::OutboundMessage, String> {
        let body = match (self.body, self.body_bytes) {
            (Some(text), None) => text.into_bytes(),
            (None, Some(bytes)) => bytes,
            (Some(_), Some(_)) => return Err("body: give `body` or `bodyBytes`, not both".into()),
            (None, None) => return Err("body: missing field `body`".into()),
        };
        Ok(wit::OutboundMessage {
            direction: match self.direction {
                DirectionJson::Outbound => wit::Direction::Outbound,
                DirectionJson::Inbound => wit::Direction::Inbound,
            },
            channel: self.channel,
            recipient: self.recipient,
            sender: self.sender,
            body,
            thread: self.thread,
            message_id: self.message_id,
            session_id: self.session_id,
            now_ms: self.now_ms.unwrap_or_else(now_ms),
            identity: self.identity.into(),
        })
    }
}

/// `turn-start`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TurnStartJson {
    pub session_id: String,
    #[serde(default)]
    pub run_id: Option<String>,
    #[serde(default)]
    pub chat_id: Option<String>,
    #[serde(default)]
    pub label: Option<String>,
    #[serde(default)]
    pub now_ms: Option<u64>,
    /// The wake's prompt, queued while an answer is owed.
    #[serde(default)]
    pub prompt: Option<String>,
    /// One process per chat: the pin is permanent.
    #[serde(default)]
    pub dedicated: bool,
}

impl From<TurnStartJson> for wit::TurnStart {
    fn from(s: TurnStartJson) -> Self {
        wit::TurnStart {
            session_id: s.session_id,
            run_id: s.run_id,
            chat_id: s.chat_id,
            label: s.label,
            now_ms: s.now_ms.unwrap_or_else(now_ms),
            prompt: s.prompt,
            dedicated: s.dedicated,
        }
    }
}

/// `turn-end`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TurnEndJson {
    pub session_id: String,
    #[serde(default)]
    pub run_id: Option<String>,
    #[serde(default)]
    pub now_ms: Option<u64>,
}

impl From<TurnEndJson> for wit::TurnEnd {
    fn from(e: TurnEndJson) -> Self {
        wit::TurnEnd { session_id: e.session_id, run_id: e.run_id, now_ms: e.now_ms.unwrap_or_else(now_ms) }
    }
}

/// `approval-scope`.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ScopeJson {
    Once,
    Session,
    Always,
}

impl From<ScopeJson> for t::ApprovalScope {
    fn from(s: ScopeJson) -> Self {
        match s {
            ScopeJson::Once => t::ApprovalScope::Once,
            ScopeJson::Session => t::ApprovalScope::Session,
            ScopeJson::Always => t::ApprovalScope::Always,
        }
    }
}

impl From<t::ApprovalScope> for ScopeJson {
    fn from(s: t::ApprovalScope) -> Self {
        match s {
            t::ApprovalScope::Once => ScopeJson::Once,
            t::ApprovalScope::Session => ScopeJson::Session,
            t::ApprovalScope::Always => ScopeJson::Always,
        }
    }
}

/// `approval`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApprovalJson {
    pub key: String,
    pub allow: bool,
    pub scope: ScopeJson,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub call_id: Option<String>,
    #[serde(default)]
    pub now_ms: Option<u64>,
    #[serde(default)]
    pub idempotency_key: Option<String>,
}

impl From<ApprovalJson> for wit::Approval {
    fn from(a: ApprovalJson) -> Self {
        wit::Approval {
            key: a.key,
            allow: a.allow,
            scope: a.scope.into(),
            session_id: a.session_id,
            call_id: a.call_id,
            now_ms: a.now_ms.unwrap_or_else(now_ms),
            idempotency_key: a.idempotency_key,
        }
    }
}

/// `usage`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UsageJson {
    #[serde(default)]
    pub agent_id: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
    pub tokens: u64,
    #[serde(default)]
    pub now_ms: Option<u64>,
}

impl From<UsageJson> for wit::Usage {
    fn from(u: UsageJson) -> Self {
        wit::Usage {
            agent_id: u.agent_id,
            session_id: u.session_id,
            tokens: u.tokens,
            now_ms: u.now_ms.unwrap_or_else(now_ms),
        }
    }
}

/// `delivery`.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum DeliveryJson {
    Sent,
    Failed,
    Reply,
}

/// `outcome-report`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OutcomeJson {
    pub channel: String,
    pub recipient: String,
    pub delivery: DeliveryJson,
    #[serde(default)]
    pub thread: Option<String>,
    #[serde(default)]
    pub now_ms: Option<u64>,
    #[serde(default)]
    pub idempotency_key: Option<String>,
}

impl From<OutcomeJson> for wit::OutcomeReport {
    fn from(o: OutcomeJson) -> Self {
        wit::OutcomeReport {
            channel: o.channel,
            recipient: o.recipient,
            delivery: match o.delivery {
                DeliveryJson::Sent => wit::Delivery::Sent,
                DeliveryJson::Failed => wit::Delivery::Failed,
                DeliveryJson::Reply => wit::Delivery::Reply,
            },
            thread: o.thread,
            now_ms: o.now_ms.unwrap_or_else(now_ms),
            idempotency_key: o.idempotency_key,
        }
    }
}

/// `signal`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct SignalJson {
    pub name: String,
    pub detail: String,
}

fn signals(s: &[t::Signal]) -> Vec<SignalJson> {
    s.iter().map(|s| SignalJson { name: s.name.clone(), detail: s.detail.clone() }).collect()
}

/// The spelling of a decision.
pub fn decision_name(d: t::Decision) -> &'static str {
    match d {
        t::Decision::Allow => "allow",
        t::Decision::Ask => "ask",
        t::Decision::Deny => "deny",
    }
}

/// The spelling of a risk level.
pub fn risk_name(r: t::Risk) -> &'static str {
    match r {
        t::Risk::Low => "low",
        t::Risk::Medium => "medium",
        t::Risk::High => "high",
        t::Risk::Critical => "critical",
    }
}

/// `verdict`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct VerdictJson {
    pub decision: String,
    pub rule: String,
    pub reason: String,
    pub risk: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<ScopeJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval_key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed: Option<String>,
    pub signals: Vec<SignalJson>,
}

impl From<&t::Verdict> for VerdictJson {
    fn from(v: &t::Verdict) -> Self {
        VerdictJson {
            decision: decision_name(v.decision).into(),
            rule: v.rule.clone(),
            reason: v.reason.clone(),
            risk: risk_name(v.risk).into(),
            scope: v.scope.map(Into::into),
            approval_key: v.approval_key.clone(),
            observed: v.observed.map(|d| decision_name(d).to_string()),
            signals: signals(&v.signals),
        }
    }
}

/// The spelling of a safety outcome, as diagnostics count it.
pub fn outcome_name(o: wit::SafetyOutcome) -> &'static str {
    use wit::SafetyOutcome as S;
    match o {
        S::Flagged => "flagged",
        S::NoMatch => "no_match",
        S::Excluded => "excluded",
        S::NoScenarios => "no_scenarios",
        S::EmptyRequest => "empty_request",
        S::MissingKey => "missing_key",
        S::ProviderDisabled => "provider_disabled",
        S::InputTooLarge => "input_too_large",
        S::TimedOut => "timed_out",
        S::Failed => "failed",
        S::PartialResponse => "partial_response",
        S::Cancelled => "cancelled",
        S::NotUserTriggered => "not_user_triggered",
        S::NotConfigured => "not_configured",
    }
}

/// `turn-outcome`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct TurnOutcomeJson {
    pub proceed: bool,
    pub outcome: String,
    pub rule: String,
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub append_context: Option<String>,
    pub scenarios: Vec<String>,
    pub missing_identity: bool,
    pub reused: bool,
    pub signals: Vec<SignalJson>,
}

impl From<&wit::TurnOutcome> for TurnOutcomeJson {
    fn from(o: &wit::TurnOutcome) -> Self {
        TurnOutcomeJson {
            proceed: o.proceed,
            outcome: outcome_name(o.outcome).into(),
            rule: o.rule.clone(),
            reason: o.reason.clone(),
            append_context: o.append_context.clone(),
            scenarios: o.scenarios.clone(),
            missing_identity: o.missing_identity,
            reused: o.reused,
            signals: signals(&o.signals),
        }
    }
}

/// `pin-state`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct PinStateJson {
    pub chat_id: String,
    pub label: String,
    pub pinned_at_ms: u64,
    pub expires_at_ms: u64,
}

impl From<&wit::PinState> for PinStateJson {
    fn from(p: &wit::PinState) -> Self {
        PinStateJson {
            chat_id: p.chat_id.clone(),
            label: p.label.clone(),
            pinned_at_ms: p.pinned_at_ms,
            expires_at_ms: p.expires_at_ms,
        }
    }
}

/// `check-status`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct CheckStatusJson {
    pub check: String,
    pub active: bool,
    pub mode: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub failure_mode: String,
}

fn checks(c: &[wit::CheckStatus]) -> Vec<CheckStatusJson> {
    c.iter()
        .map(|c| CheckStatusJson {
            check: c.check.clone(),
            active: c.active,
            mode: c.mode.clone(),
            reason: c.reason.clone(),
            failure_mode: c.failure_mode.clone(),
        })
        .collect()
}

/// `config-report`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ConfigReportJson {
    pub policy_version: String,
    pub checks: Vec<CheckStatusJson>,
    pub warnings: Vec<String>,
}

impl From<&wit::ConfigReport> for ConfigReportJson {
    fn from(r: &wit::ConfigReport) -> Self {
        ConfigReportJson {
            policy_version: r.policy_version.clone(),
            checks: checks(&r.checks),
            warnings: r.warnings.clone(),
        }
    }
}

/// `diagnostics-report`. Counters are an object from name to count.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct DiagnosticsJson {
    pub policy_version: String,
    pub checks: Vec<CheckStatusJson>,
    pub counters: std::collections::BTreeMap<String, u64>,
    pub warnings: Vec<String>,
}

impl From<&wit::DiagnosticsReport> for DiagnosticsJson {
    fn from(d: &wit::DiagnosticsReport) -> Self {
        DiagnosticsJson {
            policy_version: d.policy_version.clone(),
            checks: checks(&d.checks),
            counters: d.counters.iter().map(|c| (c.name.clone(), c.value)).collect(),
            warnings: d.warnings.clone(),
        }
    }
}

/// `ledger-entry` of the `gate` interface. Recipients and bodies are keyed hashes.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct LedgerEntryJson {
    pub at_ms: u64,
    pub event: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    pub recipient_hash: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body_hash: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

impl From<&gate::LedgerEntry> for LedgerEntryJson {
    fn from(e: &gate::LedgerEntry) -> Self {
        LedgerEntryJson {
            at_ms: e.at_ms,
            event: e.event.clone(),
            channel: e.channel.clone(),
            recipient_hash: e.recipient_hash.clone(),
            body_hash: e.body_hash.clone(),
            thread: e.thread.clone(),
            decision: e.decision.clone(),
            rule: e.rule.clone(),
        }
    }
}

/// `gate-status`. Decisions are an object from `pass`, `approve` and `block` to counts.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct GateStatusJson {
    pub consents: u64,
    pub opt_outs: u64,
    pub open_threads: u64,
    pub entries: u64,
    pub decisions: std::collections::BTreeMap<String, u64>,
}

impl From<&gate::GateStatus> for GateStatusJson {
    fn from(s: &gate::GateStatus) -> Self {
        GateStatusJson {
            consents: s.consents,
            opt_outs: s.opt_outs,
            open_threads: s.open_threads,
            entries: s.entries,
            decisions: s.decisions.iter().cloned().collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_input_names_the_field() {
        let cases = [
            (r#"{"toolName": 5, "arguments": {}}"#, "toolName: invalid type: integer `5`, expected a string"),
            (r#"{"toolName": "x"}"#, "missing field `arguments`"),
            (r#"{"toolName": "x", "arguments": {}, "bogus": 1}"#, "unknown field `bogus`"),
            (
                r#"{"toolName": "x", "arguments": {}, "identity": {"senderID": "u"}}"#,
                "identity.senderID: unknown field `senderID`",
            ),
            (r#"{"toolName": "x", "arguments": {}, "nowMs": -1}"#, "nowMs: invalid value: integer `-1`"),
            (
                r#"{"toolName": "x", "#,
                "the request is not valid JSON: the text ends inside a value (at line 1, column 18)",
            ),
        ];
        for (input, expected) in cases {
            let err = parse::<ToolCallJson>(input).err().unwrap_or_default();
            assert!(err.contains(expected), "{input}: got {err:?}, expected {expected:?}");
        }
    }
}
