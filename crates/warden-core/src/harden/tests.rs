use super::*;
use AgentRuntime::{ClaudeCode, Hermes, OpenClaw};
use alloc::string::ToString;
use std::println;

/// An OpenClaw configuration with Warden installed as the README says.
const OPENCLAW_GOOD: &str = r#"{
  // Warden guards every run.
  messages: { queue: { mode: "followup" } },
  plugins: {
    entries: {
      warden: { enabled: true, hooks: { allowConversationAccess: true }, config: {} },
    },
  },
}"#;

const CLAUDE_GOOD: &str = r#"{
  "permissions": { "allow": ["Bash(npm run test:*)", "Read"] },
  "hooks": {
    "PreToolUse": [
      { "matcher": "*", "hooks": [{ "type": "command", "command": "warden hook claude-code --config w.json --db w.db" }] }
    ]
  }
}"#;

const HERMES_GOOD: &str = "plugins:\n  enabled:\n  - warden\napprovals:\n  mode: manual\n";

fn rules(runtime: AgentRuntime, text: &str) -> Vec<&'static str> {
    match audit(runtime, text) {
        Ok(found) => found.iter().map(|f| f.rule).collect(),
        Err(e) => panic!("audit of {text:?} failed: {e:?}"),
    }
}

/// Each rule in both directions: (case, runtime, text, rule, whether it fires).
#[test]
fn every_rule_fires_on_its_setting_and_not_on_the_safe_one() {
    let cases: &[(&str, AgentRuntime, &str, &str, bool)] = &[
        ("a configured openclaw has no finding", OpenClaw, OPENCLAW_GOOD, "", false),
        (
            "plugins globally off",
            OpenClaw,
            r#"{plugins: {enabled: false, entries: {warden: {hooks: {allowConversationAccess: true}}}}, messages: {queue: {mode: "collect"}}}"#,
            openclaw::PLUGINS_DISABLED,
            true,
        ),
        ("plugins globally on", OpenClaw, OPENCLAW_GOOD, openclaw::PLUGINS_DISABLED, false),
        ("warden on the deny list", OpenClaw, r#"{plugins: {deny: ["warden"]}}"#, openclaw::PLUGIN_DENIED, true),
        (
            "another plugin on the deny list",
            OpenClaw,
            r#"{plugins: {deny: ["voice-call"]}}"#,
            openclaw::PLUGIN_DENIED,
            false,
        ),
        (
            "an allow list without warden",
            OpenClaw,
            r#"{plugins: {allow: ["voice-call"]}}"#,
            openclaw::PLUGIN_NOT_ALLOWED,
            true,
        ),
        (
            "an allow list with warden",
            OpenClaw,
            r#"{plugins: {allow: ["voice-call", "warden"]}}"#,
            openclaw::PLUGIN_NOT_ALLOWED,
            false,
        ),
        (
            "an empty allow list restricts nothing",
            OpenClaw,
            r#"{plugins: {allow: []}}"#,
            openclaw::PLUGIN_NOT_ALLOWED,
            false,
        ),
        ("no warden entry", OpenClaw, "{}", openclaw::PLUGIN_MISSING, true),
        ("a warden entry", OpenClaw, OPENCLAW_GOOD, openclaw::PLUGIN_MISSING, false),
        (
            "warden entry disabled",
            OpenClaw,
            r#"{plugins: {entries: {warden: {enabled: false}}}}"#,
            openclaw::PLUGIN_DISABLED,
            true,
        ),
        (
            "warden entry without enabled",
            OpenClaw,
            r#"{plugins: {entries: {warden: {}}}}"#,
            openclaw::PLUGIN_DISABLED,
            false,
        ),
        (
            "conversation access missing",
            OpenClaw,
            r#"{plugins: {entries: {warden: {enabled: true}}}}"#,
            openclaw::CONVERSATION_ACCESS,
            true,
        ),
        (
            "conversation access false",
            OpenClaw,
            r#"{plugins: {entries: {warden: {hooks: {allowConversationAccess: false}}}}}"#,
            openclaw::CONVERSATION_ACCESS,
            true,
        ),
        (
            "conversation access as a string is not true",
            OpenClaw,
            r#"{plugins: {entries: {warden: {hooks: {allowConversationAccess: "true"}}}}}"#,
            openclaw::CONVERSATION_ACCESS,
            true,
        ),
        ("conversation access true", OpenClaw, OPENCLAW_GOOD, openclaw::CONVERSATION_ACCESS, false),
        (
            "prompt injection blocked",
            OpenClaw,
            r#"{plugins: {entries: {warden: {hooks: {allowPromptInjection: false}}}}}"#,
            openclaw::PROMPT_INJECTION_BLOCKED,
            true,
        ),
        (
            "prompt injection allowed",
            OpenClaw,
            r#"{plugins: {entries: {warden: {hooks: {allowPromptInjection: true}}}}}"#,
            openclaw::PROMPT_INJECTION_BLOCKED,
            false,
        ),
        (
            "a hook timeout just under the bound",
            OpenClaw,
            r#"{plugins: {entries: {warden: {hooks: {timeouts: {before_tool_call: 11999}}}}}}"#,
            openclaw::HOOK_TIMEOUT,
            true,
        ),
        (
            "a hook timeout at the bound",
            OpenClaw,
            r#"{plugins: {entries: {warden: {hooks: {timeouts: {before_tool_call: 12000}}}}}}"#,
            openclaw::HOOK_TIMEOUT,
            false,
        ),
        (
            "a short timeout for every hook",
            OpenClaw,
            r#"{plugins: {entries: {warden: {hooks: {timeoutMs: 5000}}}}}"#,
            openclaw::HOOK_TIMEOUT,
            true,
        ),
        (
            "a short timeout of a hook warden does not use",
            OpenClaw,
            r#"{plugins: {entries: {warden: {hooks: {timeouts: {gateway_stop: 100}}}}}}"#,
            openclaw::HOOK_TIMEOUT,
            false,
        ),
        (
            "another plugin's short timeout",
            OpenClaw,
            r#"{plugins: {entries: {other: {hooks: {timeoutMs: 100}}}}}"#,
            openclaw::HOOK_TIMEOUT,
            false,
        ),
        ("queue mode unset defaults to steer", OpenClaw, "{}", openclaw::QUEUE_STEER, true),
        ("queue mode steer", OpenClaw, r#"{messages: {queue: {mode: "steer"}}}"#, openclaw::QUEUE_STEER, true),
        (
            "queue mode steer on one channel",
            OpenClaw,
            r#"{messages: {queue: {mode: "collect", byChannel: {telegram: "steer"}}}}"#,
            openclaw::QUEUE_STEER,
            true,
        ),
        ("queue mode followup", OpenClaw, OPENCLAW_GOOD, openclaw::QUEUE_STEER, false),
        ("a configured claude code has no finding", ClaudeCode, CLAUDE_GOOD, "", false),
        ("all hooks disabled", ClaudeCode, r#"{"disableAllHooks": true}"#, claude_code::HOOKS_DISABLED, true),
        ("hooks not disabled", ClaudeCode, r#"{"disableAllHooks": false}"#, claude_code::HOOKS_DISABLED, false),
        (
            "bypass permissions",
            ClaudeCode,
            r#"{"permissions": {"defaultMode": "bypassPermissions"}}"#,
            claude_code::BYPASS_PERMISSIONS,
            true,
        ),
        (
            "plan mode",
            ClaudeCode,
            r#"{"permissions": {"defaultMode": "plan"}}"#,
            claude_code::BYPASS_PERMISSIONS,
            false,
        ),
        ("bash with a star", ClaudeCode, r#"{"permissions": {"allow": ["Bash(*)"]}}"#, claude_code::BROAD_ALLOW, true),
        (
            "bash with a colon star",
            ClaudeCode,
            r#"{"permissions": {"allow": ["Bash(:*)"]}}"#,
            claude_code::BROAD_ALLOW,
            true,
        ),
        ("bare bash", ClaudeCode, r#"{"permissions": {"allow": ["Bash"]}}"#, claude_code::BROAD_ALLOW, true),
        ("write anywhere", ClaudeCode, r#"{"permissions": {"allow": ["Write(**)"]}}"#, claude_code::BROAD_ALLOW, true),
        (
            "fetch any domain",
            ClaudeCode,
            r#"{"permissions": {"allow": ["WebFetch(domain:*)"]}}"#,
            claude_code::BROAD_ALLOW,
            true,
        ),
        (
            "a narrow bash rule",
            ClaudeCode,
            r#"{"permissions": {"allow": ["Bash(npm run test:*)"]}}"#,
            claude_code::BROAD_ALLOW,
            false,
        ),
        (
            "reading is not acting",
            ClaudeCode,
            r#"{"permissions": {"allow": ["Read"]}}"#,
            claude_code::BROAD_ALLOW,
            false,
        ),
        ("no warden hook", ClaudeCode, "{}", claude_code::HOOK_MISSING, true),
        (
            "another tool's hook only",
            ClaudeCode,
            r#"{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "lint"}]}]}}"#,
            claude_code::HOOK_MISSING,
            true,
        ),
        (
            "warden hook on bash only",
            ClaudeCode,
            r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "warden hook claude-code"}]}]}}"#,
            claude_code::HOOK_MATCHER,
            true,
        ),
        (
            "warden hook without matcher covers all",
            ClaudeCode,
            r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "warden hook claude-code"}]}]}}"#,
            claude_code::HOOK_MATCHER,
            false,
        ),
        (
            "warden hook with an empty matcher covers all",
            ClaudeCode,
            r#"{"hooks": {"PreToolUse": [{"matcher": "", "hooks": [{"type": "command", "command": "warden hook claude-code"}]}]}}"#,
            claude_code::HOOK_MATCHER,
            false,
        ),
        (
            "warden hook timeout just under the bound",
            ClaudeCode,
            r#"{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "warden hook claude-code", "timeout": 9}]}]}}"#,
            claude_code::HOOK_TIMEOUT,
            true,
        ),
        (
            "warden hook timeout at the bound",
            ClaudeCode,
            r#"{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "warden hook claude-code", "timeout": 10}]}]}}"#,
            claude_code::HOOK_TIMEOUT,
            false,
        ),
        ("a configured hermes has no finding", Hermes, HERMES_GOOD, "", false),
        ("warden not enabled", Hermes, "plugins:\n  enabled: [other]\n", hermes::PLUGIN_NOT_ENABLED, true),
        ("an empty file enables nothing", Hermes, "", hermes::PLUGIN_NOT_ENABLED, true),
        (
            "warden enabled in a flow mapping",
            Hermes,
            "plugins: {enabled: [warden]}\n",
            hermes::PLUGIN_NOT_ENABLED,
            false,
        ),
        (
            "warden disabled",
            Hermes,
            "plugins:\n  enabled: [warden]\n  disabled: [warden]\n",
            hermes::PLUGIN_DISABLED,
            true,
        ),
        (
            "another plugin disabled",
            Hermes,
            "plugins:\n  enabled: [warden]\n  disabled: [other]\n",
            hermes::PLUGIN_DISABLED,
            false,
        ),
        ("approvals off quoted", Hermes, "approvals:\n  mode: \"off\"\n", hermes::APPROVALS_OFF, true),
        ("approvals off unquoted reads as false", Hermes, "approvals:\n  mode: off\n", hermes::APPROVALS_OFF, true),
        ("approvals manual", Hermes, "approvals:\n  mode: manual\n", hermes::APPROVALS_OFF, false),
        ("approvals smart", Hermes, "approvals:\n  mode: smart\n", hermes::APPROVALS_SMART, true),
        ("approvals unset default to smart", Hermes, "model: m\n", hermes::APPROVALS_SMART, true),
        ("cron auto-approves", Hermes, "approvals:\n  cron_mode: approve\n", hermes::CRON_AUTO_APPROVE, true),
        (
            "cron mode allow approves too",
            Hermes,
            "approvals:\n  cron_mode: \" Allow \"\n",
            hermes::CRON_AUTO_APPROVE,
            true,
        ),
        ("cron mode quoted off approves", Hermes, "approvals:\n  cron_mode: 'off'\n", hermes::CRON_AUTO_APPROVE, true),
        // Unquoted, PyYAML reads a boolean, which Hermes turns into `false`: deny.
        ("cron mode unquoted off denies", Hermes, "approvals:\n  cron_mode: off\n", hermes::CRON_AUTO_APPROVE, false),
        ("approvals off in capitals", Hermes, "approvals:\n  mode: \" OFF \"\n", hermes::APPROVALS_OFF, true),
        (
            "approvals off as a folded block",
            Hermes,
            "approvals:\n  mode: >-\n    off\nmodel: m\n",
            hermes::APPROVALS_OFF,
            true,
        ),
        ("approvals off as a literal block", Hermes, "approvals:\n  mode: |\n    off\n", hermes::APPROVALS_OFF, true),
        ("approvals true means manual", Hermes, "approvals:\n  mode: true\n", hermes::APPROVALS_SMART, false),
        (
            "quoted yaml keys are keys",
            Hermes,
            "'plugins':\n  \"enabled\":\n  - 'warden'\n\"approvals\": {mode: manual}\n",
            hermes::PLUGIN_NOT_ENABLED,
            false,
        ),
        (
            "a comment after the colon",
            Hermes,
            "plugins:\n  enabled: # mine\n    - warden # this one\napprovals:\n  mode: manual\n",
            hermes::PLUGIN_NOT_ENABLED,
            false,
        ),
        (
            "a document marker and crlf",
            Hermes,
            "---\r\nplugins:\r\n  enabled: [warden]\r\napprovals:\r\n  mode: manual\r\n",
            "",
            false,
        ),
        (
            "an escaped key is the key it spells",
            OpenClaw,
            r#"{plugins: {entries: {"\u0077arden": {enabled: false}}}}"#,
            openclaw::PLUGIN_DISABLED,
            true,
        ),
        ("cron denies", Hermes, "approvals:\n  cron_mode: deny\n", hermes::CRON_AUTO_APPROVE, false),
        ("shell hooks auto-accepted", Hermes, "hooks_auto_accept: true\n", hermes::HOOKS_AUTO_ACCEPT, true),
        ("shell hooks need consent", Hermes, "hooks_auto_accept: false\n", hermes::HOOKS_AUTO_ACCEPT, false),
        ("secret redaction off", Hermes, "security:\n  redact_secrets: false\n", hermes::SECRET_REDACTION_OFF, true),
        ("secret redaction on", Hermes, "security:\n  redact_secrets: true\n", hermes::SECRET_REDACTION_OFF, false),
        (
            "a duplicate key",
            OpenClaw,
            r#"{messages: {queue: {mode: "followup"}}, messages: {queue: {mode: "collect"}}}"#,
            DUPLICATE_KEY,
            true,
        ),
        ("a duplicate yaml key", Hermes, "approvals:\n  mode: manual\n  mode: manual\n", DUPLICATE_KEY, true),
    ];
    for (case, runtime, text, rule, fires) in cases {
        let found = rules(*runtime, text);
        if rule.is_empty() {
            assert!(found.is_empty(), "{case}: expected no finding, got {found:?}");
        } else {
            assert_eq!(found.contains(rule), *fires, "{case}: {rule} in {found:?}");
        }
    }
}

#[test]
fn a_duplicate_key_is_read_as_the_runtime_reads_it_the_last_one() {
    let text = r#"{messages: {queue: {mode: "followup"}}, messages: {queue: {mode: "steer"}}}"#;
    assert!(rules(OpenClaw, text).contains(&openclaw::QUEUE_STEER));
    let fixed = harden(OpenClaw, text).unwrap_or_default();
    assert!(
        fixed.starts_with(r#"{messages: {queue: {mode: "followup"}}, messages: {queue: {mode: "followup"}}"#),
        "{fixed}"
    );
}

fn harden_ok(runtime: AgentRuntime, text: &str) -> String {
    match harden(runtime, text) {
        Ok(t) => t,
        Err(e) => panic!("harden of {text:?} failed: {e:?}"),
    }
}

/// Hardened text has no fixable finding and hardens to itself.
fn assert_settled(runtime: AgentRuntime, fixed: &str) {
    let left: Vec<_> = audit(runtime, fixed).unwrap_or_default().into_iter().filter(|f| f.fix.is_some()).collect();
    assert!(left.is_empty(), "fixable findings remain: {left:?}\n{fixed}");
    assert_eq!(harden_ok(runtime, fixed), fixed, "a second harden changed the text");
}

#[test]
fn hardening_openclaw_keeps_comments_and_layout() {
    let text = "{\n  // the model\n  agents: { defaults: { workspace: \"~/w\" } },\n  plugins: {\n    entries: {\n      warden: {\n        enabled: false, /* off for now */\n        hooks: { allowPromptInjection: false, timeouts: { before_prompt_build: 500 } },\n      },\n    },\n  },\n}\n";
    let fixed = harden_ok(OpenClaw, text);
    let expected = "{\n  // the model\n  agents: { defaults: { workspace: \"~/w\" } },\n  plugins: {\n    entries: {\n      warden: {\n        enabled: true, /* off for now */\n        hooks: { timeouts: { before_prompt_build: 15000 }, \"allowConversationAccess\": true },\n      },\n    },\n  },\n  \"messages\": {\"queue\":{\"mode\":\"followup\"}},\n}\n";
    assert_eq!(fixed, expected);
    assert_settled(OpenClaw, &fixed);
}

#[test]
fn hardening_keeps_crlf_line_ends_and_a_byte_order_mark() {
    let text =
        "\u{feff}{\r\n  \"plugins\": {\r\n    \"entries\": { \"warden\": { \"enabled\": true } }\r\n  }\r\n}\r\n";
    let fixed = harden_ok(OpenClaw, text);
    assert!(fixed.starts_with('\u{feff}'));
    assert!(!fixed.replace("\r\n", "").contains('\n'), "a bare line feed was added: {fixed:?}");
    assert!(fixed.contains("\"messages\""), "{fixed:?}");
    assert_settled(OpenClaw, &fixed);
}

#[test]
fn hardening_claude_code_removes_broad_rules_and_widens_the_matcher() {
    let text = "{\n  \"permissions\": {\n    \"allow\": [\n      \"Bash(*)\",\n      \"Read\",\n      \"Write\"\n    ],\n    \"defaultMode\": \"bypassPermissions\"\n  },\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\n        \"matcher\": \"Bash\",\n        \"hooks\": [{ \"type\": \"command\", \"command\": \"warden hook claude-code --config c --db d\", \"timeout\": 3 }]\n      }\n    ]\n  }\n}\n";
    let fixed = harden_ok(ClaudeCode, text);
    let expected = "{\n  \"permissions\": {\n    \"allow\": [\n      \"Read\"\n    ],\n    \"defaultMode\": \"default\"\n  },\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\n        \"matcher\": \"*\",\n        \"hooks\": [{ \"type\": \"command\", \"command\": \"warden hook claude-code --config c --db d\", \"timeout\": 60 }]\n      }\n    ]\n  }\n}\n";
    assert_eq!(fixed, expected);
    assert!(serde_json::from_str::<serde_json::Value>(&fixed).is_ok(), "strict json stays strict json");
    assert_settled(ClaudeCode, &fixed);
}

#[test]
fn a_missing_claude_code_hook_is_reported_but_never_added() {
    let found = audit(ClaudeCode, "{}").unwrap_or_default();
    let missing = found.iter().find(|f| f.rule == claude_code::HOOK_MISSING);
    assert!(missing.is_some_and(|f| f.fix.is_none() && f.risk == Risk::Critical), "{found:?}");
    assert_eq!(harden_ok(ClaudeCode, "{}"), "{}");
}

#[test]
fn hardening_hermes_keeps_comments_and_block_lists() {
    let text = "# Hermes\nmodel:\n  default: m   # the model\nplugins:\n  enabled:\n  - other   # keep\n  disabled:\n    - warden\n    - x\napprovals:\n  mode: off\n  cron_mode: approve\n";
    let fixed = harden_ok(Hermes, text);
    let expected = "# Hermes\nmodel:\n  default: m   # the model\nplugins:\n  enabled:\n  - other   # keep\n  - \"warden\"\n  disabled:\n    - x\napprovals:\n  mode: \"manual\"\n  cron_mode: \"deny\"\n";
    assert_eq!(fixed, expected);
    assert_settled(Hermes, &fixed);
}

#[test]
fn hardening_an_empty_hermes_file_writes_the_settings_it_needs() {
    let fixed = harden_ok(Hermes, "");
    assert_eq!(fixed, "plugins:\n  enabled: [\"warden\"]\napprovals:\n  mode: \"manual\"\n");
    assert_settled(Hermes, &fixed);
    // A file that ends without a line feed gets one before the new lines.
    let fixed = harden_ok(Hermes, "model: m");
    assert!(fixed.starts_with("model: m\nplugins:\n"), "{fixed:?}");
    assert_settled(Hermes, &fixed);
}

#[test]
fn hardening_hermes_flow_collections_edits_inside_the_brackets() {
    let fixed = harden_ok(Hermes, "plugins: {enabled: [other]}\napprovals: {mode: smart}\n");
    assert_eq!(fixed, "plugins: {enabled: [other, \"warden\"]}\napprovals: {mode: \"manual\"}\n");
    assert_settled(Hermes, &fixed);
    let fixed = harden_ok(Hermes, "plugins: {}\napprovals: {mode: manual}\n");
    assert_eq!(fixed, "plugins: {enabled: [\"warden\"]}\napprovals: {mode: manual}\n");
}

#[test]
fn a_key_with_nothing_after_it_gets_the_value() {
    let fixed = harden_ok(Hermes, "plugins:\n  enabled:\napprovals:\n  mode: manual\n");
    assert_eq!(fixed, "plugins:\n  enabled: [\"warden\"]\napprovals:\n  mode: manual\n");
}

#[test]
fn text_with_nothing_to_fix_comes_back_byte_for_byte() {
    for (runtime, text) in [(OpenClaw, OPENCLAW_GOOD), (ClaudeCode, CLAUDE_GOOD), (Hermes, HERMES_GOOD)] {
        assert_eq!(harden_ok(runtime, text), text);
    }
}

#[test]
fn unreadable_configurations_are_refused_with_the_line_and_what_is_wrong() {
    let cases: &[(&str, AgentRuntime, &str, &str)] = &[
        ("an unclosed object", OpenClaw, "{\n  plugins: {\n", "line 3, column 1: an object is never closed"),
        ("a stray word", ClaudeCode, "{\"a\": yes}", "line 1, column 7: `yes` is not a value"),
        ("a top-level list", ClaudeCode, "[]", "must be an object at the top level"),
        ("an empty json file", OpenClaw, "  ", "the file holds no value"),
        ("an unclosed comment", OpenClaw, "{ /* }", "comment is never closed"),
        ("a tab indent", Hermes, "plugins:\n\tenabled: []\n", "line 2, column 1: a tab indents this line"),
        ("an anchor", Hermes, "a: &x 1\nb: *x\n", "anchors, aliases and tags are not supported"),
        ("two documents", Hermes, "a: 1\n---\nb: 2\n", "several yaml documents"),
        ("a stray indent", Hermes, "a: 1\n   b: 2\n", "line 2"),
        ("a top-level yaml list", Hermes, "- a\n", "must be an object at the top level"),
    ];
    for (case, runtime, text, want) in cases {
        for result in [audit(*runtime, text).map(|_| String::new()), harden(*runtime, text)] {
            match result {
                Err(PolicyError::InvalidInput(m)) => {
                    assert!(m.to_lowercase().contains(&want.to_lowercase()), "{case}: {m}");
                    assert!(m.starts_with("the "), "{case}: {m}");
                }
                other => panic!("{case}: expected invalid input, got {other:?}"),
            }
        }
    }
}

#[test]
fn the_size_limit_holds_at_the_bound_and_refuses_past_it() {
    let pad = |n: usize| {
        let mut t = "{\"a\": \"".to_string();
        t.push_str(&"x".repeat(n - 9));
        t.push_str("\"}");
        t
    };
    let at = pad(MAX_CONFIG_BYTES);
    assert_eq!(at.len(), MAX_CONFIG_BYTES);
    assert!(audit(ClaudeCode, &at).is_ok());
    let past = pad(MAX_CONFIG_BYTES + 1);
    match audit(ClaudeCode, &past) {
        Err(PolicyError::InvalidInput(m)) => assert!(m.contains("at most 1048576 bytes"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_depth_limit_holds_at_the_bound_and_refuses_past_it() {
    let nested = |n: usize| {
        let mut t = "[".repeat(n - 1);
        t.push_str(&"]".repeat(n - 1));
        format!("{{\"a\": {t}}}")
    };
    assert!(audit(ClaudeCode, &nested(MAX_DEPTH)).is_ok());
    match audit(ClaudeCode, &nested(MAX_DEPTH + 1)) {
        Err(PolicyError::InvalidInput(m)) => assert!(m.contains("nested more than 64 deep"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn json5_forms_are_read_as_openclaw_reads_them() {
    let text = "{'plugins': {entries: {warden: {enabled: true, hooks: {allowConversationAccess: true, timeoutMs: 0x3a98,},},},}, messages: {queue: {mode: 'followup'}}, n: +.5, i: -Infinity, s: 'it\\'s \\\n ok'}";
    let found = rules(OpenClaw, text);
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn a_finding_names_the_path_and_the_fix_as_data() {
    let found = audit(OpenClaw, r#"{plugins: {entries: {warden: {enabled: false, hooks: {allowConversationAccess: true}}}}, messages: {queue: {mode: "followup"}}}"#)
        .unwrap_or_default();
    assert_eq!(found.len(), 1, "{found:?}");
    let f = &found[0];
    assert_eq!(
        (f.rule, f.risk, f.path.as_str()),
        (openclaw::PLUGIN_DISABLED, Risk::Critical, "plugins.entries.warden.enabled")
    );
    let fix = f.fix.as_ref().map(|x| (x.action, tree::display(&x.path), x.value.clone()));
    assert_eq!(fix, Some((FixAction::Set, "plugins.entries.warden.enabled".to_string(), Some(true.into()))));
}

#[test]
fn a_setting_in_the_way_of_a_fix_is_refused_and_nothing_changes() {
    match harden(OpenClaw, r#"{plugins: {entries: {warden: {hooks: "all"}}}, messages: {queue: {mode: "followup"}}}"#) {
        Err(PolicyError::InvalidInput(m)) => {
            assert!(m.contains("`plugins.entries.warden.hooks` is not an object"), "{m}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn runtime_names_parse_and_an_unknown_one_lists_the_allowed() {
    for r in AgentRuntime::ALL {
        assert_eq!(AgentRuntime::parse(r.name()), Ok(r));
    }
    let e = AgentRuntime::parse("cursor").err().unwrap_or_default();
    assert!(e.contains("`cursor`") && e.contains("openclaw, hermes or claude-code"), "{e}");
    println!("runtimes: {}", AgentRuntime::ALL.len());
}
