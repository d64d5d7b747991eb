//! Claude Code (`settings.json`): the permission mode, broad allow rules, and
//! Warden's `PreToolUse` command hook (`warden hook claude-code ...`).

use super::tree::{Node, Seg, keys};
use super::{Finding, remove, remove_item, set};
use crate::model::Risk;
use crate::prelude::*;

/// What marks a hook command as Warden's.
pub const HOOK_MARK: &str = "hook claude-code";
/// Shortest timeout, in seconds, for Warden's hook (10): a cold start
/// compiles the component, and each check may use its CPU deadline (2 s).
pub const MIN_HOOK_TIMEOUT_S: u64 = 10;
/// What a fix sets a short timeout to: Claude Code's default, in seconds (60).
pub const FIXED_HOOK_TIMEOUT_S: u64 = 60;
/// Matchers that cover every tool.
pub const MATCH_ALL: [&str; 3] = ["", "*", ".*"];
/// Tools that act (run commands, write files, fetch URLs): allowing them
/// without a specifier skips the person's prompt for every such call.
pub const ACTING_TOOLS: [&str; 6] = ["Bash", "Write", "Edit", "MultiEdit", "NotebookEdit", "WebFetch"];

pub const HOOKS_DISABLED: &str = "config.claude-code.hooks-disabled";
pub const BYPASS_PERMISSIONS: &str = "config.claude-code.bypass-permissions";
pub const BROAD_ALLOW: &str = "config.claude-code.broad-allow";
pub const HOOK_MISSING: &str = "config.claude-code.hook-missing";
pub const HOOK_MATCHER: &str = "config.claude-code.hook-matcher";
pub const HOOK_TIMEOUT: &str = "config.claude-code.hook-timeout";

/// Whether an allow rule covers every use of an acting tool: `Bash`,
/// `Bash(*)`, `Bash(:*)`, `Write(**)`, `WebFetch(domain:*)`.
pub fn is_broad(rule: &str) -> bool {
    let rule = rule.trim();
    let (tool, spec) = match rule.split_once('(') {
        Some((tool, rest)) => match rest.strip_suffix(')') {
            Some(spec) => (tool.trim(), Some(spec)),
            None => return false,
        },
        None => (rule, None),
    };
    if !ACTING_TOOLS.contains(&tool) {
        return false;
    }
    match spec {
        None => true,
        Some(spec) => {
            let spec = spec.trim().strip_prefix("domain:").unwrap_or(spec.trim());
            spec.chars().all(|c| matches!(c, '*' | ':' | '/' | '.' | ' ' | '~'))
        }
    }
}

pub fn audit(root: &Node, out: &mut Vec<Finding>) {
    let disable = keys(&["disableAllHooks"]);
    if root.at(&disable).and_then(Node::as_bool) == Some(true) {
        out.push(Finding::new(
            HOOKS_DISABLED,
            Risk::Critical,
            super::tree::display(&disable),
            "every hook is off, Warden's too: no tool call is checked; the fix removes the setting".to_string(),
            remove(disable),
        ));
    }
    let mode = keys(&["permissions", "defaultMode"]);
    if root.at(&mode).and_then(Node::as_str) == Some("bypassPermissions") {
        out.push(Finding::new(
            BYPASS_PERMISSIONS,
            Risk::Critical,
            super::tree::display(&mode),
            "`bypassPermissions` runs every tool without asking, so Warden's `ask` has no person to reach; the fix \
             sets `default`"
                .to_string(),
            set(mode, "default".into()),
        ));
    }
    let allow = keys(&["permissions", "allow"]);
    if let Some(items) = root.at(&allow).and_then(Node::as_array) {
        for (i, item) in items.iter().enumerate() {
            if let Some(rule) = item.as_str().filter(|r| is_broad(r)) {
                let mut path = allow.clone();
                path.push(Seg::Index(i));
                out.push(Finding::new(
                    BROAD_ALLOW,
                    Risk::High,
                    super::tree::display(&path),
                    format!(
                        "`{rule}` allows every use of the tool without asking the person; the fix removes it (allow \
                         narrow rules such as `Bash(npm run test:*)` instead)"
                    ),
                    remove_item(allow.clone(), rule),
                ));
            }
        }
    }
    hook(root, out);
}

fn hook(root: &Node, out: &mut Vec<Finding>) {
    let pre = keys(&["hooks", "PreToolUse"]);
    let mut found = false;
    let mut covered = false;
    let mut partial = Vec::new();
    for (i, group) in root.at(&pre).and_then(Node::as_array).unwrap_or_default().iter().enumerate() {
        for (j, h) in group.get("hooks").and_then(Node::as_array).unwrap_or_default().iter().enumerate() {
            let ours = h.get("command").and_then(Node::as_str).is_some_and(|c| c.contains(HOOK_MARK));
            if !ours {
                continue;
            }
            found = true;
            let matcher = group.get("matcher");
            let all = match matcher {
                None => true,
                Some(m) => m.as_str().is_some_and(|m| MATCH_ALL.contains(&m.trim())),
            };
            if all {
                covered = true;
            } else {
                partial.push((i, matcher.and_then(Node::as_str).unwrap_or_default().to_string()));
            }
            let mut path = pre.clone();
            path.extend([Seg::Index(i), Seg::Key("hooks".into()), Seg::Index(j), Seg::Key("timeout".into())]);
            if let Some(s) = h.get("timeout").and_then(Node::as_u64)
                && s < MIN_HOOK_TIMEOUT_S
            {
                out.push(Finding::new(
                    HOOK_TIMEOUT,
                    Risk::High,
                    super::tree::display(&path),
                    format!(
                        "`{s}` s is shorter than Warden's hook may take ({MIN_HOOK_TIMEOUT_S} s): Claude Code treats a \
                         timed-out hook as a non-blocking error and runs the tool unchecked; the fix sets \
                         {FIXED_HOOK_TIMEOUT_S} s"
                    ),
                    set(path, FIXED_HOOK_TIMEOUT_S.into()),
                ));
            }
        }
    }
    if !found {
        out.push(Finding::new(
            HOOK_MISSING,
            Risk::Critical,
            super::tree::display(&pre),
            "no `PreToolUse` hook runs `warden hook claude-code`: no tool call is checked; add one with matcher `*` \
             (see the README's Claude Code section); not added automatically, because the hook needs your \
             configuration and database paths and refuses every call until they exist"
                .to_string(),
            None,
        ));
    } else if !covered {
        for (i, matcher) in partial {
            let mut path = pre.clone();
            path.extend([Seg::Index(i), Seg::Key("matcher".into())]);
            out.push(Finding::new(
                HOOK_MATCHER,
                Risk::High,
                super::tree::display(&path),
                format!(
                    "Warden's hook runs only for tools matching `{matcher}`: every other tool runs unchecked; the fix \
                     sets `*`"
                ),
                set(path, "*".into()),
            ));
        }
    }
}
