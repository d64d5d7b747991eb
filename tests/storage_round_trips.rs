//! Storage round trips of checks through the real component: a check with
//! nothing remembered reads one marker and writes nothing (its counter waits
//! in the instance), answers are still found by every instance sharing the
//! storage and after a restart, and counters lose at most
//! `FLUSH_CALLS - 1` counts of an instance that is dropped without a flush.

use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use warden_core::counters::FLUSH_CALLS;
use warden_host::bindings::exports::warden::guard::policy::{Approval, Direction, OutboundMessage, ToolCall};
use warden_host::bindings::warden::guard::types::{ApprovalScope, Verdict};
use warden_host::memory_storage::MemoryStorage;
use warden_host::storage::{BatchError, Condition, Record, Storage, StorageError, Write};
use warden_host::{Limits, Runtime};
use warden_tests::{CapturedLog, T0, TempDb, decided, nobody, options, tool_call, warden_process};

/// Storage that counts every call made to it.
#[derive(Default)]
struct Counting {
    inner: MemoryStorage,
    calls: AtomicUsize,
}

impl Counting {
    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    fn count(&self) {
        self.calls.fetch_add(1, Ordering::SeqCst);
    }
}

impl Storage for Counting {
    fn get(&self, n: &str, k: &str) -> Result<Option<Record>, StorageError> {
        self.count();
        self.inner.get(n, k)
    }
    fn set(&self, n: &str, k: &str, v: &[u8], w: Condition) -> Result<u64, StorageError> {
        self.count();
        self.inner.set(n, k, v, w)
    }
    fn delete(&self, n: &str, k: &str, w: Condition) -> Result<bool, StorageError> {
        self.count();
        self.inner.delete(n, k, w)
    }
    fn list(&self, n: &str, p: &str, l: u32, r: bool) -> Result<Vec<(String, Record)>, StorageError> {
        self.count();
        self.inner.list(n, p, l, r)
    }
    fn commit(&self, writes: &[Write]) -> Result<(), BatchError> {
        self.count();
        self.inner.commit(writes)
    }
}

fn pooled(config: &str, storage: Arc<dyn Storage>) -> Runtime {
    let log = CapturedLog::default();
    Runtime::new(options(storage, &log), config).unwrap_or_else(|e| panic!("runtime did not start: {e}"))
}

fn shell(command: &str, call_id: Option<&str>) -> ToolCall {
    let mut c = tool_call("Bash", json!({"command": command, "description": "list"}), "s1", T0);
    c.cwd = Some("/ws".into());
    c.call_id = call_id.map(str::to_string);
    c
}

fn fetch() -> ToolCall {
    let mut c = tool_call("WebFetch", json!({"url": "https://example.com/a", "prompt": "summarize"}), "s1", T0);
    c.cwd = Some("/ws".into());
    c
}

fn message() -> OutboundMessage {
    OutboundMessage {
        direction: Direction::Outbound,
        channel: "slack".into(),
        recipient: "U0123".into(),
        sender: None,
        body: b"the build is green".to_vec(),
        thread: None,
        message_id: None,
        session_id: Some("s1".into()),
        now_ms: T0,
        identity: nobody(),
    }
}

fn answer(rt: &Runtime, asked: &Verdict, scope: ApprovalScope, allow: bool) {
    let approval = Approval {
        key: asked.approval_key.clone().expect("an ask carries its key"),
        allow,
        scope,
        session_id: Some("s1".into()),
        call_id: None,
        now_ms: T0,
        idempotency_key: None,
    };
    rt.record_approval(&approval).expect("the answer is recorded");
}

fn counter(rt: &Runtime, name: &str) -> u64 {
    let report = rt.diagnostics().expect("diagnostics");
    report.counters.iter().find(|c| c.name == name).map_or(0, |c| c.value)
}

#[test]
fn a_check_through_the_component_never_does_more_than_one_storage_round_trip_when_nothing_is_remembered() {
    let storage = Arc::new(Counting::default());
    let rt = pooled("{}", storage.clone());
    let mut per_check = Vec::new();
    // Fewer checks than the counter bound: none of them writes its counter.
    for i in 0..FLUSH_CALLS - 1 {
        let before = storage.calls();
        match i % 3 {
            0 => {
                let v = rt.check_tool_call(&shell("ls -la", None));
                assert_eq!(decided(&v), ("allow", "tools.allow"));
            }
            1 => {
                let v = rt.check_tool_call(&shell("git status && cat README.md | head -5", Some(&format!("c{i}"))));
                assert_eq!(decided(&v), ("allow", "tools.allow"));
            }
            _ => {
                let v = rt.check_outbound(&message());
                assert_eq!(decided(&v), ("allow", "dlp.pre-checks-passed"));
            }
        }
        per_check.push((i % 3, storage.calls() - before));
    }
    for (kind, trips) in &per_check {
        let expected = if *kind == 2 { 0 } else { 1 };
        assert_eq!(*trips, expected, "round trips of each check (0, 1: tool calls, 2: outbound): {per_check:?}");
    }
    // The check that reaches the bound writes every pending counter in one batch.
    let before = storage.calls();
    let v = rt.check_tool_call(&shell("ls -la", None));
    assert_eq!(decided(&v), ("allow", "tools.allow"));
    assert_eq!(storage.calls() - before, 2, "the marker read and the one counter batch");
    assert_eq!(counter(&rt, "tools.allow.tools.allow"), FLUSH_CALLS - (FLUSH_CALLS - 1) / 3);
    assert_eq!(counter(&rt, "outbound.allow.dlp.pre-checks-passed"), (FLUSH_CALLS - 1) / 3);
}

#[test]
fn an_answer_recorded_through_one_instance_is_found_by_another_sharing_the_storage() {
    let storage: Arc<dyn Storage> = Arc::new(MemoryStorage::default());
    // Both instances learn about the storage before anything is remembered.
    let first = pooled("{}", storage.clone());
    let second = pooled("{}", storage.clone());
    assert_eq!(decided(&second.check_tool_call(&fetch())), ("ask", "tools.ask-kind"));
    let asked = first.check_tool_call(&fetch());
    assert_eq!(decided(&asked), ("ask", "tools.ask-kind"));
    answer(&first, &asked, ApprovalScope::Session, true);
    let found = second.check_tool_call(&fetch());
    assert_eq!(decided(&found), ("allow", "memory.allow"));
    assert_eq!(found.scope, Some(ApprovalScope::Session));
    // Another session does not see the session answer.
    let mut elsewhere = fetch();
    elsewhere.session_id = Some("s2".into());
    assert_eq!(decided(&second.check_tool_call(&elsewhere)), ("ask", "tools.ask-kind"));
}

#[test]
fn an_always_answer_and_a_remembered_deny_are_found_by_another_instance() {
    let config = r#"{"tools": {"askTools": ["deploy", "rollback"], "rules": {"tools.ask-tool": {"scope": "always"}}}}"#;
    let storage: Arc<dyn Storage> = Arc::new(MemoryStorage::default());
    let first = pooled(config, storage.clone());
    let second = pooled(config, storage.clone());
    let deploy = tool_call("deploy", json!({"target": "prod"}), "s1", T0);
    let rollback = tool_call("rollback", json!({"target": "prod"}), "s1", T0);
    let asked = first.check_tool_call(&deploy);
    assert_eq!(decided(&asked), ("ask", "tools.ask-tool"));
    answer(&first, &asked, ApprovalScope::Always, true);
    let asked = first.check_tool_call(&rollback);
    answer(&first, &asked, ApprovalScope::Always, false);
    let mut other_session = deploy.clone();
    other_session.session_id = Some("s9".into());
    let found = second.check_tool_call(&other_session);
    assert_eq!(decided(&found), ("allow", "memory.allow"));
    assert_eq!(found.scope, Some(ApprovalScope::Always));
    let refused = second.check_tool_call(&rollback);
    assert_eq!(decided(&refused), ("deny", "memory.deny"));
    // An answer under another policy does not apply, and its marker does not make one up.
    let edited = pooled(r#"{"tools": {"askTools": ["deploy", "rollback"]}}"#, storage);
    assert_eq!(decided(&edited.check_tool_call(&rollback)), ("ask", "tools.ask-tool"));
}

#[test]
fn answers_recorded_before_markers_existed_are_still_found() {
    let storage = Arc::new(MemoryStorage::default());
    let rt = pooled("{}", storage.clone());
    let asked = rt.check_tool_call(&fetch());
    answer(&rt, &asked, ApprovalScope::Session, false);
    // Storage as an earlier version left it: the answer without marker or format key.
    let keys: Vec<String> =
        storage.list("tools.memory", "", 100, false).expect("list").into_iter().map(|(k, _)| k).collect();
    let markers: Vec<&String> = keys.iter().filter(|k| k.starts_with("m:") || *k == "format").collect();
    assert_eq!(markers.len(), 2, "one marker and the format key: {keys:?}");
    for key in markers {
        storage.delete("tools.memory", key, Condition::Any).expect("delete");
    }
    let restarted = pooled("{}", storage.clone());
    assert_eq!(decided(&restarted.check_tool_call(&fetch())), ("deny", "memory.deny"));
    // Answers recorded into such storage never make it look marked.
    let mut other = fetch();
    other.arguments = json!({"url": "https://example.com/b", "prompt": "summarize"}).to_string();
    let asked = restarted.check_tool_call(&other);
    assert_eq!(decided(&asked), ("ask", "tools.ask-kind"));
    answer(&restarted, &asked, ApprovalScope::Session, true);
    assert_eq!(decided(&restarted.check_tool_call(&other)), ("allow", "memory.allow"));
    assert_eq!(storage.get("tools.memory", "format").expect("get"), None);
    let again = pooled("{}", storage);
    assert_eq!(decided(&again.check_tool_call(&fetch())), ("deny", "memory.deny"));
}

#[test]
fn diagnostics_report_every_count_of_instances_sharing_storage() {
    let storage: Arc<dyn Storage> = Arc::new(MemoryStorage::default());
    let first = pooled("{}", storage.clone());
    let second = pooled("{}", storage.clone());
    for _ in 0..5 {
        first.check_tool_call(&shell("ls", None));
    }
    for _ in 0..7 {
        second.check_tool_call(&shell("ls", None));
    }
    // Each instance writes its own counts before reporting; the deltas add.
    assert_eq!(counter(&first, "tools.allow.tools.allow"), 5);
    assert_eq!(counter(&second, "tools.allow.tools.allow"), 12);
    first.check_tool_call(&shell("ls", None));
    assert_eq!(counter(&first, "tools.allow.tools.allow"), 13);
    drop(first);
    drop(second);
    assert_eq!(counter(&pooled("{}", storage), "tools.allow.tools.allow"), 13);
}

#[test]
fn an_instance_dropped_without_a_flush_loses_at_most_flush_calls_minus_one_counts() {
    let storage: Arc<dyn Storage> = Arc::new(MemoryStorage::default());
    let crashed = pooled("{}", storage.clone());
    let checks = 2 * FLUSH_CALLS - 1;
    for _ in 0..checks {
        crashed.check_tool_call(&shell("ls", None));
    }
    // A crash: the instance goes without writing what it keeps.
    std::mem::forget(crashed);
    let survivor = pooled("{}", storage);
    assert_eq!(counter(&survivor, "tools.allow.tools.allow"), FLUSH_CALLS, "{} counts lost", FLUSH_CALLS - 1);
}

#[test]
fn an_instance_past_the_pool_writes_its_counts_before_it_is_dropped() {
    let storage: Arc<dyn Storage> = Arc::new(MemoryStorage::default());
    let log = CapturedLog::default();
    let mut opts = options(storage.clone(), &log);
    opts.limits = Limits { pool: 0, ..Limits::default() };
    let rt = Runtime::new(opts, "{}").expect("runtime");
    for _ in 0..3 {
        rt.check_tool_call(&shell("ls", None));
    }
    assert_eq!(counter(&pooled("{}", storage), "tools.allow.tools.allow"), 3);
}

#[test]
fn an_answer_and_the_counters_survive_a_restart_of_the_warden_binary_on_sqlite() {
    let db = TempDb::new();
    let config = db.dir.path().join("config.json");
    std::fs::write(&config, "{}").expect("write config");
    let (config, db_path) = (config.display().to_string(), db.path().display().to_string());
    let call = json!({"toolName": "WebFetch", "arguments": {"url": "https://example.com/a", "prompt": "summarize"},
        "sessionId": "s1", "cwd": "/ws", "nowMs": T0})
    .to_string();
    let check = || {
        let out = warden_process(&["check", "tool", "--config", &config, "--db", &db_path, "--replay"], &call);
        assert_eq!(out.code, 0, "{}", out.stderr);
        serde_json::from_str::<serde_json::Value>(&out.stdout).expect("a verdict")
    };
    let asked = check();
    assert_eq!((asked["decision"].as_str(), asked["rule"].as_str()), (Some("ask"), Some("tools.ask-kind")));
    let key = asked["approvalKey"].as_str().expect("a key").to_string();
    let out = warden_process(
        &["approve", "--config", &config, "--db", &db_path, "--key", &key, "--scope", "session", "--session", "s1"],
        "",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let found = check();
    assert_eq!((found["decision"].as_str(), found["rule"].as_str()), (Some("allow"), Some("memory.allow")));
    let out = warden_process(&["diagnostics", "--config", &config, "--db", &db_path], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).expect("a report");
    assert_eq!(report["counters"]["tools.ask.tools.ask-kind"], 1, "{report}");
    assert_eq!(report["counters"]["tools.allow.memory.allow"], 1, "{report}");
}
