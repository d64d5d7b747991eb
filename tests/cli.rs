//! The `warden` command, driven in-process with its real argument parser and
//! streams.

use std::path::Path;
use warden_host::cli::EXIT_INVALID;
use warden_tests::{T0, TempDb};

use warden_tests::cli as warden;

fn write_config(dir: &Path, text: &str) -> String {
    let path = dir.join("config.json");
    std::fs::write(&path, text).expect("write config");
    path.display().to_string()
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[test]
fn check_tool_on_a_pinned_session_denies_other_chats_and_allows_the_pinned_one() {
    let db = TempDb::new();
    let config = write_config(db.dir.path(), "{}");
    let db_path = db.path().display().to_string();
    let now = T0.to_string();
    let pinned = warden(
        &[
            "pin",
            "--config",
            &config,
            "--db",
            &db_path,
            "--session",
            "s1",
            "--chat",
            "19:alice",
            "--label",
            "Alice",
            "--now-ms",
            &now,
            "--replay",
        ],
        "",
    );
    assert_eq!(pinned.code, 0, "{}", pinned.stderr);
    assert_eq!(json(&pinned.stdout)["chatId"], "19:alice");

    let other = format!(
        r#"{{"toolName": "teams_send_chat_message", "arguments": {{"chat": "19:bob"}}, "sessionId": "s1", "nowMs": {}}}"#,
        T0 + 1
    );
    let out = warden(&["check", "tool", "--config", &config, "--db", &db_path, "--replay"], &other);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v = json(&out.stdout);
    assert_eq!((v["decision"].as_str(), v["rule"].as_str()), (Some("deny"), Some("pin.other-chat")));
    assert!(v["reason"].as_str().unwrap_or_default().contains("\"Alice\""));

    let same = other.replace("19:bob", "19:alice");
    let out = warden(&["check", "tool", "--config", &config, "--db", &db_path, "--replay"], &same);
    let v = json(&out.stdout);
    assert_eq!((v["decision"].as_str(), v["rule"].as_str()), (Some("allow"), Some("pin.pinned-chat")));
}

#[test]
fn malformed_requests_get_one_line_naming_the_field_and_write_nothing() {
    let db = TempDb::new();
    let config = write_config(db.dir.path(), "{}");
    let db_path = db.path().display().to_string();
    let cases = [
        ("tool", "{not json", "key must be a string"),
        ("tool", r#"{"toolName": "x", "arguments": {}, "sessionID": "s"}"#, "unknown field `sessionID`"),
        ("tool", r#"{"toolName": 7, "arguments": {}}"#, "toolName: invalid type: integer `7`, expected a string"),
        ("tool", r#"{"arguments": {}}"#, "missing field `toolName`"),
        ("turn", r#"{"message": "hi", "trigger": "robot"}"#, "trigger: unknown variant `robot`"),
        ("turn", r#"{"message": "hi", "identity": {"senderId": 5}}"#, "identity.senderId: invalid type: integer `5`"),
        (
            "outbound",
            r#"{"channel": "sms", "recipient": "+1", "body": "a", "bodyBytes": [1]}"#,
            "body: give `body` or `bodyBytes`, not both",
        ),
    ];
    for (what, input, expected) in cases {
        let out = warden(&["check", what, "--config", &config, "--db", &db_path], input);
        assert_eq!(out.code, EXIT_INVALID, "{input}");
        assert_eq!(out.stdout, "", "{input}");
        assert_eq!(out.stderr.lines().count(), 1, "one line: {}", out.stderr);
        assert!(out.stderr.starts_with("error: "), "{}", out.stderr);
        assert!(out.stderr.contains(expected), "{input}: {}", out.stderr);
        assert_eq!(db.records(), None, "a rejected request must not touch storage");
    }
}

#[test]
fn an_invalid_configuration_lists_every_error_and_exits_invalid() {
    let db = TempDb::new();
    let config = write_config(db.dir.path(), r#"{"pin": {"ttlMinutes": 2000, "enabled": "yes"}}"#);
    let out = warden(&["validate", "--config", &config], "");
    assert_eq!(out.code, EXIT_INVALID);
    assert!(out.stderr.contains("pin.ttlMinutes: must be between 1 and 1440, got `2000`"), "{}", out.stderr);
    assert!(out.stderr.contains("pin.enabled: must be `true` or `false`, got `\"yes\"`"), "{}", out.stderr);
}

#[test]
fn validate_prints_the_checks_a_configuration_enables() {
    let db = TempDb::new();
    let config = write_config(db.dir.path(), "{}");
    let out = warden(&["validate", "--config", &config], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = json(&out.stdout);
    assert!(report["policyVersion"].as_str().unwrap_or_default().starts_with("sha256:"));
    assert_eq!(report["checks"][0]["check"], "pin");
    assert_eq!(report["checks"][0]["active"], true);
}

#[test]
fn demo_prints_its_decision_table() {
    let out = warden(&["demo"], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    for expected in [
        "pin.pinned-chat",
        "pin.other-chat",
        "pin.channel-post",
        "pin.new-chat",
        "safety.missing_key",
        "safety.no_scenarios",
        "exec.download-execute",
        "exec.recursive-delete",
        "path.protected",
        "tools.ask-kind",
        "memory.allow",
        "gate.no-consent",
        "gate.routine",
        "gate.quiet-hours",
        "dlp.secret.aws-access-key",
        "gate.opted-out",
    ] {
        assert!(out.stdout.contains(expected), "demo shows {expected}:\n{}", out.stdout);
    }
}

#[test]
fn diagnostics_count_decisions_by_rule() {
    let db = TempDb::new();
    let config = write_config(db.dir.path(), "{}");
    let db_path = db.path().display().to_string();
    let call = r#"{"toolName": "calendar_list", "arguments": {}}"#;
    for _ in 0..3 {
        assert_eq!(warden(&["check", "tool", "--config", &config, "--db", &db_path], call).code, 0);
    }
    let out = warden(&["diagnostics", "--config", &config, "--db", &db_path], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(json(&out.stdout)["counters"]["tools.allow.tools.allow"], 3);
}
