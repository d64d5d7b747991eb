//! The host survives a misbehaving guest: the deadline stops a spinning
//! guest, the memory cap stops a hoarding one, a trapped instance is replaced,
//! and each call answers with its check's failure mode.

use serde_json::json;
use std::time::{Duration, Instant};
use warden_host::bindings::exports::warden::guard::policy::{Direction, OutboundMessage, SafetyOutcome, Trigger, Turn};
use warden_host::bindings::warden::guard::types::ChannelContext;
use warden_host::{ComponentSource, Limits, Runtime, RuntimeOptions};
use warden_tests::{CapturedLog, T0, TempDb, decided, hostile_component, nobody, tool_call};

fn hostile(limits: Limits) -> (Runtime, CapturedLog, TempDb) {
    let db = TempDb::new();
    let log = CapturedLog::default();
    let rt = Runtime::new(
        RuntimeOptions {
            component: ComponentSource::Bytes(hostile_component()),
            cache_dir: Some(warden_tests::cache_dir()),
            limits,
            storage: db.open(),
            log: log.sink(),
            host: None,
        },
        "{}",
    )
    .expect("hostile guest starts");
    (rt, log, db)
}

fn limits(cpu_ms: u64, memory_mib: usize) -> Limits {
    Limits { memory_bytes: memory_mib * 1024 * 1024, cpu: Duration::from_millis(cpu_ms), pool: 4 }
}

#[test]
fn a_spinning_guest_is_stopped_by_the_deadline_and_the_tool_call_fails_closed() {
    let (rt, log, _db) = hostile(limits(200, 32));
    let started = Instant::now();
    let v = rt.check_tool_call(&tool_call("spin", json!({}), "s", T0));
    let took = started.elapsed();
    assert_eq!(decided(&v), ("deny", "host.guest-failure"));
    assert!(v.reason.contains("CPU deadline"), "{}", v.reason);
    assert!(took < Duration::from_secs(10), "stopped after {took:?}");
    assert!(log.lines().iter().any(|(_, l)| l.contains("discarded")));
    // The trapped instance was replaced: the next call is answered normally.
    let v = rt.check_tool_call(&tool_call("read", json!({}), "s", T0));
    assert_eq!(decided(&v), ("allow", "hostile.ok"));
}

#[test]
fn a_hoarding_guest_is_stopped_by_the_memory_cap() {
    let (rt, _log, _db) = hostile(limits(5_000, 16));
    let v = rt.check_tool_call(&tool_call("hoard", json!({}), "s", T0));
    assert_eq!(decided(&v), ("deny", "host.guest-failure"));
    assert!(v.reason.contains("memory"), "{}", v.reason);
    let v = rt.check_tool_call(&tool_call("read", json!({}), "s", T0));
    assert_eq!(decided(&v), ("allow", "hostile.ok"));
}

#[test]
fn a_trapping_guest_fails_outbound_messages_closed() {
    let (rt, _log, _db) = hostile(limits(1_000, 32));
    let v = rt.check_outbound(&OutboundMessage {
        direction: Direction::Outbound,
        channel: "sms".into(),
        recipient: "+15550100".into(),
        sender: None,
        body: b"hello".to_vec(),
        thread: None,
        message_id: None,
        session_id: None,
        now_ms: T0,
        identity: nobody(),
    });
    assert_eq!(decided(&v), ("deny", "host.guest-failure"));
    let v = rt.check_tool_call(&tool_call("crash", json!({}), "s", T0));
    assert_eq!(decided(&v), ("deny", "host.guest-failure"));
}

#[test]
fn a_failing_guest_lets_inbound_turns_proceed_unchecked() {
    let (rt, _log, _db) = hostile(limits(100, 32));
    let outcome = rt.check_turn(&Turn {
        run_id: None,
        session_id: None,
        now_ms: T0,
        identity: nobody(),
        trigger: Trigger::User,
        message: "hello".into(),
        context: ChannelContext { thread_starter: None, replied_to: None, since_last_reply: Vec::new() },
        history: Vec::new(),
        queue_mode: None,
        hook_timeout_ms: None,
    });
    assert!(outcome.proceed);
    assert_eq!(outcome.outcome, SafetyOutcome::Failed);
    assert_eq!(outcome.rule, "host.guest-failure");
    assert_eq!(outcome.append_context, None);
}

#[test]
fn a_spinning_or_trapping_guest_fails_the_configuration_audit_and_writes_nothing() {
    use warden_host::CallError;
    use warden_host::bindings::exports::warden::guard::runtime_config::AgentRuntime;
    let (rt, _log, _db) = hostile(limits(200, 32));
    match rt.audit_config(AgentRuntime::Openclaw, "spin") {
        Err(CallError::Guest(m)) => assert!(m.contains("CPU deadline"), "{m}"),
        other => panic!("{other:?}"),
    }
    match rt.harden_config(AgentRuntime::Hermes, "crash") {
        Err(CallError::Guest(m)) => assert!(m.contains("unreachable"), "{m}"),
        other => panic!("{other:?}"),
    }
    // The instance was replaced: the next call is answered (here, the hostile guest's typed error).
    assert!(matches!(rt.audit_config(AgentRuntime::ClaudeCode, "{}"), Err(CallError::Policy(_))));
}
