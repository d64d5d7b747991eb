//! The log level a host declares in its context: the component neither
//! formats nor sends lines below it, and sends every line when none is given.

use serde_json::json;
use std::sync::Arc;
use warden_host::Runtime;
use warden_host::memory_storage::MemoryStorage;
use warden_host::runtime::Level;
use warden_tests::{CapturedLog, T0, decided, host_context, options, tool_call, warden_process};

fn lines_of(level: Option<Level>) -> Vec<(Level, String)> {
    let log = CapturedLog::default();
    let mut opts = options(Arc::new(MemoryStorage::default()), &log);
    let mut context = host_context();
    context.log_level = level;
    opts.host = Some(context);
    let rt = Runtime::new(opts, "{}").expect("runtime");
    let allowed = rt.check_tool_call(&tool_call("Bash", json!({"command": "ls"}), "s1", T0));
    assert_eq!(decided(&allowed), ("allow", "tools.allow"));
    let asked = rt.check_tool_call(&tool_call("WebFetch", json!({"url": "https://example.com/"}), "s1", T0));
    assert_eq!(decided(&asked), ("ask", "tools.ask-kind"));
    log.lines().into_iter().filter(|(_, m)| m.starts_with("tool call")).collect()
}

#[test]
fn a_host_that_keeps_info_gets_no_debug_lines_from_the_component() {
    let lines = lines_of(Some(Level::Info));
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(matches!(lines[0].0, Level::Info), "{lines:?}");
    assert_eq!(lines[0].1, "tool call WebFetch: ask by tools.ask-kind");
}

#[test]
fn a_host_that_declares_no_level_gets_every_line() {
    let lines = lines_of(None);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(matches!(lines[0].0, Level::Debug), "{lines:?}");
    assert_eq!(lines[0].1, "tool call Bash: allow by tools.allow");
}

#[test]
fn the_warden_binary_prints_debug_lines_only_at_its_debug_level() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("config.json");
    std::fs::write(&config, "{}").expect("write config");
    let db = dir.path().join("warden.db");
    let (config, db) = (config.display().to_string(), db.display().to_string());
    let call = json!({"toolName": "Bash", "arguments": {"command": "ls"}, "sessionId": "s1", "nowMs": T0}).to_string();
    let run = |level: &str| {
        let out = warden_process(
            &["check", "tool", "--config", &config, "--db", &db, "--replay", "--log-level", level],
            &call,
        );
        assert_eq!(out.code, 0, "{}", out.stderr);
        out.stderr
    };
    assert!(run("debug").contains("warden debug: tool call Bash: allow by tools.allow"));
    assert!(!run("info").contains("tool call Bash"));
}
