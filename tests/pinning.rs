//! Reply pinning end to end: component, host and SQLite.

use serde_json::json;
use warden_host::bindings::exports::warden::guard::policy::TurnEnd;
use warden_host::cli::EXIT_INVALID;
use warden_tests::{T0, TempDb, decided, pin, runtime, tool_call, warden_process};

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

#[test]
fn a_gated_call_without_a_session_is_refused_while_pinning_is_on() {
    let db = TempDb::new();
    let rt = runtime("{}", db.open());
    rt.start_turn(&pin(SESSION, "r1", "19:alice", "Alice", T0)).expect("pin");
    let without = |tool: &str, args: serde_json::Value, session: Option<&str>| {
        let mut c = tool_call(tool, args, SESSION, T0 + 1);
        c.session_id = session.map(str::to_string);
        rt.check_tool_call(&c)
    };
    let cases = [
        ("teams_send_chat_message", json!({"chat": "19:alice"}), None, ("deny", "pin.no-session")),
        ("teams_send_chat_message", json!({"chat": "19:bob"}), None, ("deny", "pin.no-session")),
        ("teams_send_chat_message", json!({"chat": "19:bob"}), Some(""), ("deny", "pin.no-session")),
        ("teams_send_channel_message", json!({"channel": "general"}), None, ("deny", "pin.no-session")),
        ("teams_create_chat", json!({"members": ["bob"]}), None, ("deny", "pin.no-session")),
        ("message", json!({"action": "send", "target": "19:bob"}), None, ("deny", "pin.no-session")),
        // Tools and actions that speak to nobody need no session.
        ("message", json!({"action": "read", "target": "19:bob"}), None, ("allow", "tools.allow")),
        ("teams_list_chats", json!({}), None, ("allow", "tools.allow")),
    ];
    for (tool, args, session, expected) in cases {
        let v = without(tool, args.clone(), session);
        assert_eq!(decided(&v), expected, "{tool} {args} session {session:?}");
    }
    let v = without("teams_send_chat_message", json!({"chat": "19:bob"}), None);
    assert!(v.reason.contains("`sessionId`"), "the refusal says what is missing: {}", v.reason);
}

#[test]
fn an_operator_who_sets_allow_missing_session_lets_sessionless_calls_through_but_pins_sessions() {
    let db = TempDb::new();
    let rt = runtime(r#"{"pin": {"allowMissingSession": true}}"#, db.open());
    rt.start_turn(&pin(SESSION, "r1", "19:alice", "Alice", T0)).expect("pin");
    let mut c = tool_call("teams_send_chat_message", json!({"chat": "19:bob"}), SESSION, T0 + 1);
    c.session_id = None;
    assert_eq!(decided(&rt.check_tool_call(&c)), ("allow", "tools.allow"));
    c.session_id = Some(SESSION.into());
    assert_eq!(decided(&rt.check_tool_call(&c)), ("deny", "pin.other-chat"));
}

/// `warden check tool` as a subprocess; the parsed verdict's decision and rule.
fn check_tool(config: &str, db: &TempDb, request: serde_json::Value) -> (String, String) {
    let dir = db.dir.path();
    let path = dir.join("config.json");
    std::fs::write(&path, config).expect("write config");
    let (config, db_path) = (path.display().to_string(), db.path().display().to_string());
    let out =
        warden_process(&["check", "tool", "--config", &config, "--db", &db_path, "--replay"], &request.to_string());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stdout));
    (v["decision"].as_str().unwrap_or_default().into(), v["rule"].as_str().unwrap_or_default().into())
}

#[test]
fn the_warden_command_refuses_a_sessionless_gated_call_unless_the_operator_opts_out() {
    let db = TempDb::new();
    let request = json!({"toolName": "teams_send_chat_message", "arguments": {"chat": "19:bob"}, "nowMs": T0});
    let got = check_tool("{}", &db, request.clone());
    assert_eq!((got.0.as_str(), got.1.as_str()), ("deny", "pin.no-session"));
    let mut with_session = request.clone();
    with_session["sessionId"] = json!(SESSION);
    let got = check_tool("{}", &db, with_session);
    assert_eq!((got.0.as_str(), got.1.as_str()), ("allow", "tools.allow"));
    let got = check_tool(r#"{"pin": {"allowMissingSession": true}}"#, &db, request);
    assert_eq!((got.0.as_str(), got.1.as_str()), ("allow", "tools.allow"));
}

#[test]
fn validate_names_allow_missing_session_when_it_is_not_a_boolean() {
    let db = TempDb::new();
    let path = db.dir.path().join("config.json");
    std::fs::write(&path, r#"{"pin": {"allowMissingSession": "yes"}}"#).expect("write config");
    let out = warden_process(&["validate", "--config", &path.display().to_string()], "");
    assert_eq!(out.code, EXIT_INVALID, "{}", out.stderr);
    assert!(out.stderr.contains("pin.allowMissingSession: must be `true` or `false`, got `\"yes\"`"), "{}", out.stderr);
}
