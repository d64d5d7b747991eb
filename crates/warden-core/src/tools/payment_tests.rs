//! `tools.payment`: amount limits per call, per session and per recipient.

use super::payment::{self, MAX_AMOUNT, SCALE, parse_amount};
use super::*;
use crate::Warden;
use crate::config::Config;
use crate::model::{Decision, Identity, Scope};
use crate::test_support::Env;
use serde_json::json;
use std::string::ToString;

fn warden(tools: Value) -> Warden {
    crate::test_support::configured(&json!({ "tools": tools }).to_string())
}

fn pay(recipient: &str, amount: Value) -> ToolCall {
    ToolCall {
        tool_name: "send_money".into(),
        arguments: json!({"recipient": recipient, "amount": amount, "subject": "rent", "date": "2026-01-01"})
            .to_string(),
        call_id: None,
        run_id: None,
        session_id: Some("s1".into()),
        now_ms: 1_700_000_000_000,
        identity: Identity::default(),
        cwd: None,
        derived_paths: Vec::new(),
    }
}

fn with_id(mut c: ToolCall, id: &str) -> ToolCall {
    c.call_id = Some(id.into());
    c
}

fn decided(v: &Verdict) -> (Decision, &str) {
    (v.decision, v.rule.as_str())
}

const IBAN: &str = "DE89370400440532013000";

#[test]
fn amounts_are_read_as_plain_numbers_and_anything_else_is_refused() {
    let m = |units: u64| Ok(units * SCALE);
    let cases: &[(&str, Result<u64, ()>)] = &[
        ("100", m(100)),
        ("100.5", Ok(100 * SCALE + SCALE / 2)),
        (" 1,200.50 ", Ok(1200 * SCALE + SCALE / 2)),
        ("1,234,567", m(1_234_567)),
        ("+5", m(5)),
        ("1e3", m(1000)),
        ("1.5E2", m(150)),
        ("2500e-1", m(250)),
        ("0", Ok(0)),
        ("0.0000001", Ok(1)),
        (".5", Ok(SCALE / 2)),
        ("5.", m(5)),
        ("1000000000000", m(MAX_AMOUNT)),
        ("1000000000000.000001", Err(())),
        ("1e13", Err(())),
        ("1e999", Err(())),
        ("1e1000", Err(())),
        ("-5", Err(())),
        ("-0", Err(())),
        ("12,5", Err(())),
        ("1.200,50", Err(())),
        ("1,2000", Err(())),
        ("$5", Err(())),
        ("5 EUR", Err(())),
        ("NaN", Err(())),
        ("Infinity", Err(())),
        ("0x10", Err(())),
        ("", Err(())),
        (".", Err(())),
        ("1e", Err(())),
        ("١٢", Err(())),
    ];
    for (text, expected) in cases {
        assert_eq!(parse_amount(text).map_err(|_| ()), *expected, "{text:?}");
    }
}

#[test]
fn a_payment_over_max_amount_is_refused_at_and_just_past_the_bound() {
    let w = warden(json!({"payment": {"maxAmount": 100}}));
    let env = Env::new();
    let cases: &[(Value, Decision, &str)] = &[
        (json!(100), Decision::Allow, rules::ALLOW),
        (json!("100.00"), Decision::Allow, rules::ALLOW),
        (json!(1e2), Decision::Allow, rules::ALLOW),
        (json!(100.000001), Decision::Deny, rules::PAYMENT_LIMIT),
        (json!("100.0000001"), Decision::Deny, rules::PAYMENT_LIMIT),
        (json!(101), Decision::Deny, rules::PAYMENT_LIMIT),
        (json!("1e3"), Decision::Deny, rules::PAYMENT_LIMIT),
        (json!(1e300), Decision::Deny, rules::PAYMENT_INVALID_AMOUNT),
        (json!(-1), Decision::Deny, rules::PAYMENT_INVALID_AMOUNT),
        (json!("-0.01"), Decision::Deny, rules::PAYMENT_INVALID_AMOUNT),
        (json!("NaN"), Decision::Deny, rules::PAYMENT_INVALID_AMOUNT),
        (json!(true), Decision::Deny, rules::PAYMENT_INVALID_AMOUNT),
        (json!([50, 60]), Decision::Deny, rules::PAYMENT_INVALID_AMOUNT),
        (json!({"value": 5}), Decision::Deny, rules::PAYMENT_INVALID_AMOUNT),
        (json!(null), Decision::Allow, rules::ALLOW),
    ];
    for (amount, decision, rule) in cases {
        let v = w.check_tool_call(&env.ports(), &pay(IBAN, amount.clone()));
        assert_eq!(decided(&v), (*decision, *rule), "{amount}: {}", v.reason);
    }
}

#[test]
fn the_session_total_is_refused_just_past_max_per_session() {
    let w = warden(json!({"payment": {"maxPerSession": 100}}));
    let env = Env::new();
    let v = w.check_tool_call(&env.ports(), &pay(IBAN, json!(60)));
    assert_eq!(decided(&v), (Decision::Allow, rules::ALLOW));
    let v = w.check_tool_call(&env.ports(), &pay("GB33BUKB20201555555555", json!("40")));
    assert_eq!(decided(&v), (Decision::Allow, rules::ALLOW), "{}", v.reason);
    // At the bound exactly; one millionth more is refused and not counted.
    let v = w.check_tool_call(&env.ports(), &pay(IBAN, json!(0.000001)));
    assert_eq!(decided(&v), (Decision::Deny, rules::PAYMENT_LIMIT));
    assert!(v.reason.contains("paid 100 already") && v.reason.contains("(100)"), "{}", v.reason);
    let v = w.check_tool_call(&env.ports(), &pay(IBAN, json!(0)));
    assert_eq!(decided(&v), (Decision::Allow, rules::ALLOW));
    // Another session has its own total.
    let mut other = pay(IBAN, json!(100));
    other.session_id = Some("s2".into());
    let v = w.check_tool_call(&env.ports(), &other);
    assert_eq!(decided(&v), (Decision::Allow, rules::ALLOW));
}

#[test]
fn per_recipient_totals_join_two_spellings_of_one_recipient() {
    let w = warden(json!({"payment": {"maxPerRecipient": 50}}));
    let env = Env::new();
    let c = |to: &str, amount: u64| {
        let mut c = pay(to, json!(amount));
        c.tool_name = "mcp__bank__transfer_funds".into();
        c
    };
    let v = w.check_tool_call(&env.ports(), &c("Bob@Example.COM", 30));
    assert_eq!(decided(&v), (Decision::Allow, rules::ALLOW), "{}", v.reason);
    let v = w.check_tool_call(&env.ports(), &c(" bob@example.com ", 20));
    assert_eq!(decided(&v), (Decision::Allow, rules::ALLOW), "{}", v.reason);
    let v = w.check_tool_call(&env.ports(), &c("BOB@example.com", 1));
    assert_eq!(decided(&v), (Decision::Deny, rules::PAYMENT_LIMIT), "{}", v.reason);
    assert!(v.reason.contains("maxPerRecipient"), "{}", v.reason);
    // An IBAN with and without spaces is one recipient.
    let v = w.check_tool_call(&env.ports(), &pay("DE89 3704 0044 0532 0130 00", json!(50)));
    assert_eq!(decided(&v), (Decision::Allow, rules::ALLOW));
    let v = w.check_tool_call(&env.ports(), &pay(IBAN, json!(0.5)));
    assert_eq!(decided(&v), (Decision::Deny, rules::PAYMENT_LIMIT));
    // Someone else is not affected.
    let v = w.check_tool_call(&env.ports(), &c("carol@example.com", 50));
    assert_eq!(decided(&v), (Decision::Allow, rules::ALLOW));
}

#[test]
fn recipients_are_stored_only_as_keyed_hashes() {
    let w = warden(json!({"payment": {"maxPerRecipient": 50}}));
    let env = Env::new();
    let v = w.check_tool_call(&env.ports(), &pay("bob@example.com", json!(5)));
    assert_eq!(decided(&v), (Decision::Allow, rules::ALLOW));
    let dump = env.storage.dump();
    assert!(dump.iter().any(|(ns, _, _)| ns == payment::NAMESPACE), "{dump:?}");
    for (ns, key, value) in dump {
        let text = std::string::String::from_utf8_lossy(&value).to_lowercase();
        assert!(!text.contains("bob") && !key.contains("bob") && !key.contains("s1"), "{ns}/{key}: {text}");
    }
}

#[test]
fn a_retry_with_the_same_call_id_is_counted_once() {
    let w = warden(json!({"payment": {"maxPerSession": 100}}));
    let env = Env::new();
    for _ in 0..3 {
        let v = w.check_tool_call(&env.ports(), &with_id(pay(IBAN, json!(60)), "c1"));
        assert_eq!(decided(&v), (Decision::Allow, rules::ALLOW), "{}", v.reason);
    }
    // The same call ID with another amount is another payment.
    let v = w.check_tool_call(&env.ports(), &with_id(pay(IBAN, json!(50)), "c1"));
    assert_eq!(decided(&v), (Decision::Deny, rules::PAYMENT_LIMIT));
    // Without a call ID every check counts.
    let w = warden(json!({"payment": {"maxPerSession": 100}}));
    let env = Env::new();
    let v = w.check_tool_call(&env.ports(), &pay(IBAN, json!(60)));
    assert_eq!(decided(&v), (Decision::Allow, rules::ALLOW));
    let v = w.check_tool_call(&env.ports(), &pay(IBAN, json!(60)));
    assert_eq!(decided(&v), (Decision::Deny, rules::PAYMENT_LIMIT));
}

#[test]
fn an_asked_payment_counts_and_one_a_later_step_denies_does_not() {
    // Asked for its tool: it may run once approved, so it counts.
    let w = warden(json!({"payment": {"maxPerSession": 100}, "askTools": ["send_money"]}));
    let env = Env::new();
    let v = w.check_tool_call(&env.ports(), &with_id(pay(IBAN, json!(70)), "c1"));
    assert_eq!(decided(&v), (Decision::Ask, rules::ASK_TOOL));
    let v = w.check_tool_call(&env.ports(), &with_id(pay(IBAN, json!(70)), "c2"));
    assert_eq!(decided(&v), (Decision::Deny, rules::PAYMENT_LIMIT));
    // The approved call, checked again with its call ID, is not counted twice
    // and runs on the remembered answer.
    let approval = Approval {
        key: std::string::String::new(),
        allow: true,
        scope: Scope::Once,
        session_id: Some("s1".into()),
        call_id: Some("c1".into()),
        now_ms: 1_700_000_000_000,
        idempotency_key: None,
    };
    let asked = w.check_tool_call(&env.ports(), &with_id(pay(IBAN, json!(70)), "c1"));
    assert_eq!(decided(&asked), (Decision::Ask, rules::ASK_TOOL));
    let approval = Approval { key: asked.approval_key.clone().expect("key"), ..approval };
    w.record_approval(&env.ports(), &approval).expect("recorded");
    let v = w.check_tool_call(&env.ports(), &with_id(pay(IBAN, json!(70)), "c1"));
    assert_eq!(decided(&v), (Decision::Allow, rules::MEMORY_ALLOW), "{}", v.reason);
    let v = w.check_tool_call(&env.ports(), &with_id(pay(IBAN, json!(30)), "c3"));
    assert_eq!(decided(&v), (Decision::Ask, rules::ASK_TOOL), "{}", v.reason);

    // Denied by a later step (a protected path in its arguments): taken off.
    let w = warden(json!({"payment": {"maxPerSession": 100}, "taxonomy": [
        {"tool": "pay_with_receipt", "kind": "payment", "pathFields": ["receipt"]}
    ]}));
    let env = Env::new();
    let c = |amount: u64, receipt: &str| ToolCall {
        tool_name: "pay_with_receipt".into(),
        arguments: json!({"recipient": IBAN, "amount": amount, "receipt": receipt}).to_string(),
        ..pay(IBAN, json!(0))
    };
    let v = w.check_tool_call(&env.ports(), &c(80, "~/.ssh/id_rsa"));
    assert_eq!(decided(&v), (Decision::Deny, rules::PATH_PROTECTED), "{}", v.reason);
    let v = w.check_tool_call(&env.ports(), &c(100, "/ws/receipt.pdf"));
    assert_eq!(decided(&v), (Decision::Allow, rules::ALLOW), "{}", v.reason);
}

#[test]
fn a_remembered_approval_never_lets_a_payment_past_its_limit() {
    let w = warden(json!({"payment": {"maxPerSession": 100}, "askTools": ["send_money"]}));
    let env = Env::new();
    let asked = w.check_tool_call(&env.ports(), &pay(IBAN, json!(60)));
    assert_eq!(decided(&asked), (Decision::Ask, rules::ASK_TOOL));
    let approval = Approval {
        key: asked.approval_key.clone().expect("key"),
        allow: true,
        scope: Scope::Session,
        session_id: Some("s1".into()),
        call_id: None,
        now_ms: 1_700_000_000_000,
        idempotency_key: None,
    };
    w.record_approval(&env.ports(), &approval).expect("recorded");
    let v = w.check_tool_call(&env.ports(), &pay(IBAN, json!(60)));
    assert_eq!(decided(&v), (Decision::Deny, rules::PAYMENT_LIMIT), "{}", v.reason);
}

#[test]
fn the_limit_rule_is_configurable_and_observe_mode_counts_everything() {
    let env = Env::new();
    let w = warden(json!({"payment": {"maxAmount": 10}, "rules": {"payment.limit": {"decision": "ask"}}}));
    let v = w.check_tool_call(&env.ports(), &pay(IBAN, json!(11)));
    assert_eq!(decided(&v), (Decision::Ask, rules::PAYMENT_LIMIT));
    assert!(v.approval_key.is_some());
    let w = warden(json!({"payment": {"maxAmount": 10}, "rules": {"payment.limit": {"decision": "allow"}}}));
    let v = w.check_tool_call(&env.ports(), &pay(IBAN, json!(11)));
    assert_eq!(decided(&v), (Decision::Allow, rules::ALLOW));
    assert!(v.signals.iter().any(|s| s.name == rules::PAYMENT_LIMIT), "{:?}", v.signals);

    let w = warden(json!({"mode": "observe", "payment": {"maxPerSession": 100}}));
    let env = Env::new();
    let v = w.check_tool_call(&env.ports(), &pay(IBAN, json!(150)));
    assert_eq!(
        (v.decision, v.rule.as_str(), v.observed),
        (Decision::Allow, rules::PAYMENT_LIMIT, Some(Decision::Deny))
    );
    // Counted although over: it ran.
    let w = warden(json!({"payment": {"maxPerSession": 100}}));
    let v = w.check_tool_call(&env.ports(), &pay(IBAN, json!(0.000001)));
    assert_eq!(decided(&v), (Decision::Deny, rules::PAYMENT_LIMIT), "{}", v.reason);
    assert!(v.reason.contains("paid 150 already"), "{}", v.reason);
}

#[test]
fn payment_limits_fail_closed_when_storage_is_down() {
    let w = warden(json!({"payment": {"maxPerSession": 100}}));
    let env = Env::new();
    env.storage.fail_with(crate::ports::StorageError::Unavailable("disk gone".into()));
    let v = w.check_tool_call(&env.ports(), &pay(IBAN, json!(1)));
    assert_eq!(decided(&v), (Decision::Deny, rules::STORAGE_UNAVAILABLE));
    env.storage.heal();
    // Without `tools.payment` a payment tool is not limited and writes no payment record.
    let w = warden(json!({}));
    let v = w.check_tool_call(&env.ports(), &pay(IBAN, json!(1_000_000)));
    assert_eq!(decided(&v), (Decision::Allow, rules::ALLOW), "{}", v.reason);
    assert!(env.storage.dump().iter().all(|(ns, _, _)| ns != payment::NAMESPACE));
}

#[test]
fn the_recipients_of_a_session_are_bounded_at_and_past_the_limit() {
    let w = warden(json!({"payment": {"maxPerRecipient": 10}}));
    let env = Env::new();
    for i in 0..payment::MAX_RECIPIENTS {
        let v = w.check_tool_call(&env.ports(), &pay(&format!("r{i}@example.com"), json!(1)));
        assert_eq!(decided(&v), (Decision::Allow, rules::ALLOW), "{i}: {}", v.reason);
    }
    let v = w.check_tool_call(&env.ports(), &pay("one-more@example.com", json!(1)));
    assert_eq!(decided(&v), (Decision::Deny, rules::PAYMENT_LIMIT), "{}", v.reason);
    // A known recipient still gets paid.
    let v = w.check_tool_call(&env.ports(), &pay("r0@example.com", json!(1)));
    assert_eq!(decided(&v), (Decision::Allow, rules::ALLOW), "{}", v.reason);
}

#[test]
fn a_payment_to_several_recipients_counts_for_each() {
    let w = warden(json!({"payment": {"maxPerSession": 100}, "taxonomy": [
        {"tool": "pay_many", "kind": "payment", "recipientFields": ["to"]}
    ]}));
    let env = Env::new();
    let c = |to: Value, amount: u64| ToolCall {
        tool_name: "pay_many".into(),
        arguments: json!({"to": to, "amount": amount}).to_string(),
        ..pay(IBAN, json!(0))
    };
    let v = w.check_tool_call(&env.ports(), &c(json!(["a@example.com", "b@example.com"]), 50));
    assert_eq!(decided(&v), (Decision::Allow, rules::ALLOW), "{}", v.reason);
    let v = w.check_tool_call(&env.ports(), &c(json!("c@example.com"), 1));
    assert_eq!(decided(&v), (Decision::Deny, rules::PAYMENT_LIMIT), "{}", v.reason);
}

fn errors(tools: Value) -> Vec<std::string::String> {
    match Config::parse(&json!({ "tools": tools }).to_string()) {
        Ok(_) => Vec::new(),
        Err(errors) => errors.iter().map(ToString::to_string).collect(),
    }
}

#[test]
fn payment_settings_are_checked_at_and_past_their_bounds() {
    let cases = [
        (json!({"maxAmount": MAX_AMOUNT}), json!({"maxAmount": MAX_AMOUNT + 1}), "tools.payment.maxAmount"),
        (json!({"maxPerSession": 0}), json!({"maxPerSession": -1}), "tools.payment.maxPerSession"),
        (json!({"maxPerRecipient": 0.5}), json!({"maxPerRecipient": "50"}), "tools.payment.maxPerRecipient"),
        (json!({}), json!({"maxTotal": 5}), "tools.payment.maxTotal"),
        (json!({}), json!({"currencyField": "currency"}), "tools.payment.currencyField"),
    ];
    for (good, bad, path) in cases {
        assert_eq!(errors(json!({ "payment": good })), Vec::<std::string::String>::new(), "{good}");
        let found = errors(json!({ "payment": bad }));
        assert!(found.iter().any(|e| e.starts_with(&format!("{path}:"))), "{bad} gave {found:?}");
    }
    let found = errors(json!({"payment": {"maxAmount": -1}}));
    assert!(found.iter().any(|e| e.contains("`-1`") && e.contains("from 0 to")), "{found:?}");
}

#[test]
fn counted_calls_are_remembered_up_to_their_bound_and_past_it_a_retry_counts_again() {
    let w = warden(json!({"payment": {"maxPerSession": 1000}}));
    let env = Env::new();
    let paid = |env: &Env| {
        let v = w.check_tool_call(&env.ports(), &pay(IBAN, json!(1000)));
        assert_eq!(decided(&v), (Decision::Deny, rules::PAYMENT_LIMIT));
        v.reason
    };
    for i in 0..payment::MAX_REMEMBERED_CALLS {
        let v = w.check_tool_call(&env.ports(), &with_id(pay(IBAN, json!(1)), &format!("c{i}")));
        assert_eq!(decided(&v), (Decision::Allow, rules::ALLOW), "{i}");
    }
    // At the bound the first call is still known: its retry is not counted.
    let v = w.check_tool_call(&env.ports(), &with_id(pay(IBAN, json!(1)), "c0"));
    assert_eq!(decided(&v), (Decision::Allow, rules::ALLOW));
    assert!(paid(&env).contains(&format!("paid {} already", payment::MAX_REMEMBERED_CALLS)));
    // One more pushes it out, so its retry counts again (the stricter error).
    let v = w.check_tool_call(&env.ports(), &with_id(pay(IBAN, json!(1)), "one-more"));
    assert_eq!(decided(&v), (Decision::Allow, rules::ALLOW));
    let v = w.check_tool_call(&env.ports(), &with_id(pay(IBAN, json!(1)), "c0"));
    assert_eq!(decided(&v), (Decision::Allow, rules::ALLOW));
    assert!(paid(&env).contains(&format!("paid {} already", payment::MAX_REMEMBERED_CALLS + 2)));
}

#[test]
fn amount_strings_are_read_up_to_their_length_bound() {
    let at = format!("{}1", "0".repeat(payment::MAX_AMOUNT_CHARS - 1));
    assert_eq!(parse_amount(&at), Ok(SCALE));
    let past = format!("{}1", "0".repeat(payment::MAX_AMOUNT_CHARS));
    assert!(parse_amount(&past).is_err());
}
