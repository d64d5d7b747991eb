//! Hermes Agent (`config.yaml`): the plugin opt-in and the approval settings.

use super::tree::{Kind, Node, keys};
use super::{Finding, add_item, remove_item, set};
use crate::model::Risk;
use crate::prelude::*;

/// Warden's plugin name (`plugin.yaml`).
pub const PLUGIN_NAME: &str = "warden";
/// The approval mode a fix sets: Hermes asks the person for every dangerous command.
pub const SAFE_APPROVAL_MODE: &str = "manual";

/// `approvals.cron_mode` values Hermes treats as `approve`.
pub const CRON_APPROVING: [&str; 4] = ["approve", "off", "allow", "yes"];

pub const PLUGIN_NOT_ENABLED: &str = "config.hermes.plugin-not-enabled";
pub const PLUGIN_DISABLED: &str = "config.hermes.plugin-disabled";
pub const APPROVALS_OFF: &str = "config.hermes.approvals-off";
pub const APPROVALS_SMART: &str = "config.hermes.approvals-smart";
pub const CRON_AUTO_APPROVE: &str = "config.hermes.cron-auto-approve";
pub const HOOKS_AUTO_ACCEPT: &str = "config.hermes.hooks-auto-accept";
pub const SECRET_REDACTION_OFF: &str = "config.hermes.secret-redaction-off";

fn lists(node: Option<&Node>, item: &str) -> bool {
    node.and_then(Node::as_array).is_some_and(|items| items.iter().any(|n| n.as_str() == Some(item)))
}

pub fn audit(root: &Node, out: &mut Vec<Finding>) {
    let enabled = keys(&["plugins", "enabled"]);
    if !lists(root.at(&enabled), PLUGIN_NAME) {
        out.push(Finding::new(
            PLUGIN_NOT_ENABLED,
            Risk::Critical,
            super::tree::display(&enabled),
            format!("plugins are opt-in and `{PLUGIN_NAME}` is not enabled: nothing is checked; the fix adds it"),
            add_item(enabled, PLUGIN_NAME),
        ));
    }
    let disabled = keys(&["plugins", "disabled"]);
    if lists(root.at(&disabled), PLUGIN_NAME) {
        out.push(Finding::new(
            PLUGIN_DISABLED,
            Risk::Critical,
            super::tree::display(&disabled),
            format!("`{PLUGIN_NAME}` is disabled, which wins over `plugins.enabled`; the fix removes it"),
            remove_item(disabled, PLUGIN_NAME),
        ));
    }
    let mode = keys(&["approvals", "mode"]);
    // As Hermes normalizes it: false is `off`, true `manual`, strings trimmed and lowercased.
    match root.at(&mode).map(|n| &n.kind) {
        Some(Kind::Bool(false)) => out.push(approvals_off(mode)),
        Some(Kind::Str(s)) if s.trim().eq_ignore_ascii_case("off") => out.push(approvals_off(mode)),
        Some(Kind::Str(s)) if s.trim().eq_ignore_ascii_case("smart") => out.push(approvals_smart(mode, "`smart`")),
        None | Some(Kind::Null) => out.push(approvals_smart(mode, "not set, so Hermes' default `smart` applies")),
        _ => {}
    }
    let cron = keys(&["approvals", "cron_mode"]);
    // Hermes reads `str(value).lower().strip()`: these words approve; YAML's unquoted yes/off are booleans, which deny.
    let approving = |s: &str| CRON_APPROVING.iter().any(|w| s.trim().eq_ignore_ascii_case(w));
    if let Some(word) = root.at(&cron).and_then(Node::as_str).filter(|s| approving(s)) {
        out.push(Finding::new(
            CRON_AUTO_APPROVE,
            Risk::High,
            super::tree::display(&cron),
            format!("`{word}` runs every dangerous command of a cron job without asking; the fix sets `deny`"),
            set(cron, "deny".into()),
        ));
    }
    let hooks = keys(&["hooks_auto_accept"]);
    if root.at(&hooks).and_then(Node::as_bool) == Some(true) {
        out.push(Finding::new(
            HOOKS_AUTO_ACCEPT,
            Risk::Medium,
            super::tree::display(&hooks),
            "shell hooks added to the configuration run without the person's consent; the fix sets `false`".to_string(),
            set(hooks, false.into()),
        ));
    }
    let redact = keys(&["security", "redact_secrets"]);
    if root.at(&redact).and_then(Node::as_bool) == Some(false) {
        out.push(Finding::new(
            SECRET_REDACTION_OFF,
            Risk::Medium,
            super::tree::display(&redact),
            "secrets in tool output reach the model and the logs unmasked; the fix sets `true`".to_string(),
            set(redact, true.into()),
        ));
    }
}

fn approvals_off(path: Vec<super::Seg>) -> Finding {
    Finding::new(
        APPROVALS_OFF,
        Risk::High,
        super::tree::display(&path),
        format!(
            "`off` runs every dangerous command without asking (as `--yolo`), so only Warden's own refusals stand; \
             the fix sets `{SAFE_APPROVAL_MODE}`"
        ),
        set(path, SAFE_APPROVAL_MODE.into()),
    )
}

fn approvals_smart(path: Vec<super::Seg>, what: &str) -> Finding {
    Finding::new(
        APPROVALS_SMART,
        Risk::Low,
        super::tree::display(&path),
        format!(
            "{what}: an auxiliary model approves the commands it judges low-risk without asking the person; the \
             fix sets `{SAFE_APPROVAL_MODE}`"
        ),
        set(path, SAFE_APPROVAL_MODE.into()),
    )
}
