//! `tools.fetch`: host allow and deny lists for fetch tools.

use super::fetch::{self, HostGlob, url_host};
use super::*;
use crate::Warden;
use crate::config::Config;
use crate::model::{Decision, Identity};
use crate::test_support::Env;
use serde_json::json;
use std::string::ToString;

fn warden(tools: Value) -> Warden {
    crate::test_support::configured(&json!({ "tools": tools }).to_string())
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
    // Labels of 63 characters, the longest a label can be, up to the longest host.
    let label = "a".repeat(63);
    let long = format!("{label}.{label}.{label}.{}.com", "a".repeat(fetch::MAX_HOST_CHARS - 3 * 64 - 4));
    let too_long = format!("{label}.{label}.{label}.{}.com", "a".repeat(fetch::MAX_HOST_CHARS - 3 * 64 - 3));
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

/// Lists with internationalized and numeric entries, everything else allowed:
/// the configuration a walk around the deny list would have to beat.
fn deny_listed(unlisted: &str) -> Value {
    json!({"fetch": {
        "allowHosts": ["allowed.com", "xn--mnchen-3ya.de"],
        "denyHosts": ["evil.com", "*.evil.com", "xn--bcher-kva.de", "10.0.0.1", "[::1]"],
        "unlisted": unlisted,
    }})
}

#[test]
fn a_denied_host_written_in_unicode_percent_escapes_or_another_ip_form_is_still_denied() {
    let w = warden(deny_listed("allow"));
    let env = Env::new();
    let denied = [
        // The internationalized entry, in Unicode, in capitals, escaped, with trailing or ideographic dots.
        "https://bücher.de/",
        "https://BÜCHER.DE/",
        "https://b%C3%BCcher.de/",
        "https://b%c3%bccher.de/",
        "https://bücher.de./",
        "https://xn--bcher-kva.de./",
        "https://XN--BCHER-KVA.DE/",
        "https://bücher\u{3002}de/",
        "https://bücher\u{ff0e}de/",
        // An ASCII entry spelled with escapes, compatibility forms and invisible characters.
        "https://%65%76%69%6c.com/",
        "https://evil.com%2e/",
        "https://evil%2ecom/",
        "https://\u{ff45}\u{ff56}\u{ff49}\u{ff4c}\u{ff0e}\u{ff43}\u{ff4f}\u{ff4d}/",
        "https://\u{1d41e}\u{1d42f}\u{1d422}\u{1d425}.com/",
        "https://\u{24d4}\u{24e5}\u{24d8}\u{24db}.com/",
        "https://ev\u{200b}il.com/",
        "https://ev\u{ad}il.com/",
        "https://e%E2%80%8Bvil.com/",
        "https://api.\u{ff45}vil.com/",
        "https://b\u{fc}cher.evil.com/",
        // The IPv4 entry in every form a URL parser reads as that address.
        "http://10.0.0.1/",
        "http://10.0.0.1./",
        "http://167772161/",
        "http://0xa000001/",
        "http://0XA000001/",
        "http://0xA.0.0.1/",
        "http://012.0.0.1/",
        "http://10.1/",
        "http://10.0.1/",
        "http://10%2e0.0.1/",
        "http://\u{ff11}\u{ff10}.\u{ff10}.\u{ff10}.\u{ff11}/",
        "http://[::ffff:10.0.0.1]/",
        "http://[::ffff:a00:1]/",
        "http://[0:0:0:0:0:ffff:a00:1]:8080/",
        // The IPv6 entry in its long forms.
        "http://[0:0:0:0:0:0:0:1]/",
        "http://[::0001]/",
        "http://user@[::1]:80/",
    ];
    for url in denied {
        let v = w.check_tool_call(&env.ports(), &web(url));
        assert_eq!(decided(&v), (Decision::Deny, rules::FETCH_DENIED_HOST), "{url:?}: {}", v.reason);
    }
}

#[test]
fn a_unicode_or_unreadable_host_is_asked_for_even_with_unlisted_allow_while_a_deny_list_is_set() {
    let w = warden(deny_listed("allow"));
    let env = Env::new();
    let asked = [
        // A decomposed accent: NFC makes it `bücher.de`, which the fold does not compose.
        "https://bu\u{308}cher.de/",
        // A small roman numeral fifty, which NFKC makes `l`.
        "https://evi\u{217c}.com/",
        // A ligature, which NFKC makes `fi`.
        "https://\u{fb01}le.example/",
        // Hosts with no one reading: empty labels, a double escape, a broken escape.
        "https://evil.com../",
        "https://evil..com/",
        "https://%2565vil.com/",
        "https://evil.co%m/",
        "https://-evil.com/",
        "http://10.0.0.256/",
        "http://09.0.0.1/",
        "http://4294967296/",
    ];
    for url in asked {
        let v = w.check_tool_call(&env.ports(), &web(url));
        assert_eq!(decided(&v), (Decision::Ask, rules::FETCH_UNCHECKED_HOST), "{url:?}: {}", v.reason);
        assert!(v.reason.contains("denyHosts"), "{url:?}: {}", v.reason);
    }
    // Readable ASCII hosts on neither list are what `unlisted: allow` lets through.
    for url in ["https://other.org/", "https://xn--pple-43d.com/", "http://10.0.0.2/"] {
        let v = w.check_tool_call(&env.ports(), &web(url));
        assert_eq!(decided(&v), (Decision::Allow, rules::ALLOW), "{url:?}: {}", v.reason);
    }
    // Without a deny list there is nothing to walk around.
    let open = warden(json!({"fetch": {"unlisted": "allow"}}));
    let v = open.check_tool_call(&env.ports(), &web("https://bu\u{308}cher.de/"));
    assert_eq!(decided(&v), (Decision::Allow, rules::ALLOW), "{}", v.reason);
    // With `unlisted: ask` or `deny` they decide as any unlisted host.
    for (unlisted, decision) in [("ask", Decision::Ask), ("deny", Decision::Deny)] {
        let w = warden(deny_listed(unlisted));
        let v = w.check_tool_call(&env.ports(), &web("https://evi\u{217c}.com/"));
        assert_eq!(decided(&v), (decision, rules::FETCH_UNLISTED_HOST), "{unlisted}: {}", v.reason);
    }
}

#[test]
fn a_denied_host_hidden_past_the_urls_that_are_read_is_asked_for_with_unlisted_allow() {
    let w = warden(deny_listed("allow"));
    let env = Env::new();
    let mut at: Vec<String> = (1..fetch::MAX_URLS).map(|i| format!("https://other.org/{i}")).collect();
    at.push("https://evil.com/".into());
    let v = w.check_tool_call(&env.ports(), &fetch_call("mcp__web__fetch", json!({ "urls": at })));
    assert_eq!(decided(&v), (Decision::Deny, rules::FETCH_DENIED_HOST), "{}", v.reason);
    let mut past: Vec<String> = (0..fetch::MAX_URLS).map(|i| format!("https://other.org/{i}")).collect();
    past.push("https://evil.com/".into());
    let v = w.check_tool_call(&env.ports(), &fetch_call("mcp__web__fetch", json!({ "urls": past })));
    assert_eq!(decided(&v), (Decision::Ask, rules::FETCH_UNCHECKED_HOST), "{}", v.reason);
}

#[test]
fn an_allow_listed_internationalized_host_matches_in_unicode_but_a_look_alike_does_not() {
    let w = warden(deny_listed("ask"));
    let env = Env::new();
    for url in ["https://münchen.de/", "https://MÜNCHEN.de./", "https://m%C3%BCnchen.de/", "https://xn--mnchen-3ya.de/"]
    {
        let v = w.check_tool_call(&env.ports(), &web(url));
        assert_eq!(decided(&v), (Decision::Allow, rules::ALLOW), "{url:?}: {}", v.reason);
    }
    // Another script's look-alike, a decomposed accent, and the ASCII name without the accent are other hosts.
    for url in [
        "https://m\u{1d66}nchen.de/",
        "https://mu\u{308}nchen.de/",
        "https://munchen.de/",
        "https://\u{0430}llowed.com/",
    ] {
        let v = w.check_tool_call(&env.ports(), &web(url));
        assert_eq!(decided(&v), (Decision::Ask, rules::FETCH_UNLISTED_HOST), "{url:?}: {}", v.reason);
    }
}

#[test]
fn a_fetch_and_the_flow_step_write_one_host_in_one_form() {
    let urls = [
        "https://Bücher.de/x",
        "https://xn--bcher-kva.de/x",
        "https://\u{ff45}vil.com/",
        "https://ev\u{200b}il.com/",
        "http://[::ffff:10.0.0.1]/",
        "http://[0:0::1]/",
        "http://0x7f.1/",
        "https://EXAMPLE.com./",
        "https://пример.испытание/",
    ];
    for url in urls {
        let fetched = url_host(url).expect("a host");
        let read = crate::flow::extract::link_hosts(url, 8);
        assert_eq!(read, vec![fetched.clone()], "{url:?}");
    }
    assert_eq!(url_host("http://[::ffff:10.0.0.1]/").as_deref(), Ok("10.0.0.1"));
    assert_eq!(url_host("https://Bücher.de/").as_deref(), Ok("xn--bcher-kva.de"));
}

#[test]
fn a_host_is_read_up_to_the_longest_name_and_label_and_no_further() {
    let label = "a".repeat(63);
    let longest = format!("{label}.{label}.{label}.{}", "b".repeat(fetch::MAX_HOST_CHARS - 3 * 64));
    assert_eq!(longest.len(), fetch::MAX_HOST_CHARS);
    assert_eq!(url_host(&format!("https://{longest}/")).as_deref(), Ok(longest.as_str()));
    assert!(url_host(&format!("https://{longest}b/")).is_err());
    assert_eq!(url_host(&format!("https://{label}.com/")).map(|h| h.len()), Ok(67));
    assert!(url_host(&format!("https://{label}a.com/")).is_err());
}
