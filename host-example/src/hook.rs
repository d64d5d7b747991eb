//! `warden hook claude-code`: a Claude Code `PreToolUse` command hook.
//!
//! The event arrives as JSON on stdin. A denial answers
//! `hookSpecificOutput.permissionDecision: "deny"` with the reason (shown to
//! the model); an `ask` answers `"ask"` with the reason and the scope an
//! approval would be remembered for (shown to the person). An `allow` defers to
//! Claude Code's own permission settings by printing nothing, because
//! `"allow"` would skip Claude Code's own prompts; `--approve-allowed` prints
//! `"allow"` instead. With `--exit-code`, a denial exits 2 with the reason on
//! stderr instead of printing JSON (the older hook protocol).
//!
//! The call is judged at the host's clock: no time is read from the event, so
//! `--replay` is refused.
//!
//! Failure mode: fail-closed. An event that cannot be read, or a guard that
//! cannot start, exits 2, which blocks the tool call, with the reason on stderr.

use crate::bindings::warden::guard::types::{ApprovalScope, Decision, Verdict};
use crate::json::{ToolCallJson, decision_name, now_ms};
use serde::Deserialize;
use serde_json::{Value, json};

/// Exit code that makes Claude Code block the call and show stderr to the model.
pub const EXIT_BLOCK: i32 = 2;

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

/// Reads the event, naming the field on error.
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
        identity: crate::json::IdentityJson { agent_id: Some("claude-code".into()), ..Default::default() },
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
