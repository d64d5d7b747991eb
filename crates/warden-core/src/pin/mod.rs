//! Reply pinning: while an answer is owed to the chat that woke the agent,
//! tools that speak to people may write only to that chat.
//!
//! A wake puts somebody else's words into the prompt, and words in a message
//! can talk a model out of any instruction in a prompt. So where the answer
//! goes is enforced here, on the tool call, and not left to the model. The
//! check is narrow on purpose: it gates only tools that put words in someone's
//! inbox. Reading, presence and calendar tools are never gated, because a pin
//! that blocks ordinary work is a bug people meet far more often than an attack.
//!
//! The pin lives in storage keyed by session, so a restarted host still
//! enforces it; it expires after a TTL so a crashed run cannot lock the user
//! out of their own tools. Failure mode: **fail-closed** (a gated tool call is
//! refused when the pin cannot be read).
//!
//! A gated call that names no session cannot be matched to a pin, so while
//! pinning is on it is refused (`pin.no-session`): a host that forgets the
//! session would otherwise let the pinned chat's outgoing tools write
//! anywhere. A host that never pins can say so with `allowMissingSession`.

use crate::config::reader::{Node, Obj, Reader, Text};
use crate::model::{PinState, PolicyError, Risk, ToolCall, TurnEnd, TurnStart, Verdict};
use crate::ports::{Condition, Storage};
use crate::prelude::*;
use crate::store;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub mod queue;
#[cfg(test)]
mod queue_tests;

/// Storage namespace of pins, keyed by session ID.
pub const NAMESPACE: &str = "pin";

/// Shortest pin lifetime, in minutes.
pub const MIN_TTL_MINUTES: u64 = 1;
/// Longest pin lifetime, in minutes (one day).
pub const MAX_TTL_MINUTES: u64 = 1440;
/// Default pin lifetime, in minutes.
pub const DEFAULT_TTL_MINUTES: u64 = 15;
/// Most gated tools a configuration may list.
pub const MAX_TOOLS: usize = 200;
/// Longest tool or parameter name, in characters.
pub const MAX_NAME_CHARS: usize = 128;
/// Longest session or chat ID accepted by `start-turn`, in characters.
pub const MAX_ID_CHARS: usize = 512;
/// Longest chat label kept for refusal messages, in characters.
pub const MAX_LABEL_CHARS: usize = 256;
/// Most actions a gated tool may list as not speaking to anyone.
pub const MAX_ACTIONS: usize = 64;
/// Most tools `workerForbiddenTools` may list.
pub const MAX_WORKER_FORBIDDEN: usize = 64;

/// Rules this module decides with.
pub mod rules {
    /// A channel post while an answer is pinned.
    pub const CHANNEL_POST: &str = "pin.channel-post";
    /// Starting a new chat while an answer is pinned.
    pub const NEW_CHAT: &str = "pin.new-chat";
    /// An outgoing call that does not name its chat.
    pub const MISSING_CHAT: &str = "pin.missing-chat";
    /// An outgoing call to a chat other than the pinned one.
    pub const OTHER_CHAT: &str = "pin.other-chat";
    /// An outgoing call to the pinned chat.
    pub const PINNED_CHAT: &str = "pin.pinned-chat";
    /// The pin could not be read.
    pub const STORAGE_UNAVAILABLE: &str = "pin.storage-unavailable";
    /// A gated outgoing call without a session, so no pin can be looked up.
    pub const NO_SESSION: &str = "pin.no-session";
    /// A dedicated-chat worker calling a tool that changes listen mode or the account for every chat.
    pub const WORKER_FORBIDDEN: &str = "pin.worker-forbidden";
}

/// What a gated tool does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum ToolKind {
    /// Writes into a chat named by `chatParam`.
    Chat,
    /// Posts into a channel: refused while pinned.
    ChannelPost,
    /// Starts a new conversation: refused while pinned.
    NewChat,
}

/// One tool that speaks to people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase")]
pub struct GatedTool {
    /// The host's tool name, matched exactly.
    #[cfg_attr(feature = "schema", schemars(length(min = 1, max = MAX_NAME_CHARS)))]
    pub name: String,
    /// What the tool does.
    pub kind: ToolKind,
    /// For `chat` tools: the argument that names the chat.
    #[serde(default = "default_chat_param")]
    #[cfg_attr(feature = "schema", schemars(length(min = 1, max = MAX_NAME_CHARS)))]
    pub chat_param: String,
    /// For multi-action tools: the argument that names the action.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action_param: Option<String>,
    /// Actions of a multi-action tool that do not speak to anyone (such as `read`); every other action is gated.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_ACTIONS)))]
    pub ungated_actions: Vec<String>,
}

fn default_chat_param() -> String {
    "chat".to_string()
}

/// The `pin` section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase", default)]
pub struct PinConfig {
    /// Whether reply pins are checked.
    pub enabled: bool,
    /// `enforce`, or `observe` to count and log refusals but allow.
    pub mode: crate::model::Mode,
    /// How long a pin lasts if its turn never settles, in minutes. Still valid at exactly this age.
    #[cfg_attr(feature = "schema", schemars(range(min = MIN_TTL_MINUTES, max = MAX_TTL_MINUTES)))]
    pub ttl_minutes: u64,
    /// The tools that speak to people. Replaces the defaults when given.
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_TOOLS)))]
    pub tools: Vec<GatedTool>,
    /// Let gated tool calls without a `sessionId` through unpinned, for a host that never pins; refused otherwise.
    pub allow_missing_session: bool,
    /// Tools a dedicated-chat worker may not call: they change listen mode or the account for every chat.
    /// Replaces the defaults when given.
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_WORKER_FORBIDDEN)))]
    pub worker_forbidden_tools: Vec<String>,
}

impl Default for PinConfig {
    fn default() -> Self {
        PinConfig {
            enabled: true,
            mode: crate::model::Mode::Enforce,
            ttl_minutes: DEFAULT_TTL_MINUTES,
            tools: default_tools(),
            allow_missing_session: false,
            worker_forbidden_tools: default_worker_forbidden(),
        }
    }
}

/// Tools that switch listen mode or the signed-in account, and so act for every chat.
pub fn default_worker_forbidden() -> Vec<String> {
    [
        "teams_listen",
        "teams_listen_mode",
        "teams_set_listen_mode",
        "teams_stop_listening",
        "teams_login",
        "teams_logout",
        "teams_switch_account",
        "teams_set_account",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn chat_tool(name: &str, chat_param: &str) -> GatedTool {
    GatedTool {
        name: name.to_string(),
        kind: ToolKind::Chat,
        chat_param: chat_param.to_string(),
        action_param: None,
        ungated_actions: Vec::new(),
    }
}

fn kind_tool(name: &str, kind: ToolKind) -> GatedTool {
    GatedTool { kind, ..chat_tool(name, "chat") }
}

/// Teams-style send/reply/react/create-chat tools and OpenClaw's message tool.
pub fn default_tools() -> Vec<GatedTool> {
    vec![
        chat_tool("teams_send_chat_message", "chat"),
        kind_tool("teams_send_channel_message", ToolKind::ChannelPost),
        kind_tool("teams_reply_channel_message", ToolKind::ChannelPost),
        kind_tool("teams_create_chat", ToolKind::NewChat),
        chat_tool("teams_chat_members", "chat"),
        chat_tool("teams_update_message", "chat"),
        chat_tool("teams_react", "chat"),
        GatedTool {
            action_param: Some("action".to_string()),
            ungated_actions: ["read", "search", "list", "info", "channel-info", "channel-list", "member-info"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            ..chat_tool("message", "target")
        },
    ]
}

fn is_name(s: &str) -> bool {
    !s.is_empty() && !s.chars().any(char::is_whitespace)
}

impl PinConfig {
    /// Fields of the `pin` section.
    pub const FIELDS: &'static [&'static str] =
        &["enabled", "mode", "ttlMinutes", "tools", "allowMissingSession", "workerForbiddenTools"];

    /// Reads the `pin` section; absent means the defaults.
    pub fn read(r: &mut Reader, obj: Option<Obj<'_>>) -> PinConfig {
        let mut config = PinConfig::default();
        let Some(obj) = obj else {
            return config;
        };
        config.enabled = r.bool(&obj, "enabled", config.enabled);
        config.mode = crate::config::reader::mode(r, &obj);
        config.ttl_minutes = r.int(&obj, "ttlMinutes", MIN_TTL_MINUTES..=MAX_TTL_MINUTES, DEFAULT_TTL_MINUTES);
        if let Some(tools) =
            r.unique_list(&obj, "tools", MAX_TOOLS, read_tool, "tool name", ".name", |t| t.name.clone())
        {
            config.tools = tools;
        }
        config.allow_missing_session = r.bool(&obj, "allowMissingSession", false);
        if let Some(tools) = r.unique_list(
            &obj,
            "workerForbiddenTools",
            MAX_WORKER_FORBIDDEN,
            |r, n| r.string_value(&n, NAME),
            "tool name",
            "",
            |t| t.clone(),
        ) {
            config.worker_forbidden_tools = tools;
        }
        config
    }

    /// The check's status for reports.
    pub fn status(&self) -> crate::model::CheckStatus {
        crate::model::CheckStatus {
            check: "pin".into(),
            active: self.enabled,
            mode: self.mode.as_str().into(),
            reason: (!self.enabled).then(|| "disabled".into()),
            failure_mode: "fail-closed".into(),
        }
    }

    fn ttl_ms(&self) -> u64 {
        self.ttl_minutes.saturating_mul(60_000)
    }

    fn gated(&self, name: &str) -> Option<&GatedTool> {
        self.tools.iter().find(|t| t.name == name)
    }
}

const NAME: Text = Text::non_blank(MAX_NAME_CHARS).matching(is_name, "must be a name without spaces");

fn read_tool(r: &mut Reader, node: Node<'_>) -> Option<GatedTool> {
    let obj = r.object(&node, &["name", "kind", "chatParam", "actionParam", "ungatedActions"])?;
    let name = r.required_string(&obj, "name", NAME);
    let kind = match obj.get("kind") {
        None => {
            r.error(obj.path_of("kind"), "is required");
            None
        }
        Some(k) => match k.value.as_str() {
            Some("chat") => Some(ToolKind::Chat),
            Some("channel-post") => Some(ToolKind::ChannelPost),
            Some("new-chat") => Some(ToolKind::NewChat),
            _ => {
                r.error(
                    k.path,
                    format!(
                        "must be one of `chat`, `channel-post`, `new-chat`, got `{}`",
                        crate::config::reader::shown(k.value)
                    ),
                );
                None
            }
        },
    };
    let chat_param = r.optional_string(&obj, "chatParam", NAME).unwrap_or_else(default_chat_param);
    let action_param = r.optional_string(&obj, "actionParam", NAME);
    let ungated_actions =
        r.list(&obj, "ungatedActions", MAX_ACTIONS, |r, n| r.string_value(&n, NAME)).unwrap_or_default();
    if !ungated_actions.is_empty() && action_param.is_none() {
        r.error(obj.path_of("ungatedActions"), "needs `actionParam` to name the argument that carries the action");
    }
    Some(GatedTool { name: name?, kind: kind?, chat_param, action_param, ungated_actions })
}

/// A pin as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredPin {
    chat_id: String,
    label: String,
    pinned_at_ms: u64,
    #[serde(default)]
    run_id: Option<String>,
    /// A dedicated-chat worker's pin: no TTL, settling leaves it.
    #[serde(default, skip_serializing_if = "core::ops::Not::not")]
    dedicated: bool,
}

impl StoredPin {
    fn state(&self, config: &PinConfig) -> PinState {
        PinState {
            chat_id: self.chat_id.clone(),
            label: self.label.clone(),
            pinned_at_ms: self.pinned_at_ms,
            expires_at_ms: if self.dedicated { u64::MAX } else { self.pinned_at_ms.saturating_add(config.ttl_ms()) },
        }
    }

    /// Valid up to and including exactly the TTL; a pin dated further ahead
    /// than [`crate::time::MAX_FUTURE_SKEW_MS`] counts as expired.
    fn is_valid(&self, config: &PinConfig, now_ms: u64) -> bool {
        self.dedicated || crate::time::age(self.pinned_at_ms, now_ms).is_some_and(|age| age <= config.ttl_ms())
    }
}

fn check_id(field: &str, value: &str, max: usize) -> Result<(), PolicyError> {
    if value.trim().is_empty() {
        return Err(PolicyError::InvalidInput(format!("{field}: must not be empty")));
    }
    let chars = value.chars().count();
    if chars > max {
        return Err(PolicyError::InvalidInput(format!("{field}: must be at most {max} characters, got {chars}")));
    }
    Ok(())
}

/// Pins the turn's reply to its chat, or clears the session's pin when the
/// turn names no chat.
///
/// While an answer is owed (a valid pin) a wake that carries its `prompt` is
/// queued instead and the pin stays; see [`queue`]. A `dedicated` start pins
/// the session to its chat for good: no TTL, settling leaves it, and no later
/// start may move or clear it.
pub fn start(
    config: &PinConfig,
    storage: &dyn Storage,
    secret: &[u8],
    start: &TurnStart,
) -> Result<Option<PinState>, PolicyError> {
    check_id("sessionId", &start.session_id, MAX_ID_CHARS)?;
    if let Some(chat) = &start.chat_id {
        check_id("chatId", chat, MAX_ID_CHARS)?;
    }
    if let Some(label) = &start.label {
        check_id("label", label, MAX_LABEL_CHARS)?;
    }
    if let Some(prompt) = &start.prompt {
        queue::check_prompt(prompt)?;
    }
    if start.dedicated && start.chat_id.is_none() {
        return Err(PolicyError::InvalidInput(
            "dedicated: a dedicated-chat worker needs `chatId`, the chat it runs for".into(),
        ));
    }
    if !config.enabled {
        storage.delete(NAMESPACE, &start.session_id, Condition::Any)?;
        return Ok(None);
    }
    let existing = store::get_json::<StoredPin>(storage, NAMESPACE, &start.session_id)?.map(|(p, _)| p);
    if let Some(pin) = existing.as_ref().filter(|p| p.dedicated) {
        if start.chat_id.as_deref() == Some(pin.chat_id.as_str()) {
            return Ok(Some(pin.state(config)));
        }
        return Err(PolicyError::InvalidInput(format!(
            "chatId: this session is a dedicated-chat worker for `{}`; its pin cannot be moved or cleared, got `{}`",
            crate::config::reader::shorten(&pin.chat_id),
            crate::config::reader::shorten(start.chat_id.as_deref().unwrap_or("none"))
        )));
    }
    let Some(chat_id) = start.chat_id.clone() else {
        storage.delete(NAMESPACE, &start.session_id, Condition::Any)?;
        return Ok(None);
    };
    if !start.dedicated
        && let (Some(prompt), Some(pin)) =
            (&start.prompt, existing.as_ref().filter(|p| p.is_valid(config, start.now_ms)))
    {
        queue::enqueue(config, storage, secret, start, &chat_id, prompt)?;
        return Ok(Some(pin.state(config)));
    }
    let pin = StoredPin {
        label: start.label.clone().unwrap_or_else(|| chat_id.clone()),
        chat_id,
        pinned_at_ms: start.now_ms,
        run_id: start.run_id.clone(),
        dedicated: start.dedicated,
    };
    store::put_json(storage, NAMESPACE, &start.session_id, &pin, Condition::Any)?;
    Ok(Some(pin.state(config)))
}

/// Clears the session's pin, unless a later run of the session re-pinned it.
pub fn settle(storage: &dyn Storage, end: &TurnEnd) -> Result<(), PolicyError> {
    check_id("sessionId", &end.session_id, MAX_ID_CHARS)?;
    let Some((pin, version)) = store::get_json::<StoredPin>(storage, NAMESPACE, &end.session_id)? else {
        return Ok(());
    };
    if pin.dedicated {
        return Ok(());
    }
    let other_run = matches!((&pin.run_id, &end.run_id), (Some(pinned), Some(ending)) if pinned != ending);
    if other_run {
        return Ok(());
    }
    // A conflict means the pin changed under us: a new turn pinned it, so leave it.
    match storage.delete(NAMESPACE, &end.session_id, Condition::Version(version)) {
        Ok(_) | Err(crate::ports::StorageError::Conflict) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// The session's pin if it is still valid.
pub fn current(
    config: &PinConfig,
    storage: &dyn Storage,
    session_id: &str,
    now_ms: u64,
) -> Result<Option<PinState>, PolicyError> {
    check_id("sessionId", session_id, MAX_ID_CHARS)?;
    let pin = store::get_json::<StoredPin>(storage, NAMESPACE, session_id)?;
    Ok(pin.filter(|(p, _)| p.is_valid(config, now_ms)).map(|(p, _)| p.state(config)))
}

/// The pin's answer to a tool call: `None` when the pin has nothing to say
/// (pinning off, not a gated tool or action, no valid pin, or no session
/// where `allowMissingSession` is set). A gated call without a session is
/// refused otherwise.
pub fn check(config: &PinConfig, storage: &dyn Storage, call: &ToolCall, args: Option<&Value>) -> Option<Verdict> {
    if !config.enabled {
        return None;
    }
    if config.worker_forbidden_tools.iter().any(|t| t == &call.tool_name) {
        return worker_forbidden(config, storage, call);
    }
    let tool = config.gated(&call.tool_name)?;
    if let Some(action_param) = &tool.action_param {
        let action = args.and_then(|a| a.get(action_param)).and_then(Value::as_str);
        if let Some(action) = action
            && tool.ungated_actions.iter().any(|u| u == action)
        {
            return None;
        }
    }
    let Some(session) = call.session_id.as_deref().filter(|s| !s.trim().is_empty()) else {
        return (!config.allow_missing_session).then(|| {
            Verdict::deny(
                rules::NO_SESSION,
                "This tool writes to people, and the call names no session, so whether an answer is pinned to a \
                 chat cannot be checked; it is refused to be safe. The host must pass `sessionId` (or set \
                 `pin.allowMissingSession` if it never pins replies).",
                Risk::High,
            )
        });
    };
    let pin = match store::get_json::<StoredPin>(storage, NAMESPACE, session) {
        Ok(pin) => pin,
        Err(e) => {
            return Some(Verdict::deny(
                rules::STORAGE_UNAVAILABLE,
                format!(
                    "The reply pin of this session could not be read ({e}), so a tool that writes to people is refused to be safe."
                ),
                Risk::High,
            ));
        }
    };
    let (pin, _) = pin.filter(|(p, _)| p.is_valid(config, call.now_ms))?;
    Some(judge(tool, &pin, args))
}

/// A listen-mode or account tool: refused while the session is a dedicated-chat worker.
fn worker_forbidden(config: &PinConfig, storage: &dyn Storage, call: &ToolCall) -> Option<Verdict> {
    let session = call.session_id.as_deref().filter(|s| !s.trim().is_empty())?;
    match store::get_json::<StoredPin>(storage, NAMESPACE, session) {
        Ok(Some((pin, _))) if pin.dedicated && pin.is_valid(config, call.now_ms) => Some(Verdict::deny(
            rules::WORKER_FORBIDDEN,
            format!(
                "This process answers only \"{}\", and `{}` would change listen mode or the account for every \
                 chat, so a dedicated-chat worker may not call it.",
                pin.label,
                crate::config::reader::shorten(&call.tool_name)
            ),
            Risk::High,
        )),
        Ok(_) => None,
        Err(e) => Some(Verdict::deny(
            rules::STORAGE_UNAVAILABLE,
            format!(
                "The reply pin of this session could not be read ({e}), so a tool that changes listen mode or the \
                 account is refused to be safe."
            ),
            Risk::High,
        )),
    }
}

fn refusal(label: &str, what: &str) -> String {
    format!(
        "An answer is owed to \"{label}\". {what} Until that answer is sent, tools may write only to that chat, \
         because a message can ask for anything and where the answer goes is not something it gets to decide."
    )
}

fn judge(tool: &GatedTool, pin: &StoredPin, args: Option<&Value>) -> Verdict {
    let deny = |rule: &str, what: &str| Verdict::deny(rule, refusal(&pin.label, what), Risk::High);
    match tool.kind {
        ToolKind::ChannelPost => deny(rules::CHANNEL_POST, "This would post in a channel."),
        ToolKind::NewChat => deny(rules::NEW_CHAT, "This would start a different conversation."),
        ToolKind::Chat => {
            let chat = args.and_then(|a| a.get(&tool.chat_param)).and_then(Value::as_str).filter(|c| !c.is_empty());
            match chat {
                None => deny(rules::MISSING_CHAT, "This does not name the chat it would write to."),
                Some(chat) if chat != pin.chat_id => deny(
                    rules::OTHER_CHAT,
                    &format!("This would write to \"{}\" instead.", crate::config::reader::shorten(chat)),
                ),
                Some(_) => Verdict::allow(
                    rules::PINNED_CHAT,
                    format!("This writes to \"{}\", the chat the answer is owed to.", pin.label),
                ),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fakes::MemoryStorage;
    use crate::model::{Decision, Identity};
    use serde_json::json;

    const T0: u64 = 1_700_000_000_000;

    fn call(tool: &str, args: Value, now_ms: u64) -> ToolCall {
        ToolCall {
            tool_name: tool.into(),
            arguments: args.to_string(),
            call_id: None,
            run_id: None,
            session_id: Some("s1".into()),
            now_ms,
            identity: Identity::default(),
            cwd: None,
            derived_paths: Vec::new(),
        }
    }

    fn pinned(storage: &MemoryStorage) -> PinConfig {
        let config = PinConfig::default();
        let started = start(
            &config,
            storage,
            b"secret",
            &TurnStart {
                session_id: "s1".into(),
                run_id: Some("r1".into()),
                chat_id: Some("19:alice".into()),
                label: Some("Alice".into()),
                now_ms: T0,
                prompt: None,
                dedicated: false,
            },
        );
        assert!(matches!(started, Ok(Some(_))));
        config
    }

    fn decide(config: &PinConfig, storage: &MemoryStorage, c: &ToolCall) -> Option<(Decision, String)> {
        let args: Option<Value> = serde_json::from_str(&c.arguments).ok();
        check(config, storage, c, args.as_ref()).map(|v| (v.decision, v.rule))
    }

    #[test]
    fn pinned_session_decides_each_kind_of_outgoing_call() {
        let storage = MemoryStorage::default();
        let config = pinned(&storage);
        let ttl = DEFAULT_TTL_MINUTES * 60_000;
        type Case = (&'static str, Value, u64, Option<(Decision, &'static str)>);
        let cases: &[Case] = &[
            ("teams_send_chat_message", json!({"chat": "19:alice"}), T0, Some((Decision::Allow, rules::PINNED_CHAT))),
            ("teams_send_chat_message", json!({"chat": "19:bob"}), T0, Some((Decision::Deny, rules::OTHER_CHAT))),
            // The label is not the ID: a chat named by its label is refused.
            ("teams_send_chat_message", json!({"chat": "Alice"}), T0, Some((Decision::Deny, rules::OTHER_CHAT))),
            ("teams_send_chat_message", json!({}), T0, Some((Decision::Deny, rules::MISSING_CHAT))),
            ("teams_send_chat_message", json!({"chat": ""}), T0, Some((Decision::Deny, rules::MISSING_CHAT))),
            ("teams_send_chat_message", json!({"chat": 7}), T0, Some((Decision::Deny, rules::MISSING_CHAT))),
            (
                "teams_send_channel_message",
                json!({"channel": "general"}),
                T0,
                Some((Decision::Deny, rules::CHANNEL_POST)),
            ),
            ("teams_reply_channel_message", json!({}), T0, Some((Decision::Deny, rules::CHANNEL_POST))),
            ("teams_create_chat", json!({"members": ["x"]}), T0, Some((Decision::Deny, rules::NEW_CHAT))),
            ("teams_react", json!({"chat": "19:bob"}), T0, Some((Decision::Deny, rules::OTHER_CHAT))),
            // Reading and calendar tools are never gated.
            ("teams_read_chat", json!({"chat": "19:bob"}), T0, None),
            ("calendar_list", json!({}), T0, None),
            // OpenClaw's message tool: reading actions pass, sending is pinned.
            ("message", json!({"action": "read", "target": "19:bob"}), T0, None),
            ("message", json!({"action": "send", "target": "19:bob"}), T0, Some((Decision::Deny, rules::OTHER_CHAT))),
            ("message", json!({"target": "19:bob"}), T0, Some((Decision::Deny, rules::OTHER_CHAT))),
            (
                "message",
                json!({"action": "send", "target": "19:alice"}),
                T0,
                Some((Decision::Allow, rules::PINNED_CHAT)),
            ),
            // Still valid at exactly the TTL, gone one millisecond later.
            ("teams_send_chat_message", json!({"chat": "19:bob"}), T0 + ttl, Some((Decision::Deny, rules::OTHER_CHAT))),
            ("teams_send_chat_message", json!({"chat": "19:bob"}), T0 + ttl + 1, None),
        ];
        for (tool, args, now, expected) in cases {
            let got = decide(&config, &storage, &call(tool, args.clone(), *now));
            let expected = expected.map(|(d, r)| (d, r.to_string()));
            assert_eq!(got, expected, "{tool} {args} at +{}", now - T0);
        }
    }

    #[test]
    fn refusal_names_the_pinned_chat_and_says_why() {
        let storage = MemoryStorage::default();
        let config = pinned(&storage);
        let c = call("teams_send_chat_message", json!({"chat": "19:bob"}), T0);
        let args: Value = json!({"chat": "19:bob"});
        let v = check(&config, &storage, &c, Some(&args));
        let v = v.unwrap_or_else(|| Verdict::allow("none", ""));
        assert_eq!(v.rule, rules::OTHER_CHAT);
        assert!(v.reason.contains("\"Alice\""), "{}", v.reason);
        assert!(v.reason.contains("\"19:bob\""), "{}", v.reason);
    }

    #[test]
    fn settling_clears_the_pin_but_not_a_newer_runs_pin() {
        let storage = MemoryStorage::default();
        let config = pinned(&storage);
        let end = |run: &str| TurnEnd { session_id: "s1".into(), run_id: Some(run.into()), now_ms: T0 + 5 };
        assert_eq!(settle(&storage, &end("r0")), Ok(()));
        assert!(matches!(current(&config, &storage, "s1", T0 + 6), Ok(Some(_))));
        assert_eq!(settle(&storage, &end("r1")), Ok(()));
        assert_eq!(current(&config, &storage, "s1", T0 + 6), Ok(None));
        let c = call("teams_send_chat_message", json!({"chat": "19:bob"}), T0 + 7);
        assert_eq!(decide(&config, &storage, &c), None);
    }

    #[test]
    fn unreadable_pin_refuses_gated_tools_but_not_others() {
        let storage = MemoryStorage::default();
        let config = pinned(&storage);
        storage.fail_with(crate::ports::StorageError::Unavailable("disk gone".into()));
        let c = call("teams_send_chat_message", json!({"chat": "19:alice"}), T0);
        assert_eq!(decide(&config, &storage, &c), Some((Decision::Deny, rules::STORAGE_UNAVAILABLE.to_string())));
        let c = call("calendar_list", json!({}), T0);
        assert_eq!(decide(&config, &storage, &c), None);
    }

    #[test]
    fn disabled_pinning_gates_nothing() {
        let storage = MemoryStorage::default();
        pinned(&storage);
        let config = PinConfig { enabled: false, ..PinConfig::default() };
        let c = call("teams_send_chat_message", json!({"chat": "19:bob"}), T0);
        assert_eq!(decide(&config, &storage, &c), None);
    }

    fn without_session(tool: &str, args: Value, session: Option<&str>) -> ToolCall {
        ToolCall { session_id: session.map(str::to_string), ..call(tool, args, T0) }
    }

    #[test]
    fn gated_call_without_a_session_is_refused_while_pinning_is_on() {
        let storage = MemoryStorage::default();
        let config = pinned(&storage);
        let no_session = Some((Decision::Deny, rules::NO_SESSION.to_string()));
        type Case = (&'static str, Value, Option<&'static str>, bool);
        // (tool, arguments, session, refused)
        let cases: &[Case] = &[
            ("teams_send_chat_message", json!({"chat": "19:alice"}), None, true),
            ("teams_send_chat_message", json!({"chat": "19:bob"}), None, true),
            ("teams_send_chat_message", json!({"chat": "19:alice"}), Some(""), true),
            ("teams_send_chat_message", json!({"chat": "19:alice"}), Some("  "), true),
            ("teams_send_channel_message", json!({"channel": "general"}), None, true),
            ("teams_create_chat", json!({"members": ["x"]}), None, true),
            ("message", json!({"action": "send", "target": "19:bob"}), None, true),
            ("message", json!({"target": "19:bob"}), None, true),
            // Not gated: reading actions and tools that speak to nobody.
            ("message", json!({"action": "read", "target": "19:bob"}), None, false),
            ("calendar_list", json!({}), None, false),
            ("teams_read_chat", json!({"chat": "19:bob"}), None, false),
        ];
        for (tool, args, session, refused) in cases {
            let got = decide(&config, &storage, &without_session(tool, args.clone(), *session));
            let expected = if *refused { no_session.clone() } else { None };
            assert_eq!(got, expected, "{tool} {args} session {session:?}");
        }
        let c = without_session("teams_send_chat_message", json!({"chat": "19:alice"}), None);
        let args = json!({"chat": "19:alice"});
        let v = check(&config, &storage, &c, Some(&args)).unwrap_or_else(|| Verdict::allow("none", ""));
        assert!(v.reason.contains("`sessionId`") && v.reason.contains("`pin.allowMissingSession`"), "{}", v.reason);
    }

    #[test]
    fn gated_call_without_a_session_is_refused_even_when_no_pin_exists_anywhere() {
        let storage = MemoryStorage::default();
        let config = PinConfig::default();
        let c = without_session("teams_send_chat_message", json!({"chat": "19:alice"}), None);
        assert_eq!(decide(&config, &storage, &c), Some((Decision::Deny, rules::NO_SESSION.to_string())));
        assert_eq!(storage.writes(), 0);
    }

    #[test]
    fn an_operator_who_opts_out_lets_sessionless_calls_through_but_still_pins_sessions() {
        let storage = MemoryStorage::default();
        let config = PinConfig { allow_missing_session: true, ..pinned(&storage) };
        for session in [None, Some(""), Some(" ")] {
            let c = without_session("teams_send_chat_message", json!({"chat": "19:bob"}), session);
            assert_eq!(decide(&config, &storage, &c), None, "session {session:?}");
        }
        let c = call("teams_send_chat_message", json!({"chat": "19:bob"}), T0);
        assert_eq!(decide(&config, &storage, &c), Some((Decision::Deny, rules::OTHER_CHAT.to_string())));
    }

    #[test]
    fn disabled_pinning_does_not_ask_for_a_session() {
        let storage = MemoryStorage::default();
        let config = PinConfig { enabled: false, ..PinConfig::default() };
        let c = without_session("teams_send_chat_message", json!({"chat": "19:bob"}), None);
        assert_eq!(decide(&config, &storage, &c), None);
    }

    #[test]
    fn allow_missing_session_is_read_and_a_wrong_type_names_the_field() {
        let read = |text: &str| crate::Config::parse(text).map(|c| c.pin.allow_missing_session);
        assert_eq!(read("{}"), Ok(false));
        assert_eq!(read(r#"{"pin": {}}"#), Ok(false));
        assert_eq!(read(r#"{"pin": {"allowMissingSession": false}}"#), Ok(false));
        assert_eq!(read(r#"{"pin": {"allowMissingSession": true}}"#), Ok(true));
        for (value, shown) in [("\"yes\"", "\"yes\""), ("1", "1"), ("null", "null")] {
            let errors: Vec<String> = read(&format!(r#"{{"pin": {{"allowMissingSession": {value}}}}}"#))
                .expect_err("refused")
                .iter()
                .map(ToString::to_string)
                .collect();
            assert_eq!(errors, [format!("pin.allowMissingSession: must be `true` or `false`, got `{shown}`")]);
        }
    }

    #[test]
    fn start_turn_rejects_blank_and_oversized_ids() {
        let storage = MemoryStorage::default();
        let config = PinConfig::default();
        let mut s = TurnStart {
            session_id: " ".into(),
            run_id: None,
            chat_id: Some("c".into()),
            label: None,
            now_ms: T0,
            prompt: None,
            dedicated: false,
        };
        assert!(
            matches!(start(&config, &storage, b"secret", &s), Err(PolicyError::InvalidInput(m)) if m.starts_with("sessionId"))
        );
        s.session_id = "s".into();
        s.chat_id = Some("c".repeat(MAX_ID_CHARS + 1));
        assert!(
            matches!(start(&config, &storage, b"secret", &s), Err(PolicyError::InvalidInput(m)) if m.starts_with("chatId"))
        );
        s.chat_id = Some("c".repeat(MAX_ID_CHARS));
        assert!(matches!(start(&config, &storage, b"secret", &s), Ok(Some(_))));
        assert_eq!(storage.len(), 1);
    }
}
