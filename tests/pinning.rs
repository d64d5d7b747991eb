//! Reply pinning end to end: component, host and SQLite.

use serde_json::json;
use warden_host::bindings::exports::warden::guard::policy::TurnEnd;
use warden_tests::{T0, TempDb, decided, pin, runtime, tool_call};

const SESSION: &str = "teams:1";

#[test]
fn pinned_session_allows_only_the_pinned_chat() {
    let db = TempDb::new();
    let rt = runtime("{}", db.open());
    rt.start_turn(&pin(SESSION, "r1", "19:alice", "Alice", T0)).expect("pin");
    let cases = [
        ("teams_send_chat_message", json!({"chat": "19:alice"}), ("allow", "pin.pinned-chat")),
        ("teams_send_chat_message", json!({"chat": "19:bob"}), ("deny", "pin.other-chat")),
        ("teams_send_chat_message", json!({"chat": "Alice"}), ("deny", "pin.other-chat")),
        ("teams_send_chat_message", json!({"text": "hi"}), ("deny", "pin.missing-chat")),
        ("teams_send_channel_message", json!({"channel": "general"}), ("deny", "pin.channel-post")),
        ("teams_create_chat", json!({"members": ["bob"]}), ("deny", "pin.new-chat")),
        ("teams_list_chats", json!({}), ("allow", "tools.allow")),
    ];
    for (tool, args, expected) in cases {
        let v = rt.check_tool_call(&tool_call(tool, args.clone(), SESSION, T0 + 1000));
        assert_eq!(decided(&v), expected, "{tool} {args}");
    }
    let v = rt.check_tool_call(&tool_call("teams_send_chat_message", json!({"chat": "19:bob"}), SESSION, T0));
    assert!(v.reason.contains("\"Alice\""), "refusal names the pinned chat: {}", v.reason);
    assert!(v.reason.contains("only to that chat"), "refusal says why: {}", v.reason);
}

#[test]
fn other_sessions_are_not_pinned() {
    let db = TempDb::new();
    let rt = runtime("{}", db.open());
    rt.start_turn(&pin(SESSION, "r1", "19:alice", "Alice", T0)).expect("pin");
    let v = rt.check_tool_call(&tool_call("teams_send_chat_message", json!({"chat": "19:bob"}), "other", T0));
    assert_eq!(decided(&v), ("allow", "tools.allow"));
}

#[test]
fn pin_survives_a_host_restart() {
    let db = TempDb::new();
    {
        let rt = runtime("{}", db.open());
        rt.start_turn(&pin(SESSION, "r1", "19:alice", "Alice", T0)).expect("pin");
    }
    let restarted = runtime("{}", db.open());
    let v =
        restarted.check_tool_call(&tool_call("teams_send_chat_message", json!({"chat": "19:bob"}), SESSION, T0 + 5));
    assert_eq!(decided(&v), ("deny", "pin.other-chat"));
    let pin = restarted.current_pin(SESSION, T0 + 5).expect("read pin").expect("pin survives");
    assert_eq!(pin.chat_id, "19:alice");
}

#[test]
fn pin_is_valid_at_exactly_its_ttl_and_expires_after() {
    let db = TempDb::new();
    let rt = runtime(r#"{"pin": {"ttlMinutes": 2}}"#, db.open());
    rt.start_turn(&pin(SESSION, "r1", "19:alice", "Alice", T0)).expect("pin");
    let ttl = 2 * 60_000;
    let at = |t| rt.check_tool_call(&tool_call("teams_send_chat_message", json!({"chat": "19:bob"}), SESSION, t));
    assert_eq!(decided(&at(T0 + ttl)), ("deny", "pin.other-chat"));
    assert_eq!(decided(&at(T0 + ttl + 1)), ("allow", "tools.allow"));
}

#[test]
fn settling_the_turn_clears_the_pin() {
    let db = TempDb::new();
    let rt = runtime("{}", db.open());
    rt.start_turn(&pin(SESSION, "r1", "19:alice", "Alice", T0)).expect("pin");
    rt.settle_turn(&TurnEnd { session_id: SESSION.into(), run_id: Some("r1".into()), now_ms: T0 + 10 })
        .expect("settle");
    let v = rt.check_tool_call(&tool_call("teams_send_chat_message", json!({"chat": "19:bob"}), SESSION, T0 + 20));
    assert_eq!(decided(&v), ("allow", "tools.allow"));
}

#[test]
fn configured_tools_replace_the_defaults() {
    let db = TempDb::new();
    let config = r#"{"pin": {"tools": [{"name": "slack_post", "kind": "chat", "chatParam": "channel"}]}}"#;
    let rt = runtime(config, db.open());
    rt.start_turn(&pin(SESSION, "r1", "C1", "#support", T0)).expect("pin");
    let v = rt.check_tool_call(&tool_call("slack_post", json!({"channel": "C2"}), SESSION, T0));
    assert_eq!(decided(&v), ("deny", "pin.other-chat"));
    let v = rt.check_tool_call(&tool_call("slack_post", json!({"channel": "C1"}), SESSION, T0));
    assert_eq!(decided(&v), ("allow", "pin.pinned-chat"));
    let v = rt.check_tool_call(&tool_call("teams_send_chat_message", json!({"chat": "x"}), SESSION, T0));
    assert_eq!(decided(&v), ("allow", "tools.allow"));
}
