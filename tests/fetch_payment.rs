//! `tools.fetch` host lists and `tools.payment` limits, through the `warden`
//! binary run as a subprocess (`warden check tool`, `warden validate`), with
//! totals kept in its SQLite database across processes.

use serde_json::{Value, json};
use warden_tests::T0;
use warden_tests::setup::Setup;

/// `warden check tool` on `call`: its decision, rule and reason.
fn check(s: &Setup, call: &Value) -> (String, String, String) {
    let v = s.check_tool(call);
    let text = |k: &str| v[k].as_str().unwrap_or_default().to_string();
    (text("decision"), text("rule"), text("reason"))
}

fn fetch(url: &str) -> Value {
    json!({"toolName": "WebFetch", "arguments": {"url": url, "prompt": "summarize"}, "sessionId": "s1", "nowMs": T0})
}

fn money(recipient: &str, amount: Value, call: &str) -> Value {
    json!({
        "toolName": "send_money",
        "arguments": {"recipient": recipient, "amount": amount, "subject": "invoice", "date": "2026-01-02"},
        "sessionId": "s1",
        "callId": call,
        "nowMs": T0
    })
}

#[test]
fn the_binary_denies_a_listed_host_and_fetches_an_allowed_one_without_asking() {
    let s = Setup::new(&json!({"tools": {"fetch": {
        "allowHosts": ["docs.rs", "*.example.com"],
        "denyHosts": ["evil.test", "*.evil.test"]
    }}}));
    let cases = [
        ("https://docs.rs/serde", "allow", "tools.allow"),
        ("https://api.example.com/v1", "allow", "tools.allow"),
        ("https://docs.rs@evil.test/", "deny", "fetch.denied-host"),
        ("HTTPS://CDN.EVIL.TEST.:443/x", "deny", "fetch.denied-host"),
        ("https://docs.rs.evil.test/", "deny", "fetch.denied-host"),
        ("https://elsewhere.org/?u=docs.rs", "ask", "fetch.unlisted-host"),
        ("file:///etc/passwd", "ask", "fetch.unlisted-host"),
    ];
    for (url, decision, rule) in cases {
        let (d, r, reason) = check(&s, &fetch(url));
        assert_eq!((d.as_str(), r.as_str()), (decision, rule), "{url}: {reason}");
    }
}

#[test]
fn the_binary_keeps_payment_totals_across_processes_and_refuses_past_the_limit() {
    let s =
        Setup::new(&json!({"tools": {"payment": {"maxAmount": 500, "maxPerSession": 1000, "maxPerRecipient": 600}}}));
    let iban = "DE89370400440532013000";
    let (d, r, reason) = check(&s, &money(iban, json!(500), "c1"));
    assert_eq!((d.as_str(), r.as_str()), ("allow", "tools.allow"), "{reason}");
    // A retry of the same call is not counted again.
    let (d, r, _) = check(&s, &money(iban, json!(500), "c1"));
    assert_eq!((d.as_str(), r.as_str()), ("allow", "tools.allow"));
    // The same IBAN written with spaces: 500 + 100 is at the recipient's limit, one cent more is past it.
    let (d, r, reason) = check(&s, &money("DE89 3704 0044 0532 0130 00", json!("100.00"), "c2"));
    assert_eq!((d.as_str(), r.as_str()), ("allow", "tools.allow"), "{reason}");
    let (d, r, reason) = check(&s, &money(iban, json!("0.01"), "c3"));
    assert_eq!((d.as_str(), r.as_str()), ("deny", "payment.limit"), "{reason}");
    assert!(reason.contains("maxPerRecipient"), "{reason}");
    assert!(!reason.contains(iban), "{reason}");
    // One call over `maxAmount`, and amounts that are not plain numbers.
    let (d, r, _) = check(&s, &money("GB33BUKB20201555555555", json!(500.01), "c4"));
    assert_eq!((d.as_str(), r.as_str()), ("deny", "payment.limit"));
    let (d, r, _) = check(&s, &money("GB33BUKB20201555555555", json!("-5"), "c5"));
    assert_eq!((d.as_str(), r.as_str()), ("deny", "payment.invalid-amount"));
    // The session: 600 paid, 400 left.
    let (d, r, reason) = check(&s, &money("GB33BUKB20201555555555", json!(400), "c6"));
    assert_eq!((d.as_str(), r.as_str()), ("allow", "tools.allow"), "{reason}");
    let (d, r, reason) = check(&s, &money("FR1420041010050500013M02606", json!(1), "c7"));
    assert_eq!((d.as_str(), r.as_str()), ("deny", "payment.limit"), "{reason}");
    assert!(reason.contains("maxPerSession"), "{reason}");
    // The database holds no recipient in clear.
    let bytes = std::fs::read(s.db.path()).expect("database");
    let text = String::from_utf8_lossy(&bytes);
    assert!(!text.contains(iban) && !text.contains("GB33BUKB"), "a recipient is stored in clear");
}

#[test]
fn the_binary_validates_fetch_and_payment_settings_naming_the_field() {
    let s = Setup::new(&json!({"tools": {
        "fetch": {"allowHosts": ["bücher.de"], "unlisted": "maybe"},
        "payment": {"maxPerSession": "lots"}
    }, "gate": {"ownerOffset": "+00:00", "channels": {"invite": {"noConsent": "allow"}}}}));
    let out = warden_tests::warden_process(&["validate", "--config", &s.config], "");
    assert_ne!(out.code, 0, "{}", out.stdout);
    let all = format!("{}{}", out.stdout, out.stderr);
    for expected in [
        "tools.fetch.allowHosts[0]: `bücher.de` must be ASCII",
        "tools.fetch.unlisted: must be `allow`, `ask` or `deny`, got `\"maybe\"`",
        "tools.payment.maxPerSession: must be a number from 0 to 1000000000000, got `\"lots\"`",
        "gate.channels.invite.noConsent: must be `deny` or `ask`, got `\"allow\"`",
    ] {
        assert!(all.contains(expected), "missing {expected:?} in {all}");
    }
}
