//! `gate.channels.<channel>.noConsent` and `gate.freeTextForConsented`.

use super::*;
use crate::fakes::{MemoryStorage, ScriptedHttp, VecLog};
use crate::model::Identity;
use serde_json::{Value, json};

const NOON: u64 = 1_717_372_800_000 + 12 * 3_600_000; // 2024-06-03T12:00:00Z
const NIGHT: u64 = 1_717_372_800_000 + 23 * 3_600_000;
const TEMPLATE: &str = "Reminder: your appointment is tomorrow.";

fn config(extra: Value) -> GateConfig {
    let mut section = json!({"ownerOffset": "+00:00", "templates": [TEMPLATE]});
    if let (Some(base), Some(more)) = (section.as_object_mut(), extra.as_object()) {
        base.extend(more.clone());
    }
    crate::Config::parse(&json!({ "gate": section }).to_string()).map(|c| c.gate).expect("valid")
}

fn errors(section: Value) -> Vec<String> {
    let mut s = json!({"ownerOffset": "+00:00"});
    if let (Some(base), Some(more)) = (s.as_object_mut(), section.as_object()) {
        base.extend(more.clone());
    }
    match crate::Config::parse(&json!({ "gate": s }).to_string()) {
        Ok(_) => Vec::new(),
        Err(e) => e.iter().map(ToString::to_string).collect(),
    }
}

struct World {
    http: ScriptedHttp,
    storage: MemoryStorage,
    log: VecLog,
}

impl World {
    fn new() -> Self {
        World { http: ScriptedHttp::unreachable(), storage: MemoryStorage::default(), log: VecLog::default() }
    }

    fn ports(&self) -> Ports<'_> {
        Ports { http: &self.http, storage: &self.storage, log: &self.log }
    }
}

fn send(c: &GateConfig, w: &World, channel: &str, to: &str, body: &str, now_ms: u64) -> (Decision, String) {
    let m = OutboundMessage {
        direction: Direction::Outbound,
        channel: channel.into(),
        recipient: to.into(),
        sender: None,
        body: body.as_bytes().to_vec(),
        thread: None,
        message_id: None,
        session_id: None,
        now_ms,
        identity: Identity::default(),
    };
    let v = check(c, &w.ports(), &m).expect("gated");
    (v.decision, v.rule)
}

#[test]
fn a_channel_set_to_ask_asks_for_a_recipient_without_consent_and_others_still_block() {
    let c = config(json!({"channels": {"invite": {"noConsent": "ask"}, "email": {"noConsent": "deny"}}}));
    let w = World::new();
    assert_eq!(send(&c, &w, "invite", "bob@example.com", TEMPLATE, NOON), (Decision::Ask, rules::NO_CONSENT.into()));
    assert_eq!(send(&c, &w, "email", "bob@example.com", TEMPLATE, NOON), (Decision::Deny, rules::NO_CONSENT.into()));
    assert_eq!(send(&c, &w, "sms", "+15550100", TEMPLATE, NOON), (Decision::Deny, rules::NO_CONSENT.into()));
    // The channel name is matched exactly.
    assert_eq!(send(&c, &w, "Invite", "bob@example.com", TEMPLATE, NOON), (Decision::Deny, rules::NO_CONSENT.into()));
}

#[test]
fn an_asked_first_contact_still_obeys_opt_outs_and_quiet_hours() {
    let c = config(json!({"channels": {"invite": {"noConsent": "ask"}}}));
    let w = World::new();
    // Quiet hours block; the no-consent ask does not lift them.
    assert_eq!(send(&c, &w, "invite", "bob@example.com", TEMPLATE, NIGHT), (Decision::Deny, rules::QUIET_HOURS.into()));
    opt_out(&c, &w.ports(), "bob@example.com", NOON, None).expect("opt-out");
    assert_eq!(send(&c, &w, "invite", "bob@example.com", TEMPLATE, NOON), (Decision::Deny, rules::OPTED_OUT.into()));
    // Free wording is a further ask, listed as a signal.
    let m = OutboundMessage {
        direction: Direction::Outbound,
        channel: "invite".into(),
        recipient: "carol@example.com".into(),
        sender: None,
        body: b"join my workspace".to_vec(),
        thread: None,
        message_id: None,
        session_id: None,
        now_ms: NOON,
        identity: Identity::default(),
    };
    let v = check(&c, &w.ports(), &m).expect("gated");
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Ask, rules::NO_CONSENT));
    assert!(v.signals.iter().any(|s| s.name == rules::NO_TEMPLATE), "{:?}", v.signals);
}

#[test]
fn free_text_reaches_a_consented_recipient_only_when_turned_on() {
    let w = World::new();
    let off = config(json!({}));
    let on = config(json!({"freeTextForConsented": true}));
    consent(&off, &w.ports(), "email", "bob@example.com", None, None, NOON, None).expect("consent");
    let free = "Here are the notes from today.";
    assert_eq!(send(&off, &w, "email", "bob@example.com", free, NOON), (Decision::Ask, rules::NO_TEMPLATE.into()));
    assert_eq!(send(&on, &w, "email", "bob@example.com", free, NOON), (Decision::Allow, rules::ROUTINE.into()));
    // Not for a recipient without consent on that channel, asked or not.
    let asked = config(json!({"freeTextForConsented": true, "channels": {"sms": {"noConsent": "ask"}}}));
    assert_eq!(send(&on, &w, "sms", "bob@example.com", free, NOON), (Decision::Deny, rules::NO_CONSENT.into()));
    let w2 = World::new();
    let m = OutboundMessage {
        direction: Direction::Outbound,
        channel: "sms".into(),
        recipient: "+15550100".into(),
        sender: None,
        body: free.as_bytes().to_vec(),
        thread: None,
        message_id: None,
        session_id: None,
        now_ms: NOON,
        identity: Identity::default(),
    };
    let v = check(&asked, &w2.ports(), &m).expect("gated");
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Ask, rules::NO_CONSENT));
    assert!(v.signals.iter().any(|s| s.name == rules::NO_TEMPLATE), "{:?}", v.signals);
    // Quiet hours still hold for free text.
    assert_eq!(send(&on, &w, "email", "bob@example.com", free, NIGHT), (Decision::Deny, rules::QUIET_HOURS.into()));
}

#[test]
fn observe_mode_allows_an_asked_first_contact_with_the_decision_it_would_make() {
    let c = config(json!({"mode": "observe", "channels": {"invite": {"noConsent": "ask"}}}));
    let w = World::new();
    let m = OutboundMessage {
        direction: Direction::Outbound,
        channel: "invite".into(),
        recipient: "bob@example.com".into(),
        sender: None,
        body: TEMPLATE.as_bytes().to_vec(),
        thread: None,
        message_id: None,
        session_id: None,
        now_ms: NOON,
        identity: Identity::default(),
    };
    let v = check(&c, &w.ports(), &m).expect("gated");
    assert_eq!((v.decision, v.rule.as_str(), v.observed), (Decision::Allow, rules::NO_CONSENT, Some(Decision::Ask)));
}

#[test]
fn channel_settings_are_checked_with_their_field_paths() {
    let many: serde_json::Map<String, Value> =
        (0..=MAX_CHANNEL_SETTINGS).map(|i| (format!("c{i}"), json!({"noConsent": "ask"}))).collect();
    let at: serde_json::Map<String, Value> =
        (0..MAX_CHANNEL_SETTINGS).map(|i| (format!("c{i}"), json!({"noConsent": "ask"}))).collect();
    let cases = [
        (
            json!({"channels": {"invite": {"noConsent": "ask"}}}),
            json!({"channels": {"invite": {"noConsent": "allow"}}}),
            "gate.channels.invite.noConsent",
        ),
        (
            json!({"channels": {"invite": {}}}),
            json!({"channels": {"invite": {"noconsent": "ask"}}}),
            "gate.channels.invite.noconsent",
        ),
        (json!({"channels": {}}), json!({"channels": ["invite"]}), "gate.channels"),
        (
            json!({"channels": {"a": {"noConsent": "deny"}}}),
            json!({"channels": {"a/b": {"noConsent": "ask"}}}),
            "gate.channels.a/b",
        ),
        (json!({"channels": at}), json!({"channels": many}), "gate.channels"),
        (json!({"freeTextForConsented": true}), json!({"freeTextForConsented": "yes"}), "gate.freeTextForConsented"),
    ];
    for (good, bad, path) in cases {
        assert_eq!(errors(good.clone()), Vec::<String>::new(), "{good}");
        let found = errors(bad.clone());
        assert!(found.iter().any(|e| e.starts_with(&format!("{path}:"))), "{bad} gave {found:?}");
    }
    let found = errors(json!({"channels": {"invite": {"noConsent": "allow"}}}));
    assert!(found.iter().any(|e| e.contains("`\"allow\"`") && e.contains("`deny` or `ask`")), "{found:?}");
}
