//! `tools.fetch`: host allow and deny lists for fetch tools.

use super::fetch::{self, HostGlob, url_host};
use super::*;
use crate::Warden;
use crate::config::Config;
use crate::fakes::{MemoryStorage, ScriptedHttp, VecLog};
use crate::model::{Decision, Identity};
use serde_json::json;
use std::string::ToString;

struct Env {
    storage: MemoryStorage,
    http: ScriptedHttp,
    log: VecLog,
}

impl Env {
    fn new() -> Env {
        Env { storage: MemoryStorage::default(), http: ScriptedHttp::unreachable(), log: VecLog::default() }
    }

    fn ports(&self) -> Ports<'_> {
        Ports { http: &self.http, storage: &self.storage, log: &self.log }
    }
}

fn warden(tools: Value) -> Warden {
    let mut w = Warden::configure(&json!({ "tools": tools }).to_string()).expect("valid config");
    let host = crate::host::HostContext {
        approval_secret: vec![7; crate::host::MIN_SECRET_BYTES],
        databases: Vec::new(),
        protected_paths: Vec::new(),
        admin_programs: Vec::new(),
    };
    w.set_host_context(&host).expect("valid host context");
    w
}

fn fetch_call(tool: &str, args: Value) -> ToolCall {
    ToolCall {
        tool_name: tool.into(),
        arguments: args.to_string(),
        call_id: None,
        run_id: None,
        session_id: Some("s1".into()),
        now_ms: 1_700_000_000_000,
        identity: Identity::default(),
        cwd: Some("/ws".into()),
        derived_paths: Vec::new(),
    }
}

fn web(url: &str) -> ToolCall {
    fetch_call("WebFetch", json!({ "url": url, "prompt": "p" }))
}

fn decided(v: &Verdict) -> (Decision, &str) {
    (v.decision, v.rule.as_str())
}

fn listed() -> Value {
    json!({"fetch": {"allowHosts": ["allowed.com", "*.docs.rs", "127.0.0.1"], "denyHosts": ["evil.com", "*.evil.com"]}})
}

#[test]
fn allow_listed_hosts_are_fetched_without_asking_and_denied_ones_are_refused() {
    let w = warden(listed());
    let env = Env::new();
    let cases: &[(&str, Decision, &str)] = &[
        ("https://allowed.com/page", Decision::Allow, rules::ALLOW),
        ("https://api.docs.rs/x", Decision::Allow, rules::ALLOW),
        ("https://a.b.docs.rs/x", Decision::Allow, rules::ALLOW),
        // `*.docs.rs` is the hosts under it, not the name itself.
        ("https://docs.rs/", Decision::Ask, rules::FETCH_UNLISTED_HOST),
        ("https://notdocs.rs/", Decision::Ask, rules::FETCH_UNLISTED_HOST),
        ("https://evil.com/", Decision::Deny, rules::FETCH_DENIED_HOST),
        ("https://cdn.evil.com/", Decision::Deny, rules::FETCH_DENIED_HOST),
        ("https://other.org/", Decision::Ask, rules::FETCH_UNLISTED_HOST),
    ];
    for (url, decision, rule) in cases {
        let v = w.check_tool_call(&env.ports(), &web(url));
        assert_eq!(decided(&v), (*decision, *rule), "{url}: {}", v.reason);
    }
}

#[test]
fn the_deny_list_wins_over_the_allow_list() {
    let w = warden(json!({"fetch": {"allowHosts": ["*.example.com"], "denyHosts": ["bad.example.com"]}}));
    let env = Env::new();
    let v = w.check_tool_call(&env.ports(), &web("https://bad.example.com/"));
    assert_eq!(decided(&v), (Decision::Deny, rules::FETCH_DENIED_HOST));
    let v = w.check_tool_call(&env.ports(), &web("https://good.example.com/"));
    assert_eq!(decided(&v), (Decision::Allow, rules::ALLOW));
    // One denied URL among allowed ones denies the call.
    let v = w.check_tool_call(
        &env.ports(),
        &fetch_call("mcp__web__fetch", json!({"urls": ["https://good.example.com", "https://bad.example.com"]})),
    );
    assert_eq!(decided(&v), (Decision::Deny, rules::FETCH_DENIED_HOST));
}

#[test]
fn spoofed_hosts_are_read_as_the_host_they_reach() {
    let w = warden(listed());
    let env = Env::new();
    let cases: &[(&str, Decision, &str)] = &[
        // Userinfo is not the host.
        ("https://allowed.com@evil.com/", Decision::Deny, rules::FETCH_DENIED_HOST),
        ("http://allowed.com:443@evil.com/", Decision::Deny, rules::FETCH_DENIED_HOST),
        ("https://user:pw@allowed.com/", Decision::Allow, rules::ALLOW),
        // A longer name that starts like an allowed one.
        ("https://allowed.com.evil.com/", Decision::Deny, rules::FETCH_DENIED_HOST),
        ("https://allowed.com.attacker.net/", Decision::Ask, rules::FETCH_UNLISTED_HOST),
        // The allowed name only in the query or the path.
        ("https://evil.com/?u=allowed.com", Decision::Deny, rules::FETCH_DENIED_HOST),
        ("https://other.org/allowed.com", Decision::Ask, rules::FETCH_UNLISTED_HOST),
        ("https://other.org#@allowed.com", Decision::Ask, rules::FETCH_UNLISTED_HOST),
        // Case, trailing dots and ports change nothing.
        ("HTTPS://ALLOWED.COM./x", Decision::Allow, rules::ALLOW),
        ("https://allowed.com:8443/x", Decision::Allow, rules::ALLOW),
        ("https://EVIL.COM.:443/", Decision::Deny, rules::FETCH_DENIED_HOST),
        // Percent-escapes and full-width forms are the letters they stand for.
        ("https://%65vil.com/", Decision::Deny, rules::FETCH_DENIED_HOST),
        ("https://evil\u{3002}com/", Decision::Deny, rules::FETCH_DENIED_HOST),
        ("https://\u{FF45}vil.com/", Decision::Deny, rules::FETCH_DENIED_HOST),
        // A look-alike in another script is not the allowed name.
        ("https://\u{0430}llowed.com/", Decision::Ask, rules::FETCH_UNLISTED_HOST),
        ("https://xn--llowed-2nf.com/", Decision::Ask, rules::FETCH_UNLISTED_HOST),
        // Scheme-relative, scheme-less and slash-less URLs reach the same host.
        ("//evil.com/x", Decision::Deny, rules::FETCH_DENIED_HOST),
        ("evil.com/x", Decision::Deny, rules::FETCH_DENIED_HOST),
        ("https:evil.com", Decision::Deny, rules::FETCH_DENIED_HOST),
        ("https:///evil.com", Decision::Deny, rules::FETCH_DENIED_HOST),
        ("  https://evil.com/ ", Decision::Deny, rules::FETCH_DENIED_HOST),
        ("https://ev\til.com/", Decision::Deny, rules::FETCH_DENIED_HOST),
        // Numeric forms of an allowed address.
        ("http://2130706433/", Decision::Allow, rules::ALLOW),
        ("http://0x7f.1/", Decision::Allow, rules::ALLOW),
        ("http://0177.0.0.1/", Decision::Allow, rules::ALLOW),
        ("http://127.1/", Decision::Allow, rules::ALLOW),
        ("http://2130706434/", Decision::Ask, rules::FETCH_UNLISTED_HOST),
        // No web host, or one parsers disagree on: never allow-listed.
        ("file:///etc/passwd", Decision::Ask, rules::FETCH_UNLISTED_HOST),
        ("file://allowed.com/etc/passwd", Decision::Ask, rules::FETCH_UNLISTED_HOST),
        ("data:text/html,hi", Decision::Ask, rules::FETCH_UNLISTED_HOST),
        ("https://allowed.com\\@evil.com/", Decision::Ask, rules::FETCH_UNLISTED_HOST),
        ("https://allowed.com%2f@evil.com/", Decision::Deny, rules::FETCH_DENIED_HOST),
        ("https://allowed.com%40evil.com/", Decision::Ask, rules::FETCH_UNLISTED_HOST),
        ("https://allowed..com/", Decision::Ask, rules::FETCH_UNLISTED_HOST),
        ("https://allowed.com:80x/", Decision::Ask, rules::FETCH_UNLISTED_HOST),
        ("https://1.2.3.999/", Decision::Ask, rules::FETCH_UNLISTED_HOST),
        ("https:///", Decision::Ask, rules::FETCH_UNLISTED_HOST),
    ];
    for (url, decision, rule) in cases {
        let v = w.check_tool_call(&env.ports(), &web(url));
        assert_eq!(decided(&v), (*decision, *rule), "{url:?}: {}", v.reason);
    }
}

#[test]
fn hosts_are_normalized_as_a_browser_reaches_them() {
    let cases: &[(&str, Result<&str, ()>)] = &[
        ("https://Allowed.COM./a", Ok("allowed.com")),
        ("https://a@b@allowed.com", Ok("allowed.com")),
        ("http://[::1]:8080/", Ok("[::1]")),
        ("http://0x7f000001/", Ok("127.0.0.1")),
        ("http://10.0.258/", Ok("10.0.1.2")),
        ("http://256.1.1.1/", Err(())),
        ("http://4294967296/", Err(())),
        ("http://[::1/", Err(())),
        ("mailto:bob@allowed.com", Err(())),
    ];
    for (url, expected) in cases {
        assert_eq!(url_host(url).map_err(|_| ()).as_deref(), expected.as_deref().map_err(|_| &()), "{url}");
    }
}

#[test]
fn unlisted_hosts_decide_as_configured_and_replace_the_fetch_ask() {
    let env = Env::new();
    for (unlisted, decision) in [("allow", Decision::Allow), ("ask", Decision::Ask), ("deny", Decision::Deny)] {
        let w = warden(json!({"fetch": {"allowHosts": ["allowed.com"], "unlisted": unlisted}}));
        let v = w.check_tool_call(&env.ports(), &web("https://other.org/"));
        let rule = if decision == Decision::Allow { rules::ALLOW } else { rules::FETCH_UNLISTED_HOST };
        assert_eq!(decided(&v), (decision, rule), "{unlisted}: {}", v.reason);
        // The blanket ask of fetch tools is never what decides.
        assert!(v.signals.iter().all(|s| s.name != rules::ASK_KIND), "{:?}", v.signals);
    }
    // `tools.rules` still sets its risk and scope.
    let w = warden(json!({"fetch": {}, "rules": {"fetch.unlisted-host": {"risk": "high", "scope": "once"}}}));
    let v = w.check_tool_call(&env.ports(), &web("https://other.org/"));
    assert_eq!(decided(&v), (Decision::Ask, rules::FETCH_UNLISTED_HOST));
    assert_eq!((v.risk, v.scope), (Risk::High, Some(crate::model::Scope::Once)));
    // Without `tools.fetch` every fetch is asked for its kind, as before.
    let w = warden(json!({}));
    let v = w.check_tool_call(&env.ports(), &web("https://allowed.com/"));
    assert_eq!(decided(&v), (Decision::Ask, rules::ASK_KIND));
    // A fetch tool that names no URL (a search) is unlisted.
    let w = warden(listed());
    let v = w.check_tool_call(&env.ports(), &fetch_call("WebSearch", json!({"query": "allowed.com"})));
    assert_eq!(decided(&v), (Decision::Ask, rules::FETCH_UNLISTED_HOST));
    // `askTools` still asks an allow-listed fetch by name.
    let w = warden(json!({"fetch": {"allowHosts": ["allowed.com"]}, "askTools": ["WebFetch"]}));
    let v = w.check_tool_call(&env.ports(), &web("https://allowed.com/"));
    assert_eq!(decided(&v), (Decision::Ask, rules::ASK_TOOL));
}

#[test]
fn a_call_with_more_urls_than_are_read_is_not_allow_listed() {
    let w = warden(listed());
    let env = Env::new();
    let at: Vec<String> = (0..fetch::MAX_URLS).map(|i| format!("https://allowed.com/{i}")).collect();
    let v = w.check_tool_call(&env.ports(), &fetch_call("mcp__web__fetch", json!({ "urls": at })));
    assert_eq!(decided(&v), (Decision::Allow, rules::ALLOW), "{}", v.reason);
    let past: Vec<String> = (0..=fetch::MAX_URLS).map(|i| format!("https://allowed.com/{i}")).collect();
    let v = w.check_tool_call(&env.ports(), &fetch_call("mcp__web__fetch", json!({ "urls": past })));
    assert_eq!(decided(&v), (Decision::Ask, rules::FETCH_UNLISTED_HOST), "{}", v.reason);
}

#[test]
fn hosts_the_person_named_count_as_allow_listed_but_never_over_the_deny_list() {
    let config = fetch::FetchConfig {
        allow_hosts: Vec::new(),
        deny_hosts: vec![HostGlob::new("evil.com").expect("glob")],
        unlisted: fetch::Unlisted::Ask,
    };
    let fields = ["url".to_string()];
    let named = |h: &str| h == "named.org" || h == "evil.com";
    let out = fetch::check(&config, &fields, &json!({"url": "https://NAMED.org/x"}), &named);
    assert_eq!(out, fetch::Outcome::Allowed);
    let out = fetch::check(&config, &fields, &json!({"url": "https://evil.com/"}), &named);
    assert!(matches!(out, fetch::Outcome::Finding(ref f) if f.rule == rules::FETCH_DENIED_HOST), "{out:?}");
    let out = fetch::check(&config, &fields, &json!({"url": "https://other.org/"}), &|_| false);
    assert!(matches!(out, fetch::Outcome::Finding(ref f) if f.rule == rules::FETCH_UNLISTED_HOST), "{out:?}");
}

#[test]
fn observe_mode_answers_allow_with_the_fetch_decision_it_would_make() {
    let w = warden(json!({"mode": "observe", "fetch": {"denyHosts": ["evil.com"]}}));
    let env = Env::new();
    let v = w.check_tool_call(&env.ports(), &web("https://evil.com/"));
    assert_eq!(
        (v.decision, v.rule.as_str(), v.observed),
        (Decision::Allow, rules::FETCH_DENIED_HOST, Some(Decision::Deny))
    );
}

fn errors(tools: Value) -> Vec<std::string::String> {
    match Config::parse(&json!({ "tools": tools }).to_string()) {
        Ok(_) => Vec::new(),
        Err(errors) => errors.iter().map(ToString::to_string).collect(),
    }
}

#[test]
fn fetch_settings_are_checked_with_their_field_paths() {
    let hosts = |n: usize| Value::Array((0..n).map(|i| json!(format!("h{i}.example.com"))).collect());
    let long = format!("{}.com", "a".repeat(fetch::MAX_HOST_CHARS - 4));
    let too_long = format!("{}.com", "a".repeat(fetch::MAX_HOST_CHARS - 3));
    let cases = [
        (
            json!({"allowHosts": hosts(fetch::MAX_HOSTS)}),
            json!({"allowHosts": hosts(fetch::MAX_HOSTS + 1)}),
            "tools.fetch.allowHosts",
        ),
        (json!({"denyHosts": [long]}), json!({"denyHosts": [too_long]}), "tools.fetch.denyHosts[0]"),
        (json!({"allowHosts": ["*.example.com"]}), json!({"allowHosts": ["ex*mple.com"]}), "tools.fetch.allowHosts[0]"),
        (json!({"allowHosts": ["docs.rs"]}), json!({"allowHosts": ["https://docs.rs/"]}), "tools.fetch.allowHosts[0]"),
        (
            json!({"allowHosts": ["xn--bcher-kva.de"]}),
            json!({"allowHosts": ["bücher.de"]}),
            "tools.fetch.allowHosts[0]",
        ),
        (json!({"denyHosts": ["10.0.0.1"]}), json!({"denyHosts": ["*.10.0.0.1"]}), "tools.fetch.denyHosts[0]"),
        (json!({"denyHosts": ["a.com"]}), json!({"denyHosts": ["a.com", "A.COM."]}), "tools.fetch.denyHosts[1]"),
        (json!({"unlisted": "deny"}), json!({"unlisted": "maybe"}), "tools.fetch.unlisted"),
        (json!({}), json!({"allowHost": []}), "tools.fetch.allowHost"),
        (json!({"allowHosts": []}), json!({"allowHosts": "docs.rs"}), "tools.fetch.allowHosts"),
    ];
    for (good, bad, path) in cases {
        assert_eq!(errors(json!({ "fetch": good })), Vec::<std::string::String>::new(), "{good}");
        let found = errors(json!({ "fetch": bad }));
        assert!(found.iter().any(|e| e.starts_with(&format!("{path}:"))), "{bad} gave {found:?}");
    }
    let found = errors(json!({"fetch": {"allowHosts": ["bücher.de"]}}));
    assert!(found.iter().any(|e| e.contains("`bücher.de`") && e.contains("xn--")), "{found:?}");
    // The decision of unlisted hosts has one place.
    let found = errors(json!({"fetch": {}, "rules": {"fetch.unlisted-host": {"decision": "deny"}}}));
    assert!(found.iter().any(|e| e.starts_with("tools.rules.fetch.unlisted-host.decision:")), "{found:?}");
}
