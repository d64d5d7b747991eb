//! `warden hook claude-code`: Claude Code command hooks.
//!
//! The event arrives as JSON on stdin; `hook_event_name` says which.
//!
//! `PreToolUse` judges the call. A denial answers
//! `hookSpecificOutput.permissionDecision: "deny"` with the reason (shown to
//! the model); an `ask` answers `"ask"` with the reason and the scope an
//! approval would be remembered for (shown to the person). An `allow` defers to
//! Claude Code's own permission settings by printing nothing, because
//! `"allow"` would skip Claude Code's own prompts; `--approve-allowed` prints
//! `"allow"` instead. With `--exit-code`, a denial exits 2 with the reason on
//! stderr instead of printing JSON (the older hook protocol).
//! Failure mode: fail-closed. An event that cannot be read, or a guard that
//! cannot start, exits 2, which blocks the tool call, with the reason on stderr.
//!
//! `PostToolUse` (and `PostToolUseFailure`) reports the tool's result
//! (`tool_response`, or the failure's `error`) to `observe-tool-result`, so
//! the destinations in it are known to come from content the agent read. It
//! prints nothing and never exits 2: the result reaches the model unchanged.
//! When it cannot be recorded the hook exits 1 (a non-blocking error Claude
//! Code shows the person) and the result's destinations stay unknown to later
//! checks, which ask by default.
//!
//! `UserPromptSubmit` passes the person's prompt to `check-turn` with trigger
//! `user`, so the values the person named in it are known; safety text comes
//! back as `hookSpecificOutput.additionalContext`. Failure mode: fail-open, as
//! every inbound check: a prompt that cannot be checked proceeds, exit 1 with
//! the reason on stderr.
//!
//! Every event is handled at the host's clock: no time is read from the event,
//! so `--replay` is refused. All three carry the same identity (agent
//! `claude-code`) and the event's `session_id`.

use crate::bindings::exports::warden::guard::policy::TurnOutcome;
use crate::bindings::warden::guard::types::{ApprovalScope, Decision, Verdict};
use crate::json::{IdentityJson, ToolCallJson, ToolResultJson, TriggerJson, TurnJson, decision_name, now_ms};
use crate::runtime::Runtime;
use serde::Deserialize;
use serde_json::{Value, json};

/// Exit code that makes Claude Code block the call and show stderr to the model.
pub const EXIT_BLOCK: i32 = 2;
/// Exit code Claude Code treats as a non-blocking error: stderr is shown to
/// the person and the session goes on unchanged.
pub const EXIT_NON_BLOCKING: i32 = 1;

/// The fields of a `PreToolUse` event Warden reads; others are ignored, since
/// Claude Code adds fields over time.
#[derive(Debug, Deserialize)]
pub struct PreToolUse {
    pub hook_event_name: String,
    pub tool_name: String,
    #[serde(default)]
    pub tool_input: Value,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub tool_use_id: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
}

/// How the hook answers.
#[derive(Debug, Clone, Copy, Default)]
pub struct HookStyle {
    /// Print `"allow"` for allowed calls instead of deferring.
    pub approve_allowed: bool,
    /// Answer denials with exit code 2 and stderr instead of JSON.
    pub exit_code: bool,
}

/// The fields of a `PostToolUse` (or `PostToolUseFailure`) event Warden reads.
#[derive(Debug, Deserialize)]
pub struct PostToolUse {
    pub hook_event_name: String,
    pub tool_name: String,
    /// What the tool returned (`PostToolUse`): text or any JSON value.
    #[serde(default)]
    pub tool_response: Option<Value>,
    /// Why the tool failed (`PostToolUseFailure`).
    #[serde(default)]
    pub error: Option<Value>,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub tool_use_id: Option<String>,
}

/// The fields of a `UserPromptSubmit` event Warden reads.
#[derive(Debug, Deserialize)]
pub struct UserPromptSubmit {
    pub hook_event_name: String,
    pub prompt: String,
    #[serde(default)]
    pub session_id: Option<String>,
}

/// An event this hook answers.
#[derive(Debug)]
pub enum HookEvent {
    PreToolUse(PreToolUse),
    PostToolUse(PostToolUse),
    UserPromptSubmit(UserPromptSubmit),
}

/// Which event an answer is for, so a failure gets that event's failure mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    PreToolUse,
    PostToolUse,
    UserPromptSubmit,
}

#[derive(Debug, Deserialize)]
struct EventName {
    hook_event_name: String,
}

/// Reads the event, naming the field on error; the error carries the event's
/// kind when its name could be read.
pub fn read_event(text: &str) -> Result<HookEvent, (Option<EventKind>, String)> {
    let name: EventName = crate::json::parse(text).map_err(|e| (None, e))?;
    let kind = match name.hook_event_name.as_str() {
        "PreToolUse" => EventKind::PreToolUse,
        "PostToolUse" | "PostToolUseFailure" => EventKind::PostToolUse,
        "UserPromptSubmit" => EventKind::UserPromptSubmit,
        other => {
            return Err((
                None,
                format!(
                    "hook_event_name: `{other}` is not supported; register this hook for `PreToolUse`, \
                     `PostToolUse`, `PostToolUseFailure` or `UserPromptSubmit`"
                ),
            ));
        }
    };
    let failed = |e: String| (Some(kind), e);
    let event = match kind {
        EventKind::PreToolUse => HookEvent::PreToolUse(parse_event(text).map_err(failed)?),
        EventKind::PostToolUse => {
            let event: PostToolUse = crate::json::parse(text).map_err(failed)?;
            if event.tool_name.trim().is_empty() {
                return Err(failed("tool_name: must not be empty".into()));
            }
            let missing = if event.hook_event_name == "PostToolUse" {
                event.tool_response.is_none().then_some("tool_response: missing field `tool_response`")
            } else {
                event.error.is_none().then_some("error: missing field `error`")
            };
            if let Some(message) = missing {
                return Err(failed(message.into()));
            }
            HookEvent::PostToolUse(event)
        }
        EventKind::UserPromptSubmit => HookEvent::UserPromptSubmit(crate::json::parse(text).map_err(failed)?),
    };
    Ok(event)
}

/// Reads a `PreToolUse` event, naming the field on error.
pub fn parse_event(text: &str) -> Result<PreToolUse, String> {
    let event: PreToolUse = crate::json::parse(text)?;
    if event.hook_event_name != "PreToolUse" {
        return Err(format!(
            "hook_event_name: `{}` is not supported; register this hook for `PreToolUse`",
            event.hook_event_name
        ));
    }
    if event.tool_name.trim().is_empty() {
        return Err("tool_name: must not be empty".into());
    }
    Ok(event)
}

/// The identity every event of this hook carries.
fn identity() -> IdentityJson {
    IdentityJson { agent_id: Some("claude-code".into()), ..Default::default() }
}

/// The tool result a `PostToolUse` event reports.
pub fn tool_result(event: &PostToolUse) -> ToolResultJson {
    let failed = event.hook_event_name == "PostToolUseFailure";
    let content = if failed { event.error.clone() } else { event.tool_response.clone() };
    ToolResultJson {
        tool_name: event.tool_name.clone(),
        content: content.unwrap_or(Value::Null),
        call_id: event.tool_use_id.clone(),
        run_id: None,
        session_id: event.session_id.clone(),
        now_ms: Some(now_ms()),
        identity: identity(),
        is_error: failed,
    }
}

/// The turn a `UserPromptSubmit` event starts: the person's own words.
pub fn turn(event: &UserPromptSubmit) -> TurnJson {
    TurnJson {
        run_id: None,
        session_id: event.session_id.clone(),
        now_ms: Some(now_ms()),
        identity: identity(),
        trigger: TriggerJson::User,
        message: event.prompt.clone(),
        context: Default::default(),
        history: Vec::new(),
        queue_mode: None,
        hook_timeout_ms: None,
    }
}

/// Answers one event read from `text`; `start` opens the guard. Whatever
/// fails gets the event's own failure mode.
pub fn run(text: &str, style: HookStyle, start: impl FnOnce() -> Result<Runtime, String>) -> HookAnswer {
    let event = match read_event(text) {
        Ok(event) => event,
        Err((Some(EventKind::PostToolUse), message)) => return not_recorded(&message),
        Err((Some(EventKind::UserPromptSubmit), message)) => return unchecked_prompt(&message),
        Err((_, message)) => return failure(&message),
    };
    match event {
        HookEvent::PreToolUse(event) => match start() {
            Ok(runtime) => answer(&runtime.check_tool_call(&tool_call(&event).into()), style),
            Err(message) => failure(message.trim_end()),
        },
        HookEvent::PostToolUse(event) => {
            let observed = start().and_then(|runtime| {
                runtime.observe_tool_result(&tool_result(&event).into()).map_err(|e| e.to_string())
            });
            match observed {
                Ok(_) => HookAnswer { stdout: None, stderr: None, code: 0 },
                Err(message) => not_recorded(message.trim_end()),
            }
        }
        HookEvent::UserPromptSubmit(event) => match start() {
            Ok(runtime) => prompt_answer(&runtime.check_turn(&turn(&event).into())),
            Err(message) => unchecked_prompt(message.trim_end()),
        },
    }
}

/// A `UserPromptSubmit` answer: safety text as `additionalContext`; a turn
/// that must not proceed is blocked with the rule and reason.
pub fn prompt_answer(outcome: &TurnOutcome) -> HookAnswer {
    if !outcome.proceed {
        let reason = format!("Warden ({}): {}", outcome.rule, outcome.reason);
        return HookAnswer { stdout: Some(json!({"decision": "block", "reason": reason})), stderr: None, code: 0 };
    }
    let stdout = outcome
        .append_context
        .as_ref()
        .map(|text| json!({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": text}}));
    HookAnswer { stdout, stderr: None, code: 0 }
}

/// A tool result that could not be recorded: the result is untouched.
fn not_recorded(message: &str) -> HookAnswer {
    HookAnswer {
        stdout: None,
        stderr: Some(format!(
            "Warden could not record this tool's result ({message}); the result is unchanged, and the destinations \
             in it are unknown to later checks, which ask by default"
        )),
        code: EXIT_NON_BLOCKING,
    }
}

/// A prompt that could not be checked: it proceeds, as inbound checks fail open.
fn unchecked_prompt(message: &str) -> HookAnswer {
    HookAnswer {
        stdout: None,
        stderr: Some(format!(
            "Warden could not check this prompt ({message}); it proceeds unchecked, and the values it names are \
             not known as named by the person"
        )),
        code: EXIT_NON_BLOCKING,
    }
}

/// The tool call the event describes.
pub fn tool_call(event: &PreToolUse) -> ToolCallJson {
    ToolCallJson {
        tool_name: event.tool_name.clone(),
        arguments: match &event.tool_input {
            Value::Null => json!({}),
            other => other.clone(),
        },
        call_id: event.tool_use_id.clone(),
        run_id: None,
        session_id: event.session_id.clone(),
        now_ms: Some(now_ms()),
        identity: identity(),
        cwd: event.cwd.clone(),
        derived_paths: Vec::new(),
    }
}

fn scope_words(scope: Option<ApprovalScope>) -> &'static str {
    match scope {
        Some(ApprovalScope::Once) => "an approval covers this call only",
        Some(ApprovalScope::Session) => "an approval is remembered for this session",
        Some(ApprovalScope::Always) => "an approval is remembered until the policy changes",
        None => "an approval covers this call only",
    }
}

/// What the hook prints on stdout and its exit code, with stderr text.
pub struct HookAnswer {
    pub stdout: Option<Value>,
    pub stderr: Option<String>,
    pub code: i32,
}

/// Turns a verdict into the hook's answer.
pub fn answer(verdict: &Verdict, style: HookStyle) -> HookAnswer {
    let reason = format!("Warden ({}): {}", verdict.rule, verdict.reason);
    let output = |decision: &str, reason: &str| {
        Some(json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": decision,
                "permissionDecisionReason": reason,
            }
        }))
    };
    match verdict.decision {
        Decision::Deny if style.exit_code => HookAnswer { stdout: None, stderr: Some(reason), code: EXIT_BLOCK },
        Decision::Deny => HookAnswer { stdout: output("deny", &reason), stderr: None, code: 0 },
        Decision::Ask => {
            let text = format!("{reason} ({})", scope_words(verdict.scope));
            HookAnswer { stdout: output("ask", &text), stderr: None, code: 0 }
        }
        Decision::Allow if style.approve_allowed => {
            HookAnswer { stdout: output(decision_name(verdict.decision), &reason), stderr: None, code: 0 }
        }
        Decision::Allow => HookAnswer { stdout: None, stderr: None, code: 0 },
    }
}

/// The answer when the hook cannot decide: block, with the reason.
pub fn failure(message: &str) -> HookAnswer {
    HookAnswer {
        stdout: None,
        stderr: Some(format!("Warden could not check this tool call, so it is blocked: {message}")),
        code: EXIT_BLOCK,
    }
}
