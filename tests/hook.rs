//! `warden hook claude-code` on recorded `PreToolUse` payload shapes.

use serde_json::Value;
use warden_host::cli::{Io, run};
use warden_tests::{T0, TempDb};

struct Answer {
    code: i32,
    stdout: String,
    stderr: String,
}

fn hook(config_dir: &TempDb, extra: &[&str], event: &str) -> Answer {
    let config = config_dir.dir.path().join("config.json");
    let db = config_dir.path();
    let mut args: Vec<std::ffi::OsString> = vec!["warden".into(), "hook".into(), "claude-code".into()];
    args.extend(["--config".into(), config.into_os_string(), "--db".into(), db.into_os_string()]);
    args.extend(["--cache-dir".into(), warden_tests::cache_dir().into_os_string()]);
    args.extend(extra.iter().map(Into::into));
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run(args, Io { stdin: &mut event.as_bytes(), stdout: &mut out, stderr: &mut err });
    Answer { code, stdout: String::from_utf8_lossy(&out).into(), stderr: String::from_utf8_lossy(&err).into() }
}

fn setup() -> TempDb {
    let db = TempDb::new();
    std::fs::write(db.dir.path().join("config.json"), "{}").expect("config");
    let log = warden_tests::CapturedLog::default();
    let rt = warden_host::Runtime::new(warden_tests::options(db.open(), &log), "{}").expect("runtime");
    rt.start_turn(&warden_tests::pin("cc-1", "r1", "19:alice", "Alice", warden_host::json::now_ms())).expect("pin");
    let _ = T0;
    db
}

/// A `PreToolUse` event as Claude Code sends it, with the fields it adds.
fn event(tool: &str, input: &str) -> String {
    format!(
        r#"{{"session_id": "cc-1", "transcript_path": "/tmp/t.jsonl", "cwd": "/work/project", "permission_mode": "default",
            "hook_event_name": "PreToolUse", "tool_name": "{tool}", "tool_input": {input}, "tool_use_id": "toolu_01"}}"#
    )
}

fn decision(a: &Answer) -> (Option<String>, Option<String>) {
    let v: Value = serde_json::from_str(&a.stdout).unwrap_or(Value::Null);
    let out = &v["hookSpecificOutput"];
    (out["permissionDecision"].as_str().map(String::from), out["permissionDecisionReason"].as_str().map(String::from))
}

#[test]
fn a_denied_call_answers_deny_with_the_rule_and_reason() {
    let db = setup();
    let a = hook(&db, &[], &event("teams_send_chat_message", r#"{"chat": "19:bob", "text": "hi"}"#));
    assert_eq!(a.code, 0, "{}", a.stderr);
    let (d, reason) = decision(&a);
    assert_eq!(d.as_deref(), Some("deny"));
    let reason = reason.unwrap_or_default();
    assert!(reason.starts_with("Warden (pin.other-chat): "), "{reason}");
    assert!(reason.contains("\"Alice\""), "{reason}");
}

#[test]
fn exit_code_style_blocks_with_2_and_the_reason_on_stderr() {
    let db = setup();
    let a = hook(&db, &["--exit-code"], &event("teams_send_chat_message", r#"{"chat": "19:bob"}"#));
    assert_eq!(a.code, 2);
    assert_eq!(a.stdout, "");
    assert!(a.stderr.contains("pin.other-chat"), "{}", a.stderr);
}

#[test]
fn an_allowed_call_defers_to_claude_codes_own_permissions_unless_asked_to_approve() {
    let db = setup();
    let e = event("teams_send_chat_message", r#"{"chat": "19:alice"}"#);
    let a = hook(&db, &[], &e);
    assert_eq!((a.code, a.stdout.as_str()), (0, ""), "{}", a.stderr);
    let a = hook(&db, &["--approve-allowed"], &e);
    let (d, reason) = decision(&a);
    assert_eq!(d.as_deref(), Some("allow"));
    assert!(reason.unwrap_or_default().contains("pin.pinned-chat"));
}

#[test]
fn unreadable_events_block_the_call() {
    let db = setup();
    let cases = [
        ("not json", "Warden could not check this tool call"),
        (r#"{"hook_event_name": "PreToolUse"}"#, "missing field `tool_name`"),
        (r#"{"hook_event_name": "Stop", "tool_name": "Bash", "tool_input": {}}"#, "`Stop` is not supported"),
    ];
    for (input, expected) in cases {
        let a = hook(&db, &[], input);
        assert_eq!(a.code, 2, "{input}");
        assert!(a.stderr.contains(expected), "{input}: {}", a.stderr);
    }
}
