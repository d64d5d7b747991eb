//! OpenClaw (`openclaw.json`, JSON5): the plugin entry and the host settings
//! Warden's plugin depends on.

use super::tree::{Node, Seg, keys};
use super::{Finding, add_item, remove, remove_item, set};
use crate::model::Risk;
use crate::prelude::*;

/// Warden's plugin id (`openclaw.plugin.json`).
pub const PLUGIN_ID: &str = "warden";
/// Shortest hook timeout that fits the plugin's first call, in milliseconds
/// (12,000): starting the guard may take its start-up deadline (10 s), then
/// the check its CPU deadline (2 s).
pub const MIN_HOOK_TIMEOUT_MS: u64 = 12_000;
/// What a fix sets a short hook timeout to: OpenClaw's own default for the
/// prompt and tool hooks, in milliseconds (15,000).
pub const FIXED_HOOK_TIMEOUT_MS: u64 = 15_000;
/// The queue mode a fix sets: messages that arrive during a run wait for it
/// and get their own checked turn.
pub const SAFE_QUEUE_MODE: &str = "followup";
/// The hooks Warden's plugin registers.
pub const PLUGIN_HOOKS: [&str; 6] =
    ["before_prompt_build", "before_tool_call", "after_tool_call", "message_sending", "message_sent", "agent_end"];

pub const PLUGINS_DISABLED: &str = "config.openclaw.plugins-disabled";
pub const PLUGIN_DENIED: &str = "config.openclaw.plugin-denied";
pub const PLUGIN_NOT_ALLOWED: &str = "config.openclaw.plugin-not-allowed";
pub const PLUGIN_MISSING: &str = "config.openclaw.plugin-missing";
pub const PLUGIN_DISABLED: &str = "config.openclaw.plugin-disabled";
pub const CONVERSATION_ACCESS: &str = "config.openclaw.conversation-access";
pub const PROMPT_INJECTION_BLOCKED: &str = "config.openclaw.prompt-injection-blocked";
pub const HOOK_TIMEOUT: &str = "config.openclaw.hook-timeout";
pub const QUEUE_STEER: &str = "config.openclaw.queue-steer";

fn entry(rest: &[&str]) -> Vec<Seg> {
    let mut path = keys(&["plugins", "entries", PLUGIN_ID]);
    path.extend(keys(rest));
    path
}

fn lists(node: Option<&Node>, item: &str) -> bool {
    node.and_then(Node::as_array).is_some_and(|items| items.iter().any(|n| n.as_str() == Some(item)))
}

pub fn audit(root: &Node, out: &mut Vec<Finding>) {
    queue(root, out);
    let plugins_enabled = keys(&["plugins", "enabled"]);
    if root.at(&plugins_enabled).and_then(Node::as_bool) == Some(false) {
        out.push(Finding::new(
            PLUGINS_DISABLED,
            Risk::Critical,
            super::tree::display(&plugins_enabled),
            "every plugin is off, Warden's too: no tool call, turn or message is checked; the fix turns plugins on"
                .to_string(),
            set(plugins_enabled.clone(), true.into()),
        ));
    }
    let deny = keys(&["plugins", "deny"]);
    if lists(root.at(&deny), PLUGIN_ID) {
        out.push(Finding::new(
            PLUGIN_DENIED,
            Risk::Critical,
            super::tree::display(&deny),
            format!("`{PLUGIN_ID}` is on the deny list, which wins over everything: the fix removes it"),
            remove_item(deny.clone(), PLUGIN_ID),
        ));
    }
    let allow = keys(&["plugins", "allow"]);
    if let Some(items) = root.at(&allow).and_then(Node::as_array)
        && !items.is_empty()
        && !lists(root.at(&allow), PLUGIN_ID)
    {
        out.push(Finding::new(
            PLUGIN_NOT_ALLOWED,
            Risk::Critical,
            super::tree::display(&allow),
            format!("only the listed plugins load and `{PLUGIN_ID}` is not listed: the fix adds it"),
            add_item(allow.clone(), PLUGIN_ID),
        ));
    }
    let base = entry(&[]);
    let Some(plugin) = root.at(&base) else {
        out.push(Finding::new(
            PLUGIN_MISSING,
            Risk::High,
            super::tree::display(&base),
            "there is no entry for Warden's plugin: install it (`openclaw plugins install <folder>`) and enable it \
             with `hooks.allowConversationAccess: true`; not fixed automatically, because an entry for a plugin \
             that is not installed stops the gateway from starting"
                .to_string(),
            None,
        ));
        return;
    };
    let enabled = entry(&["enabled"]);
    if plugin.get("enabled").and_then(Node::as_bool) == Some(false) {
        out.push(Finding::new(
            PLUGIN_DISABLED,
            Risk::Critical,
            super::tree::display(&enabled),
            "Warden's plugin is disabled: nothing is checked; the fix enables it".to_string(),
            set(enabled, true.into()),
        ));
    }
    let access = entry(&["hooks", "allowConversationAccess"]);
    if root.at(&access).and_then(Node::as_bool) != Some(true) {
        out.push(Finding::new(
            CONVERSATION_ACCESS,
            Risk::High,
            super::tree::display(&access),
            "without it OpenClaw drops the plugin's turn hooks (`before_prompt_build`, `agent_end`), some runs \
             without a warning: turns go unchecked and reply pins never settle; the fix sets it to `true`"
                .to_string(),
            set(access, true.into()),
        ));
    }
    let injection = entry(&["hooks", "allowPromptInjection"]);
    if root.at(&injection).and_then(Node::as_bool) == Some(false) {
        out.push(Finding::new(
            PROMPT_INJECTION_BLOCKED,
            Risk::High,
            super::tree::display(&injection),
            "`false` blocks `before_prompt_build`, so safety scenarios never reach the model; the fix removes the \
             setting"
                .to_string(),
            remove(injection),
        ));
    }
    let all = entry(&["hooks", "timeoutMs"]);
    if let Some(ms) = root.at(&all).and_then(Node::as_u64)
        && ms < MIN_HOOK_TIMEOUT_MS
    {
        out.push(short_timeout(all, ms, "every hook of the plugin"));
    }
    if let Some(per) = root.at(&entry(&["hooks", "timeouts"])).and_then(Node::members) {
        for hook in PLUGIN_HOOKS {
            if let Some(ms) = per.iter().rev().find(|m| m.key == hook).and_then(|m| m.value.as_u64())
                && ms < MIN_HOOK_TIMEOUT_MS
            {
                out.push(short_timeout(entry(&["hooks", "timeouts", hook]), ms, hook));
            }
        }
    }
}

fn short_timeout(path: Vec<Seg>, ms: u64, what: &str) -> Finding {
    Finding::new(
        HOOK_TIMEOUT,
        Risk::High,
        super::tree::display(&path),
        format!(
            "`{ms}` ms is shorter than the plugin's first call may take ({MIN_HOOK_TIMEOUT_MS} ms) for {what}: a \
             timed-out prompt or message hook is skipped (unchecked) and a tool hook refuses the call; the fix sets \
             {FIXED_HOOK_TIMEOUT_MS} ms"
        ),
        set(path, FIXED_HOOK_TIMEOUT_MS.into()),
    )
}

fn queue(root: &Node, out: &mut Vec<Finding>) {
    let mode = keys(&["messages", "queue", "mode"]);
    let detail = |what: &str| {
        format!(
            "{what}: a message that arrives while a run is active joins that run without a new prompt build, so \
             Warden never checks it; the fix sets `{SAFE_QUEUE_MODE}`"
        )
    };
    match root.at(&mode) {
        None => out.push(Finding::new(
            QUEUE_STEER,
            Risk::Medium,
            super::tree::display(&mode),
            detail("not set, so OpenClaw's default `steer` applies"),
            set(mode, SAFE_QUEUE_MODE.into()),
        )),
        Some(n) if n.as_str() == Some("steer") => out.push(Finding::new(
            QUEUE_STEER,
            Risk::Medium,
            super::tree::display(&mode),
            detail("`steer`"),
            set(mode, SAFE_QUEUE_MODE.into()),
        )),
        Some(_) => {}
    }
    if let Some(channels) = root.at(&keys(&["messages", "queue", "byChannel"])).and_then(Node::members) {
        for m in channels {
            if m.value.as_str() == Some("steer") {
                let path = keys(&["messages", "queue", "byChannel", &m.key]);
                if out.iter().any(|f| f.rule == QUEUE_STEER && f.path == super::tree::display(&path)) {
                    continue;
                }
                out.push(Finding::new(
                    QUEUE_STEER,
                    Risk::Medium,
                    super::tree::display(&path),
                    detail(&format!("`steer` on `{}`", m.key)),
                    set(path.clone(), SAFE_QUEUE_MODE.into()),
                ));
            }
        }
    }
}
