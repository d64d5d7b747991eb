use super::*;
use crate::Warden;
use crate::model::{Decision, Identity, Verdict};
use crate::ports::StorageError;
use crate::test_support::{Env, configured, host_context};
use serde_json::{Value, json};

const T0: u64 = 1_700_000_000_000;

fn warden(profile: Value) -> Warden {
    configured(&json!({"tools": {"askKinds": []}, "profile": profile}).to_string())
}

fn secret() -> Vec<u8> {
    host_context().approval_secret
}

fn call(tool: &str, args: Value, agent: Option<&str>, now_ms: u64) -> ToolCall {
    ToolCall {
        tool_name: tool.into(),
        arguments: args.to_string(),
        call_id: None,
        run_id: None,
        session_id: Some("s1".into()),
        now_ms,
        identity: Identity { agent_id: agent.map(Into::into), ..Identity::default() },
        cwd: None,
        derived_paths: Vec::new(),
    }
}

fn read(path: &str, now: u64) -> ToolCall {
    call("Read", json!({"file_path": path}), None, now)
}

fn fetch(url: &str, now: u64) -> ToolCall {
    call("WebFetch", json!({"url": url}), None, now)
}

/// Teaches the default agent `n` reads of files in /work/src, a minute apart.
fn learn_reads(w: &Warden, env: &Env, n: u64) -> u64 {
    let mut now = T0;
    for i in 0..n {
        now = T0 + i * 60_000;
        let v = w.check_tool_call(&env.ports(), &read(&format!("/work/src/f{i}.rs"), now));
        assert_eq!((v.decision, v.rule.as_str()), (Decision::Allow, "tools.allow"), "{v:?}");
    }
    now
}

fn signal<'a>(v: &'a Verdict, name: &str) -> Option<&'a crate::model::Signal> {
    v.signals.iter().find(|s| s.name == name)
}

#[test]
fn a_reader_that_suddenly_fetches_a_new_host_is_asked_when_enforcing() {
    let env = Env::new();
    let w = warden(json!({"enforce": true, "learningCalls": 10}));
    let now = learn_reads(&w, &env, 10);
    let v = w.check_tool_call(&env.ports(), &fetch("https://exfil.example/upload", now + 60_000));
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Ask, rules::NEW_HOST), "{v:?}");
    assert!(v.approval_key.is_some(), "a profile ask is approvable: {v:?}");
    assert!(signal(&v, rules::NEW_TOOL).is_some(), "the new tool is named too: {v:?}");
}

#[test]
fn a_reader_that_suddenly_fetches_a_new_host_is_only_a_signal_when_not_enforcing() {
    let env = Env::new();
    let w = warden(json!({"learningCalls": 10}));
    let now = learn_reads(&w, &env, 10);
    let v = w.check_tool_call(&env.ports(), &fetch("https://exfil.example/upload", now + 60_000));
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Allow, "tools.allow"), "{v:?}");
    assert!(signal(&v, rules::NEW_HOST).is_some(), "{v:?}");
}

#[test]
fn observe_mode_reports_the_ask_and_allows() {
    let env = Env::new();
    let w = warden(json!({"enforce": true, "mode": "observe", "learningCalls": 10}));
    let now = learn_reads(&w, &env, 10);
    let v = w.check_tool_call(&env.ports(), &fetch("https://exfil.example/upload", now + 60_000));
    assert_eq!((v.decision, v.observed, v.rule.as_str()), (Decision::Allow, Some(Decision::Ask), rules::NEW_HOST));
}

#[test]
fn a_call_inside_the_profile_is_allowed_after_learning() {
    let env = Env::new();
    let w = warden(json!({"enforce": true, "learningCalls": 10}));
    let now = learn_reads(&w, &env, 10);
    let v = w.check_tool_call(&env.ports(), &read("/work/src/other.rs", now + 60_000));
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Allow, "tools.allow"), "{v:?}");
    assert!(v.signals.iter().all(|s| !s.name.starts_with("profile.")), "{v:?}");
}

#[test]
fn nothing_is_reported_while_learning() {
    let env = Env::new();
    let w = warden(json!({"enforce": true, "learningCalls": 10}));
    let now = learn_reads(&w, &env, 9);
    let v = w.check_tool_call(&env.ports(), &fetch("https://exfil.example/upload", now + 60_000));
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Allow, "tools.allow"), "{v:?}");
    assert!(signal(&v, rules::NEW_HOST).is_none(), "{v:?}");
}

#[test]
fn learning_days_hold_enforcement_until_they_pass() {
    let env = Env::new();
    let w = warden(json!({"enforce": true, "learningCalls": 1, "learningDays": 2}));
    let now = learn_reads(&w, &env, 5);
    let v = w.check_tool_call(&env.ports(), &fetch("https://exfil.example/", now + DAY_MS));
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Allow, "tools.allow"), "{v:?}");
    let v = w.check_tool_call(&env.ports(), &fetch("https://other.example/", T0 + 2 * DAY_MS));
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Ask, rules::NEW_HOST), "{v:?}");
}

#[test]
fn a_refused_ask_is_asked_again_on_retry() {
    let env = Env::new();
    let w = warden(json!({"enforce": true, "learningCalls": 10}));
    let now = learn_reads(&w, &env, 10);
    for i in 1..=3 {
        let v = w.check_tool_call(&env.ports(), &fetch("https://exfil.example/upload", now + i * 60_000));
        assert_eq!((v.decision, v.rule.as_str()), (Decision::Ask, rules::NEW_HOST), "retry {i}: {v:?}");
    }
}

#[test]
fn the_same_host_in_another_spelling_is_the_same_host() {
    let env = Env::new();
    let w = warden(json!({"enforce": true, "learningCalls": 2}));
    for (i, url) in ["https://docs.example/a", "https://docs.example/b"].iter().enumerate() {
        let v = w.check_tool_call(&env.ports(), &fetch(url, T0 + i as u64));
        assert_eq!(v.decision, Decision::Allow, "{v:?}");
    }
    for url in ["HTTPS://DOCS.EXAMPLE./c", "https://user@docs.example:443/d", "https://docs.example?x"] {
        let v = w.check_tool_call(&env.ports(), &fetch(url, T0 + 10));
        assert_eq!((v.decision, v.rule.as_str()), (Decision::Allow, "tools.allow"), "{url}: {v:?}");
    }
    let v = w.check_tool_call(&env.ports(), &fetch("https://docs.example.evil/x", T0 + 20));
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Ask, rules::NEW_HOST), "{v:?}");
}

#[test]
fn a_host_hidden_in_a_nested_argument_is_still_a_host() {
    let env = Env::new();
    let w = warden(json!({"enforce": true, "learningCalls": 2}));
    learn_reads(&w, &env, 2);
    let c = call(
        "Read",
        json!({"file_path": "/work/src/a.rs", "meta": [{"src": "https://exfil.example/"}]}),
        None,
        T0 + DAY_MS,
    );
    let v = w.check_tool_call(&env.ports(), &c);
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Ask, rules::NEW_HOST), "{v:?}");
}

#[test]
fn a_new_folder_asks_and_a_known_one_does_not() {
    let env = Env::new();
    let w = warden(json!({"enforce": true, "learningCalls": 5}));
    let now = learn_reads(&w, &env, 5);
    let v = w.check_tool_call(&env.ports(), &read("/home/me/notes/plan.txt", now + 1));
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Ask, rules::NEW_PATH), "{v:?}");
    let v = w.check_tool_call(&env.ports(), &read("/work/src/../src/x.rs", now + 2));
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Allow, "tools.allow"), "{v:?}");
}

#[test]
fn a_new_tool_asks() {
    let env = Env::new();
    let w = warden(json!({"enforce": true, "learningCalls": 5}));
    let now = learn_reads(&w, &env, 5);
    let v = w.check_tool_call(&env.ports(), &call("Glob", json!({"pattern": "*"}), None, now + 1));
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Ask, rules::NEW_TOOL), "{v:?}");
}

#[test]
fn a_burst_far_past_the_learned_rate_asks() {
    let env = Env::new();
    let w = warden(json!({"enforce": true, "learningCalls": 4, "minRatePerHour": 2, "rateFactor": 2}));
    // Four calls, one per hour: the busiest hour had one.
    for i in 0..4 {
        let v = w.check_tool_call(&env.ports(), &read("/work/src/a.rs", T0 + i * HOUR_MS));
        assert_eq!(v.decision, Decision::Allow, "{v:?}");
    }
    let start = T0 + 5 * HOUR_MS;
    for i in 0..4 {
        let v = w.check_tool_call(&env.ports(), &read("/work/src/a.rs", start + i));
        assert_eq!((v.decision, v.rule.as_str()), (Decision::Allow, "tools.allow"), "call {i}: {v:?}");
    }
    let v = w.check_tool_call(&env.ports(), &read("/work/src/a.rs", start + 10));
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Ask, rules::RATE), "{v:?}");
}

#[test]
fn agents_have_their_own_profiles() {
    let env = Env::new();
    let w = warden(json!({"enforce": true, "learningCalls": 2}));
    for i in 0..2 {
        let v = w.check_tool_call(
            &env.ports(),
            &call("WebFetch", json!({"url": "https://a.example/"}), Some("web"), T0 + i),
        );
        assert_eq!(v.decision, Decision::Allow);
    }
    learn_reads(&w, &env, 2);
    let v =
        w.check_tool_call(&env.ports(), &call("WebFetch", json!({"url": "https://a.example/"}), Some("web"), T0 + 9));
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Allow, "tools.allow"), "{v:?}");
    let v = w.check_tool_call(&env.ports(), &fetch("https://a.example/", T0 + 9));
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Ask, rules::NEW_HOST), "{v:?}");
}

#[test]
fn an_unreadable_profile_is_a_signal_and_decides_nothing() {
    let env = Env::new();
    let w = warden(json!({"enforce": true, "learningCalls": 1}));
    learn_reads(&w, &env, 1);
    env.storage.fail_with(StorageError::Unavailable("down".into()));
    let p = env.ports();
    let mut signals = Vec::new();
    let c = fetch("https://exfil.example/", T0 + 5);
    let v = judge_step(
        &w.config().profile,
        &p,
        &crate::digest::MacKey::new(b"k"),
        &c,
        None,
        &json!({}),
        &mut signals,
        |_| None,
    );
    assert!(v.is_none());
    assert_eq!(signals.first().map(|s| s.name.as_str()), Some(rules::UNAVAILABLE));
}

#[test]
fn the_host_list_is_bounded_at_max_hosts_oldest_first() {
    let env = Env::new();
    let w = warden(json!({"learningCalls": 1, "maxHosts": 3}));
    for i in 0..3u64 {
        w.check_tool_call(&env.ports(), &fetch(&format!("https://h{i}.example/"), T0 + i));
    }
    let key = agent_key(&crate::digest::MacKey::new(&secret()), None);
    let at = |env: &Env| crate::store::get_json::<Profile>(&env.storage, NAMESPACE, &key).unwrap().unwrap().0;
    assert_eq!(at(&env).hosts.len(), 3, "exactly at the bound");
    w.check_tool_call(&env.ports(), &fetch("https://h3.example/", T0 + 3));
    let p = at(&env);
    assert_eq!(p.hosts.len(), 3, "past the bound the least recently seen goes");
    let v = w.check_tool_call(&env.ports(), &fetch("https://h0.example/", T0 + 4));
    assert!(signal(&v, rules::NEW_HOST).is_some(), "h0 was forgotten: {v:?}");
}

#[test]
fn items_older_than_the_window_are_forgotten() {
    let env = Env::new();
    let w = warden(json!({"learningCalls": 1, "windowDays": 1}));
    w.check_tool_call(&env.ports(), &fetch("https://a.example/", T0));
    let v = w.check_tool_call(&env.ports(), &fetch("https://a.example/", T0 + DAY_MS - 1));
    assert!(signal(&v, rules::NEW_HOST).is_none(), "{v:?}");
    let v = w.check_tool_call(&env.ports(), &fetch("https://a.example/", T0 + 3 * DAY_MS));
    assert!(signal(&v, rules::NEW_HOST).is_some(), "{v:?}");
}

#[test]
fn nothing_is_stored_in_clear() {
    let env = Env::new();
    let w = warden(json!({"learningCalls": 1}));
    w.check_tool_call(&env.ports(), &fetch("https://secret-host.example/private/path", T0));
    w.check_tool_call(&env.ports(), &read("/home/alice/diary/today.txt", T0 + 1));
    for (_, _, value) in env.storage.dump() {
        let text = String::from_utf8_lossy(&value);
        for clear in ["secret-host", "alice", "diary", "WebFetch"] {
            assert!(!text.contains(clear), "`{clear}` stored in clear: {text}");
        }
    }
}

#[test]
fn show_counts_and_reset_clears_one_or_all() {
    let env = Env::new();
    let w = warden(json!({"learningCalls": 2}));
    learn_reads(&w, &env, 3);
    w.check_tool_call(&env.ports(), &call("WebFetch", json!({"url": "https://a.example/"}), Some("web"), T0));
    let shown = w.profile_show(&env.ports(), None, T0).unwrap();
    let names: Vec<&str> = shown.iter().map(|s| s.agent.as_str()).collect();
    assert_eq!(names, ["default", "web"], "every profile, by name");
    let s = &w.profile_show(&env.ports(), Some("default"), T0).unwrap()[0];
    assert_eq!((s.agent.as_str(), s.calls, s.tools, s.paths, s.learning), ("default", 3, 1, 1, false));
    assert_eq!(w.profile_reset(&env.ports(), Some("default")).unwrap(), 1);
    assert!(w.profile_show(&env.ports(), Some("default"), T0).unwrap().is_empty());
    assert_eq!(w.profile_reset(&env.ports(), Some("default")).unwrap(), 0);
    assert_eq!(w.profile_show(&env.ports(), Some("web"), T0).unwrap().len(), 1);
    assert_eq!(w.profile_reset(&env.ports(), None).unwrap(), 1);
    assert!(w.profile_show(&env.ports(), None, T0).unwrap().is_empty());
}

#[test]
fn without_the_section_no_profile_is_read_or_written() {
    let env = Env::new();
    let mut w = Warden::configure(&json!({"tools": {}}).to_string()).unwrap();
    let host =
        crate::host::HostContext { approval_secret: vec![7; crate::host::MIN_SECRET_BYTES], ..Default::default() };
    w.set_host_context(&host).unwrap();
    w.check_tool_call(&env.ports(), &fetch("https://a.example/", T0));
    assert!(env.storage.dump().iter().all(|(ns, _, _)| ns != NAMESPACE));
}

#[test]
fn bad_settings_are_refused_with_their_path() {
    for (profile, path) in [
        (json!({"learningCalls": 0}), "profile.learningCalls"),
        (json!({"maxHosts": config::MAX_ITEMS + 1}), "profile.maxHosts"),
        (json!({"windowDays": config::MAX_WINDOW_DAYS + 1}), "profile.windowDays"),
        (json!({"enforce": "yes"}), "profile.enforce"),
        (json!({"unknown": 1}), "profile.unknown"),
    ] {
        let Err(errors) = Warden::configure(&json!({"profile": profile}).to_string()) else { panic!("{path} refused") };
        assert!(errors.iter().any(|e| e.path == path), "{path}: {errors:?}");
    }
    let ok = json!({"profile": {"maxHosts": config::MAX_ITEMS, "windowDays": config::MAX_WINDOW_DAYS}});
    assert!(Warden::configure(&ok.to_string()).is_ok(), "exactly at the bounds");
}

#[test]
fn path_prefixes_keep_three_folders() {
    assert_eq!(path_prefix("/home/a/src/x/y.rs"), "/home/a/src");
    assert_eq!(path_prefix("/etc/passwd"), "/etc");
    assert_eq!(path_prefix("/home/a/../../etc/shadow"), "/etc");
}

/// Storage where, just before the first profile write, another session's
/// calls land in the same profile.
struct Interleaved {
    inner: crate::fakes::MemoryStorage,
    others: core::cell::Cell<u64>,
}

impl Storage for Interleaved {
    fn get(&self, ns: &str, key: &str) -> Result<Option<crate::ports::Entry>, StorageError> {
        self.inner.get(ns, key)
    }
    fn set(&self, ns: &str, key: &str, value: &[u8], when: crate::ports::Condition) -> Result<u64, StorageError> {
        let others = self.others.replace(0);
        if ns == NAMESPACE && others > 0 {
            let mut theirs: Profile = serde_json::from_slice(&self.inner.get(ns, key)?.unwrap().value).unwrap();
            theirs.calls += others;
            self.inner.set(ns, key, &serde_json::to_vec(&theirs).unwrap(), crate::ports::Condition::Any)?;
        }
        self.inner.set(ns, key, value, when)
    }
    fn delete(&self, ns: &str, key: &str, when: crate::ports::Condition) -> Result<bool, StorageError> {
        self.inner.delete(ns, key, when)
    }
    fn list(
        &self,
        ns: &str,
        prefix: &str,
        limit: u32,
        reverse: bool,
    ) -> Result<Vec<(String, crate::ports::Entry)>, StorageError> {
        self.inner.list(ns, prefix, limit, reverse)
    }
    fn commit(&self, writes: &[crate::ports::Write]) -> Result<(), crate::ports::BatchError> {
        self.inner.commit(writes)
    }
}

#[test]
fn a_call_that_loses_a_write_race_is_recorded_into_the_newer_profile() {
    let env = Env::new();
    let storage = Interleaved { inner: crate::fakes::MemoryStorage::default(), others: core::cell::Cell::new(0) };
    let ports = crate::ports::Ports { http: &env.http, storage: &storage, log: &env.log };
    let w = warden(json!({"learningCalls": 1}));
    w.check_tool_call(&ports, &read("/work/src/a.rs", T0));
    storage.others.set(100);
    let v = w.check_tool_call(&ports, &read("/work/src/b.rs", T0 + 1));
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Allow, "tools.allow"), "{v:?}");
    assert!(signal(&v, rules::UNAVAILABLE).is_none(), "a conflict is retried, not reported: {v:?}");
    let shown = w.profile_show(&ports, Some("default"), T0 + 2).unwrap();
    assert_eq!(shown[0].calls, 102, "1 + the other session's 100 + this call");
}

#[test]
fn a_new_host_inside_a_shell_command_is_a_new_host() {
    let env = Env::new();
    let w = warden(json!({"enforce": true, "learningCalls": 1}));
    let sh = |cmd: &str, now| call("Bash", json!({"command": cmd}), None, now);
    let v = w.check_tool_call(&env.ports(), &sh("curl -s https://api.known.example/v1/status", T0));
    assert_eq!(v.rule, "tools.allow", "{v:?}");
    let v = w.check_tool_call(&env.ports(), &sh("curl -s https://api.known.example/v1/items", T0 + 1));
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Allow, "tools.allow"), "{v:?}");
    let v = w.check_tool_call(&env.ports(), &sh("curl -s https://collector.elsewhere.example/u", T0 + 2));
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Ask, rules::NEW_HOST), "{v:?}");
}

#[test]
fn an_unavailable_store_leaves_the_judges_decision_and_says_so() {
    let env = Env::new();
    let w = warden(json!({"enforce": true, "learningCalls": 1}));
    learn_reads(&w, &env, 2);
    env.storage.fail_with(StorageError::Unavailable("down".into()));
    let v = w.check_tool_call(&env.ports(), &fetch("https://never-seen.example/", T0 + 5));
    assert_ne!(v.rule, rules::NEW_HOST, "fail-open: the profile decides nothing: {v:?}");
}

#[test]
fn a_call_a_person_approved_joins_the_profile_so_other_sessions_are_not_asked() {
    let env = Env::new();
    let w = warden(json!({"enforce": true, "learningCalls": 1}));
    learn_reads(&w, &env, 2);
    let asked = w.check_tool_call(&env.ports(), &fetch("https://docs.example/a", T0 + 10));
    assert_eq!((asked.decision, asked.rule.as_str()), (Decision::Ask, rules::NEW_HOST), "{asked:?}");
    let approval = crate::model::Approval {
        key: asked.approval_key.clone().expect("an ask carries a key"),
        allow: true,
        scope: crate::model::Scope::Session,
        session_id: Some("s1".into()),
        call_id: None,
        now_ms: T0 + 11,
        idempotency_key: None,
    };
    w.record_approval(&env.ports(), &approval).expect("recorded");
    let v = w.check_tool_call(&env.ports(), &fetch("https://docs.example/a", T0 + 12));
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Allow, "memory.allow"), "{v:?}");
    let mut other = fetch("https://docs.example/b", T0 + 13);
    other.session_id = Some("s2".into());
    let v = w.check_tool_call(&env.ports(), &other);
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Allow, "tools.allow"), "the host is known now: {v:?}");
}
