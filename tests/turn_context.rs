//! The turn-context rules through the `warden` binary, run as a subprocess
//! with SQLite: each check is its own process, so every rule here also shows
//! that the session's context survives a restart. The person's message
//! reaches the component through `warden check turn` (trigger `user`) and
//! Claude Code's `UserPromptSubmit`; failures through `warden check
//! tool-result`; every decision asserts its rule.

use serde_json::{Value, json};
use warden_tests::setup::Setup;

/// The session's person, calls and results, through the binary.
trait Session {
    fn said(&self, message: &str);
    fn tool(&self, tool: &str, arguments: Value) -> (String, String);
    fn bash(&self, command: &str) -> (String, String);
}

impl Session for Setup {
    fn said(&self, message: &str) {
        let turn = json!({"message": message, "sessionId": "s1", "trigger": "user"});
        let out = self.run(&["check", "turn"], &turn.to_string());
        assert_eq!(out.code, 0, "{}", out.stderr);
    }

    fn tool(&self, tool: &str, arguments: Value) -> (String, String) {
        let call = json!({"toolName": tool, "arguments": arguments, "sessionId": "s1", "cwd": "/work"});
        let out = self.run(&["check", "tool"], &call.to_string());
        let v: Value =
            serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {} {}", out.stdout, out.stderr));
        (v["decision"].as_str().unwrap_or_default().into(), v["rule"].as_str().unwrap_or_default().into())
    }

    fn bash(&self, command: &str) -> (String, String) {
        self.tool("Bash", json!({"command": command}))
    }
}

fn pair(decision: &str, rule: &str) -> (String, String) {
    (decision.into(), rule.into())
}

fn config(context: Value) -> Value {
    json!({"tools": {"askKinds": []}, "context": context})
}

#[test]
fn the_person_says_stop_and_the_next_tool_call_is_refused_until_they_write_again() {
    let s = Setup::new(&config(json!({})));
    s.said("list the files in the project");
    assert_eq!(s.bash("ls"), pair("allow", "tools.allow"));
    s.said("stop! stop what you're doing");
    assert_eq!(s.bash("ls"), pair("deny", "context.user-stop"));
    assert_eq!(s.tool("Read", json!({"file_path": "/work/a.txt"})), pair("deny", "context.user-stop"));
    s.said("ok, you can go on");
    assert_eq!(s.bash("ls"), pair("allow", "tools.allow"));
}

#[test]
fn a_look_alike_of_stop_does_not_stop_and_chinese_stop_does() {
    let s = Setup::new(&config(json!({})));
    for message in ["don't stop until the tests pass", "stop the nginx server", "不要停"] {
        s.said(message);
        assert_eq!(s.bash("ls"), pair("allow", "tools.allow"), "{message}");
    }
    s.said("停下");
    assert_eq!(s.bash("ls"), pair("deny", "context.user-stop"));
}

#[test]
fn the_call_past_max_calls_per_message_asks_and_a_new_message_resets_the_count() {
    let s = Setup::new(&config(json!({"maxCallsPerMessage": 2})));
    s.said("fix the build");
    assert_eq!(s.bash("echo 1"), pair("allow", "tools.allow"));
    assert_eq!(s.bash("echo 2"), pair("allow", "tools.allow"));
    assert_eq!(s.bash("echo 3"), pair("ask", "context.tool-loop"));
    s.said("keep going");
    assert_eq!(s.bash("echo 4"), pair("allow", "tools.allow"));
}

#[test]
fn a_reported_failure_makes_the_next_call_that_is_not_a_read_ask() {
    let s = Setup::new(&config(json!({})));
    s.said("deploy the site");
    let report = json!({"toolName": "Bash", "content": "exit status 1", "sessionId": "s1", "isError": true});
    let out = s.run(&["check", "tool-result"], &report.to_string());
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(s.tool("Read", json!({"file_path": "/work/log.txt"})), pair("allow", "tools.allow"));
    assert_eq!(s.bash("make deploy"), pair("ask", "context.after-error"));
    assert_eq!(s.bash("make deploy"), pair("allow", "tools.allow"));
}

#[test]
fn a_confirm_kind_waits_for_a_message_that_confirms() {
    let s = Setup::new(&config(json!({"confirmKinds": ["write"]})));
    let write = json!({"file_path": "/work/a.txt", "content": "x"});
    s.said("prepare the file");
    assert_eq!(s.tool("Write", write.clone()), pair("ask", "context.confirmation-required"));
    s.said("yes, go ahead");
    assert_eq!(s.tool("Write", write), pair("allow", "tools.allow"));
}

#[test]
fn observe_mode_allows_and_names_the_rule_in_a_signal() {
    let s = Setup::new(&config(json!({"mode": "observe"})));
    s.said("stop");
    let call = json!({"toolName": "Bash", "arguments": {"command": "ls"}, "sessionId": "s1"});
    let out = s.run(&["check", "tool"], &call.to_string());
    let v: Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!((v["decision"].as_str(), v["rule"].as_str()), (Some("allow"), Some("tools.allow")), "{v}");
    let signals = v["signals"].as_array().cloned().unwrap_or_default();
    assert!(
        signals.iter().any(|s| s["name"] == "context.user-stop"
            && s["detail"].as_str().is_some_and(|d| d.starts_with("observed: deny"))),
        "{v}"
    );
}

#[test]
fn claude_code_a_stop_prompt_refuses_the_next_pre_tool_use() {
    let s = Setup::new(&config(json!({})));
    let event = |name: &str, fields: Value| {
        let mut e = json!({"session_id": "cc-1", "transcript_path": "/tmp/t.jsonl", "cwd": "/work",
                           "permission_mode": "default", "hook_event_name": name});
        if let (Some(e), Some(f)) = (e.as_object_mut(), fields.as_object()) {
            e.extend(f.clone());
        }
        e.to_string()
    };
    let prompt = event("UserPromptSubmit", json!({"prompt": "cancel that, stop now"}));
    assert_eq!(s.run(&["hook", "claude-code"], &prompt).code, 0);
    let pre = event("PreToolUse", json!({"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "t1"}));
    let out = s.run(&["hook", "claude-code"], &pre);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stdout));
    let o = &v["hookSpecificOutput"];
    assert_eq!(o["permissionDecision"], "deny", "{v}");
    assert!(
        o["permissionDecisionReason"].as_str().is_some_and(|r| r.starts_with("Warden (context.user-stop): ")),
        "{v}"
    );
}

#[test]
fn a_bad_context_setting_is_refused_naming_the_field() {
    let s = Setup::new(&config(json!({"maxCallsPerMessage": -1})));
    let call = json!({"toolName": "Bash", "arguments": {"command": "ls"}, "sessionId": "s1"});
    let out = s.run(&["check", "tool"], &call.to_string());
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("context.maxCallsPerMessage"), "{}", out.stderr);
}

#[test]
fn a_sort_function_task_that_reads_the_ssh_key_asks_for_drift_across_processes() {
    let s = Setup::new(&json!({"tools": {"askKinds": [], "protectedPaths": []}, "drift": {}}));
    s.said("write a sort function in sort.py");
    assert_eq!(s.tool("Read", json!({"file_path": "/work/sort.py"})), pair("allow", "tools.allow"));
    assert_eq!(s.tool("Read", json!({"file_path": "/home/u/.ssh/id_rsa"})), pair("ask", "drift.sensitive-target"));
}

#[test]
fn a_long_refactor_through_the_binary_is_not_drift() {
    let s = Setup::new(&json!({"tools": {"askKinds": [], "protectedPaths": []}, "drift": {}}));
    s.said("refactor the storage layer into smaller modules and run the tests");
    for i in 0..12 {
        let file = format!("/work/src/module{}.rs", i % 4);
        let got = match i % 3 {
            0 => s.tool("Read", json!({"file_path": file})),
            1 => s.tool("Edit", json!({"file_path": file, "old_string": "a", "new_string": "b"})),
            _ => s.bash("cargo test --release"),
        };
        assert_eq!(got, pair("allow", "tools.allow"), "call {i}");
    }
}
