use super::*;
use crate::model::{Decision, Identity};
use crate::ports::Storage;
use crate::test_support::{Env, configured};
use crate::tools::rules;
use serde_json::json;
use std::string::ToString;

const T0: u64 = 1_700_000_000_000;

fn warden(scope: &str) -> crate::Warden {
    configured(&json!({"tools": {"askTools": ["deploy"], "rules": {"tools.ask-tool": {"scope": scope}}}}).to_string())
}

fn call(args: serde_json::Value, now_ms: u64) -> ToolCall {
    ToolCall {
        tool_name: "deploy".into(),
        arguments: args.to_string(),
        call_id: None,
        run_id: None,
        session_id: Some("s1".into()),
        now_ms,
        identity: Identity { agent_id: Some("ops".into()), sender_id: Some("alice".into()), ..Default::default() },
        cwd: None,
        derived_paths: Vec::new(),
    }
}

fn only_ask(env: &Env, now_ms: u64) -> PendingAsk {
    let asks = list(&env.storage, MAX_LIST, None, now_ms).expect("list");
    assert_eq!(asks.len(), 1, "{asks:?}");
    asks.into_iter().next().expect("one ask")
}

fn answer_with(
    w: &crate::Warden,
    env: &Env,
    id: &str,
    allow: bool,
    scope: Scope,
    now_ms: u64,
) -> Result<Answered, AskError> {
    w.asks_answer(&env.ports(), id, Answer { allow, scope, now_ms })
}

#[test]
fn an_ask_is_kept_with_what_a_person_needs_and_named_in_the_verdict() {
    let env = Env::new();
    let w = warden("always");
    let v = w.check_tool_call(&env.ports(), &call(json!({"target": "prod"}), T0));
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Ask, rules::ASK_TOOL));
    let ask = only_ask(&env, T0 + 1);
    assert!(v.signals.iter().any(|s| s.name == PENDING_SIGNAL && s.detail.contains(&ask.id)), "{:?}", v.signals);
    assert_eq!(
        (ask.tool_name.as_str(), ask.rule.as_str(), ask.scope, ask.agent_id.as_deref(), ask.sender_id.as_deref()),
        ("deploy", rules::ASK_TOOL, Scope::Always, Some("ops"), Some("alice"))
    );
    assert_eq!((ask.session_id.as_deref(), ask.created_ms, ask.expires_ms), (Some("s1"), T0, T0 + ASK_TTL_MS));
    assert_eq!(Some(ask.approval_key.clone()), v.approval_key);
    assert!(ask.arguments.contains("prod"), "{}", ask.arguments);
}

#[test]
fn an_allowed_call_never_touches_the_inbox() {
    let env = Env::new();
    let w = warden("always");
    let before = env.storage.calls();
    let v = w.check_tool_call(&env.ports(), &call(json!({"target": "prod"}), T0));
    assert_eq!(v.decision, Decision::Ask);
    let asked_calls = env.storage.calls() - before;
    let mut other = call(json!({"query": "weather"}), T0);
    other.tool_name = "search".into();
    let before = env.storage.calls();
    let allowed = w.check_tool_call(&env.ports(), &other);
    assert_eq!(allowed.decision, Decision::Allow);
    let allowed_calls = env.storage.calls() - before;
    assert!(allowed_calls < asked_calls, "allowed {allowed_calls} asked {asked_calls}");
    assert!(env.storage.dump().iter().all(|(ns, k, _)| ns != NAMESPACE || k == INDEX_KEY || k.starts_with("p:")));
    assert_eq!(list(&env.storage, MAX_LIST, None, T0).expect("list").len(), 1);
}

#[test]
fn secrets_in_arguments_are_redacted_and_long_values_cut() {
    let token = format!("AKIA{}", "Q2W3E4R5T6Y7U2I3");
    let shown = shown_arguments(&json!({"token": token, "note": "x".repeat(5000)}).to_string());
    assert!(!shown.contains(&token), "{shown}");
    assert!(shown.contains("[redacted: "), "{shown}");
    assert!(shown.contains("more characters]"), "{shown}");
    assert!(shown.chars().count() <= MAX_SHOWN_ARGUMENT_CHARS + 40, "{}", shown.chars().count());
}

#[test]
fn answering_once_records_what_record_approval_records_and_the_retry_is_allowed_by_memory() {
    // (scope offered, scope answered, allow, rule of the retried call)
    let cases = [
        ("once", Scope::Once, true, rules::MEMORY_ALLOW),
        ("session", Scope::Session, true, rules::MEMORY_ALLOW),
        ("always", Scope::Always, true, rules::MEMORY_ALLOW),
        ("always", Scope::Once, true, rules::MEMORY_ALLOW),
        ("always", Scope::Always, false, rules::MEMORY_DENY),
    ];
    for (offered, scope, allow, rule) in cases {
        let env = Env::new();
        let w = warden(offered);
        let c = call(json!({"target": "prod"}), T0);
        w.check_tool_call(&env.ports(), &c);
        let ask = only_ask(&env, T0);
        let answered = answer_with(&w, &env, &ask.id, allow, scope, T0 + 5).expect("answered");
        assert_eq!((answered.allow, answered.scope), (allow, scope));
        let retried = w.check_tool_call(&env.ports(), &call(json!({"target": "prod"}), T0 + 10));
        assert_eq!(retried.rule, rule, "{offered} {scope:?} {allow}");
        assert_eq!(retried.decision, if allow { Decision::Allow } else { Decision::Deny });
        assert!(list(&env.storage, MAX_LIST, None, T0 + 10).expect("list").is_empty() || !allow);
        assert_eq!(recent(&env.storage, 10).expect("recent")[0].id, ask.id);
    }
}

#[test]
fn an_answer_broader_than_the_offered_scope_is_refused_and_changes_nothing() {
    let env = Env::new();
    let w = warden("session");
    w.check_tool_call(&env.ports(), &call(json!({"target": "prod"}), T0));
    let ask = only_ask(&env, T0);
    let refused = answer_with(&w, &env, &ask.id, true, Scope::Always, T0 + 1);
    assert!(matches!(refused, Err(AskError::ScopeTooBroad(ref m)) if m.starts_with("scope: `always`")), "{refused:?}");
    assert_eq!(only_ask(&env, T0 + 1).id, ask.id);
    let again = w.check_tool_call(&env.ports(), &call(json!({"target": "prod"}), T0 + 2));
    assert_eq!(again.decision, Decision::Ask);
}

/// An ask ID (empty: the real one), the time of the answer, and the error expected.
type ErrorCase = (&'static str, u64, fn(&AskError) -> bool);

#[test]
fn unknown_forged_and_expired_asks_are_clear_errors() {
    let env = Env::new();
    let w = warden("once");
    w.check_tool_call(&env.ports(), &call(json!({"target": "prod"}), T0));
    let ask = only_ask(&env, T0);
    let cases: [ErrorCase; 4] = [
        ("nope", T0, |e| matches!(e, AskError::UnknownAsk(m) if m.starts_with("id: `nope` is not an ask ID"))),
        ("000000000000000000000000", T0, |e| matches!(e, AskError::UnknownAsk(m) if m.contains("not a pending ask"))),
        ("<script>alert(1)</script>", T0, |e| matches!(e, AskError::UnknownAsk(_))),
        ("", T0 + ASK_TTL_MS, |e| matches!(e, AskError::Expired(m) if m.contains("expired"))),
    ];
    for (id, now, expected) in cases {
        let id = if id.is_empty() { ask.id.as_str() } else { id };
        let got = answer_with(&w, &env, id, true, Scope::Once, now);
        assert!(got.as_ref().is_err_and(expected), "{id}: {got:?}");
    }
    // Nothing was recorded: the call still asks.
    let again = w.check_tool_call(&env.ports(), &call(json!({"target": "prod"}), T0 + 1));
    assert_eq!(again.decision, Decision::Ask);
}

#[test]
fn an_ask_expires_exactly_at_its_time_to_live() {
    let env = Env::new();
    let w = warden("once");
    w.check_tool_call(&env.ports(), &call(json!({"target": "prod"}), T0));
    assert_eq!(list(&env.storage, MAX_LIST, None, T0 + ASK_TTL_MS - 1).expect("list").len(), 1);
    assert!(list(&env.storage, MAX_LIST, None, T0 + ASK_TTL_MS).expect("list").is_empty());
    let ask = list(&env.storage, MAX_LIST, None, T0).expect("list").remove(0);
    assert!(answer_with(&w, &env, &ask.id, true, Scope::Once, T0 + ASK_TTL_MS - 1).is_ok());
}

#[test]
fn the_inbox_holds_at_most_max_pending_and_evicts_the_oldest() {
    let env = Env::new();
    let w = warden("once");
    for i in 0..=MAX_PENDING as u64 {
        w.check_tool_call(&env.ports(), &call(json!({"target": format!("host-{i}")}), T0 + i));
    }
    let asks = list(&env.storage, MAX_LIST, None, T0 + 100).expect("list");
    assert_eq!(asks.len(), MAX_PENDING);
    assert!(asks.iter().all(|a| !a.arguments.contains("\"host-0\"")), "the oldest is evicted");
    assert!(asks[0].arguments.contains(&format!("host-{MAX_PENDING}")), "newest first");
    let stored = env.storage.dump().iter().filter(|(ns, k, _)| ns == NAMESPACE && k.starts_with("p:")).count();
    assert_eq!(stored, MAX_PENDING);
}

#[test]
fn the_same_call_asked_again_is_one_ask() {
    let env = Env::new();
    let w = warden("once");
    w.check_tool_call(&env.ports(), &call(json!({"target": "prod"}), T0));
    w.check_tool_call(&env.ports(), &call(json!({"target": "prod"}), T0 + 1));
    assert_eq!(list(&env.storage, MAX_LIST, None, T0 + 2).expect("list").len(), 1);
}

#[test]
fn list_limits_and_cursor_are_checked() {
    let env = Env::new();
    let w = warden("once");
    for i in 0..3u64 {
        w.check_tool_call(&env.ports(), &call(json!({"target": i}), T0 + i));
    }
    assert!(matches!(list(&env.storage, 0, None, T0), Err(AskError::InvalidInput(m)) if m.starts_with("limit: `0`")));
    assert!(matches!(list(&env.storage, MAX_LIST + 1, None, T0), Err(AskError::InvalidInput(_))));
    assert_eq!(list(&env.storage, MAX_LIST, None, T0 + 5).expect("list").len(), 3);
    let page = list(&env.storage, 1, Some(T0 + 2), T0 + 5).expect("list");
    assert_eq!(page.iter().map(|a| a.created_ms).collect::<Vec<_>>(), vec![T0 + 1]);
}

#[test]
fn keeping_an_ask_fails_open_when_storage_fails() {
    let env = Env::new();
    let w = warden("once");
    env.storage.fail_commits_with(crate::ports::StorageError::Unavailable("down".into()));
    let v = w.check_tool_call(&env.ports(), &call(json!({"target": "prod"}), T0));
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Ask, rules::ASK_TOOL));
    assert!(v.signals.iter().any(|s| s.name == UNRECORDED_SIGNAL), "{:?}", v.signals);
    assert!(v.approval_key.is_some());
}

#[test]
fn an_answer_that_cannot_be_recorded_leaves_the_ask_pending() {
    let env = Env::new();
    let w = warden("once");
    w.check_tool_call(&env.ports(), &call(json!({"target": "prod"}), T0));
    let ask = only_ask(&env, T0);
    let failed = answer(&env.storage, &ask.id, Answer { allow: true, scope: Scope::Once, now_ms: T0 }, |_| {
        Err(PolicyError::Storage("down".into()))
    });
    assert!(matches!(failed, Err(AskError::Storage(_))), "{failed:?}");
    assert_eq!(only_ask(&env, T0).id, ask.id);
    assert!(env.storage.get(NAMESPACE, &ask_key(&ask.id)).expect("read").is_some());
}
