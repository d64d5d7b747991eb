//! Storage round trips of checks with nothing remembered, and the markers
//! that let a call skip decision memory.

use crate::Warden;
use crate::fakes::{MemoryStorage, ScriptedHttp, VecLog};
use crate::model::{Approval, Decision, Direction, Identity, OutboundMessage, Scope, ToolCall, Verdict};
use crate::ports::{HttpError, Level, Log, Ports, Storage, StorageError};
use crate::prelude::*;
use crate::test_support::configured as warden;
use core::cell::RefCell;
use serde_json::{Value, json};

const T0: u64 = 1_700_000_000_000;

fn call(tool: &str, args: Value) -> ToolCall {
    ToolCall {
        tool_name: tool.into(),
        arguments: args.to_string(),
        call_id: Some("c1".into()),
        run_id: None,
        session_id: Some("s1".into()),
        now_ms: T0,
        identity: Identity::default(),
        cwd: Some("/ws".into()),
        derived_paths: Vec::new(),
    }
}

fn decided(v: &Verdict) -> (Decision, &str) {
    (v.decision, v.rule.as_str())
}

fn denied_http() -> ScriptedHttp {
    ScriptedHttp::new(|_| Err(HttpError::Denied))
}

fn answer(w: &Warden, ports: &Ports<'_>, asked: &Verdict, allow: bool, scope: Scope) {
    let approval = Approval {
        key: asked.approval_key.clone().expect("an ask has a key"),
        allow,
        scope,
        session_id: Some("s1".into()),
        call_id: None,
        now_ms: T0,
        idempotency_key: None,
    };
    w.record_approval(ports, &approval).expect("recorded");
}

#[test]
fn a_shell_call_with_nothing_remembered_makes_one_storage_round_trip() {
    let (storage, log, http) = (MemoryStorage::default(), VecLog::default(), denied_http());
    let ports = Ports { http: &http, storage: &storage, log: &log };
    let w = warden("{}");
    w.prepare(&ports);
    let before = storage.calls();
    let v = w.check_tool_call(&ports, &call("Bash", json!({"command": "ls -la | head -3"})));
    assert_eq!(decided(&v), (Decision::Allow, super::super::rules::ALLOW));
    assert_eq!(storage.calls() - before, 1, "one marker read");
    assert_eq!(storage.writes(), 0);
}

#[test]
fn an_outbound_check_with_nothing_to_review_makes_no_storage_round_trip() {
    let (storage, log, http) = (MemoryStorage::default(), VecLog::default(), denied_http());
    let ports = Ports { http: &http, storage: &storage, log: &log };
    let w = warden("{}");
    let message = OutboundMessage {
        direction: Direction::Outbound,
        channel: "slack".into(),
        recipient: "U1".into(),
        sender: None,
        body: b"the build is green".to_vec(),
        thread: None,
        message_id: None,
        session_id: None,
        now_ms: T0,
        identity: Identity::default(),
    };
    let v = w.check_outbound(&ports, &message);
    assert_eq!(decided(&v), (Decision::Allow, crate::dlp::rules::PRE_CHECKS_PASSED));
    assert_eq!(storage.calls(), 0);
}

#[test]
fn a_marker_that_cannot_be_read_refuses_the_call() {
    let (storage, log, http) = (MemoryStorage::default(), VecLog::default(), denied_http());
    let ports = Ports { http: &http, storage: &storage, log: &log };
    let w = warden("{}");
    w.prepare(&ports);
    storage.fail_with(StorageError::Unavailable("down".into()));
    let v = w.check_tool_call(&ports, &call("Bash", json!({"command": "ls"})));
    assert_eq!(decided(&v), (Decision::Deny, super::super::rules::STORAGE_UNAVAILABLE));
}

#[test]
fn storage_unreadable_when_the_instance_started_is_read_again_and_answers_still_apply() {
    let (storage, log, http) = (MemoryStorage::default(), VecLog::default(), denied_http());
    let ports = Ports { http: &http, storage: &storage, log: &log };
    let first = warden("{}");
    let fetch = call("WebFetch", json!({"url": "https://example.com/a"}));
    let asked = first.check_tool_call(&ports, &fetch);
    assert_eq!(decided(&asked), (Decision::Ask, super::super::rules::ASK_KIND));
    answer(&first, &ports, &asked, false, Scope::Always);
    let second = warden("{}");
    storage.fail_with(StorageError::Unavailable("down".into()));
    second.prepare(&ports);
    let refused = second.check_tool_call(&ports, &fetch);
    assert_eq!(decided(&refused), (Decision::Deny, super::super::rules::STORAGE_UNAVAILABLE));
    storage.heal();
    let v = second.check_tool_call(&ports, &fetch);
    assert_eq!(decided(&v), (Decision::Deny, super::super::rules::MEMORY_DENY));
}

#[test]
fn once_something_is_remembered_for_a_tool_only_that_tool_reads_decision_memory() {
    let (storage, log, http) = (MemoryStorage::default(), VecLog::default(), denied_http());
    let ports = Ports { http: &http, storage: &storage, log: &log };
    let w = warden("{}");
    w.prepare(&ports);
    let fetch = call("WebFetch", json!({"url": "https://example.com/a"}));
    let asked = w.check_tool_call(&ports, &fetch);
    answer(&w, &ports, &asked, true, Scope::Session);
    let before = storage.calls();
    let v = w.check_tool_call(&ports, &fetch);
    assert_eq!(decided(&v), (Decision::Allow, super::super::rules::MEMORY_ALLOW));
    assert!(storage.calls() - before > 1, "the marker and the answers");
    let before = storage.calls();
    w.check_tool_call(&ports, &call("Bash", json!({"command": "ls"})));
    assert_eq!(storage.calls() - before, 1, "another tool reads only its marker");
    let keys: Vec<String> =
        storage.list(super::NAMESPACE, "m:", 10, false).expect("list").into_iter().map(|(k, _)| k).collect();
    assert_eq!(keys.len(), 1, "{keys:?}");
}

/// A log that keeps Info and above, and counts the lines it was asked for.
#[derive(Default)]
struct InfoLog(RefCell<Vec<(Level, String)>>);

impl Log for InfoLog {
    fn write(&self, level: Level, message: &str) {
        self.0.borrow_mut().push((level, message.to_string()));
    }

    fn enabled(&self, level: Level) -> bool {
        level >= Level::Info
    }
}

#[test]
fn a_debug_line_is_not_written_to_a_log_that_does_not_keep_debug() {
    let (storage, log, http) = (MemoryStorage::default(), InfoLog::default(), denied_http());
    let ports = Ports { http: &http, storage: &storage, log: &log };
    let w = warden("{}");
    let allowed = w.check_tool_call(&ports, &call("Bash", json!({"command": "ls"})));
    assert_eq!(decided(&allowed), (Decision::Allow, super::super::rules::ALLOW));
    assert!(log.0.borrow().is_empty(), "{:?}", log.0.borrow());
    let asked = w.check_tool_call(&ports, &call("WebFetch", json!({"url": "https://example.com/a"})));
    assert_eq!(decided(&asked), (Decision::Ask, super::super::rules::ASK_KIND));
    assert_eq!(log.0.borrow().as_slice(), [(Level::Info, "tool call WebFetch: ask by tools.ask-kind".to_string())]);
}

#[test]
fn diagnostics_count_what_could_not_be_written() {
    let (storage, log, http) = (MemoryStorage::default(), VecLog::default(), denied_http());
    let ports = Ports { http: &http, storage: &storage, log: &log };
    let w = warden("{}");
    for _ in 0..3 {
        w.check_tool_call(&ports, &call("Bash", json!({"command": "ls"})));
    }
    storage.fail_commits_with(StorageError::Unavailable("read only".into()));
    let report = w.diagnostics(&ports).expect("diagnostics");
    let counted = report.counters.iter().find(|c| c.name == "tools.allow.tools.allow").map(|c| c.value);
    assert_eq!(counted, Some(3));
    storage.heal();
    let report = w.diagnostics(&ports).expect("diagnostics");
    let counted = report.counters.iter().find(|c| c.name == "tools.allow.tools.allow").map(|c| c.value);
    assert_eq!(counted, Some(3), "written once, not counted twice");
}

#[test]
fn a_remembered_deny_binds_every_instance_whatever_the_tool_name_and_scope() {
    let config = r#"{"tools": {"askTools": ["*"]}}"#;
    let names = ["mcp__a:b__c", "m:x:y", "工具:é", "Bash ", "a\u{0}b"];
    for scope in [Scope::Always, Scope::Session, Scope::Once] {
        let (storage, log, http) = (MemoryStorage::default(), VecLog::default(), denied_http());
        let ports = Ports { http: &http, storage: &storage, log: &log };
        // Both instances learn that storage is empty before anything is answered.
        let (first, second) = (warden(config), warden(config));
        first.prepare(&ports);
        second.prepare(&ports);
        for name in names {
            let c = call(name, json!({"q": 1}));
            let asked = first.check_tool_call(&ports, &c);
            assert_eq!(decided(&asked), (Decision::Ask, super::super::rules::ASK_TOOL), "{name}");
            answer(&first, &ports, &asked, false, scope);
            let v = second.check_tool_call(&ports, &c);
            assert_eq!(decided(&v), (Decision::Deny, super::super::rules::MEMORY_DENY), "{name} {scope:?}");
        }
        // Another spelling of a name is another tool, asked again as before markers.
        let other = second.check_tool_call(&ports, &call("MCP__A:B__C", json!({"q": 1})));
        assert_eq!(decided(&other), (Decision::Ask, super::super::rules::ASK_TOOL), "{scope:?}");
    }
}
