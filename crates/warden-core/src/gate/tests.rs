use super::*;
use crate::fakes::{MemoryStorage, ScriptedHttp, VecLog};
use crate::model::Identity;
use crate::ports::{BatchError, Entry, Http, Log};
use core::cell::{Cell, RefCell};
use serde_json::{Value, json};

const CASES: &str = include_str!("../../testdata/gate-cases.json");
const DAY0: u64 = 1_717_372_800_000; // 2024-06-03T00:00:00Z
const ALICE: &str = "+15550100";
const SECRET: &str = "correct-horse-battery-staple-0123456789";

fn config_from(section: Value) -> Result<GateConfig, Vec<String>> {
    let doc = json!({ "gate": section });
    crate::Config::parse(&doc.to_string()).map(|c| c.gate).map_err(|e| e.iter().map(ToString::to_string).collect())
}

fn base_config() -> GateConfig {
    config_from(json!({"ownerOffset": "+00:00", "templates": ["Reminder: your appointment is tomorrow."]}))
        .expect("valid")
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

fn message(channel: &str, recipient: &str, body: &str, thread: Option<&str>, now_ms: u64) -> OutboundMessage {
    OutboundMessage {
        direction: Direction::Outbound,
        channel: channel.into(),
        recipient: recipient.into(),
        sender: None,
        body: body.as_bytes().to_vec(),
        thread: thread.map(Into::into),
        message_id: None,
        session_id: None,
        now_ms,
        identity: Identity::default(),
    }
}

/// `HH:MM[:SS[.mmm]]` on day0 plus `day` days.
fn at(time: &str, day: i64) -> u64 {
    let (hms, ms) = time.split_once('.').unwrap_or((time, "0"));
    let parts: Vec<u64> = hms.split(':').map(|p| p.parse().expect("number")).collect();
    let secs = parts[0] * 3600 + parts[1] * 60 + parts.get(2).copied().unwrap_or(0);
    let base = DAY0 as i64 + day * 86_400_000;
    (base as u64) + secs * 1000 + ms.parse::<u64>().expect("ms")
}

fn str_of<'a>(v: &'a Value, key: &str, default: &'a str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or(default)
}

fn when(v: &Value, default: &str) -> u64 {
    at(str_of(v, "at", default), v.get("day").and_then(Value::as_i64).unwrap_or(0))
}

fn run_case(base: &Value, case: &Value) -> Option<(String, String, Option<String>)> {
    let mut section = base.clone();
    if let Some(overrides) = case.get("config").and_then(Value::as_object) {
        for (k, v) in overrides {
            section[k] = v.clone();
        }
    }
    let config = config_from(section).expect("case config is valid");
    let world = World::new();
    let ports = world.ports();
    let default_setup = json!([{"op": "consent"}]);
    let setup = case.get("setup").unwrap_or(&default_setup);
    for op in setup.as_array().expect("setup") {
        let channel = str_of(op, "channel", "sms");
        let to = str_of(op, "to", ALICE);
        let now = when(op, "08:00");
        let thread = op.get("thread").and_then(Value::as_str);
        let done = match str_of(op, "op", "") {
            "consent" => {
                consent(&config, &ports, channel, to, op.get("offset").and_then(Value::as_str), None, now, None)
            }
            "optout" => opt_out(&config, &ports, to, now, None),
            "revoke" => revoke(&config, &ports, channel, to, now, None).map(|_| ()),
            "variables" => {
                let values: Vec<(String, String)> = op["values"]
                    .as_object()
                    .expect("values")
                    .iter()
                    .map(|(k, v)| (k.clone(), v.as_str().expect("value").to_string()))
                    .collect();
                set_variables(&config, &ports, channel, to, &values, now, None)
            }
            outcome => {
                let delivery = match outcome {
                    "sent" => Delivery::Sent,
                    "failed" => Delivery::Failed,
                    "reply" => Delivery::Reply,
                    other => panic!("unknown op {other}"),
                };
                let report = OutcomeReport {
                    channel: channel.into(),
                    recipient: to.into(),
                    delivery,
                    thread: thread.map(Into::into),
                    now_ms: now,
                    idempotency_key: None,
                };
                record_outcome(&config, &ports, &report)
            }
        };
        if config.enabled {
            done.expect("setup op succeeds");
        }
    }
    let empty = json!({});
    let c = case.get("check").unwrap_or(&empty);
    let m = message(
        str_of(c, "channel", "sms"),
        str_of(c, "to", ALICE),
        str_of(c, "body", "Reminder: your appointment is tomorrow."),
        c.get("thread").and_then(Value::as_str),
        when(c, "12:00"),
    );
    check(&config, &ports, &m)
        .map(|v| (v.decision.as_str().to_string(), v.rule, v.observed.map(|o| o.as_str().to_string())))
}

#[test]
fn every_gate_case_of_the_data_file_decides_with_its_rule() {
    let doc: Value = serde_json::from_str(CASES).expect("case file is JSON");
    assert_eq!(doc["day0Ms"].as_u64(), Some(DAY0));
    let cases = doc["cases"].as_array().expect("cases");
    assert!(cases.len() >= 60, "only {} cases", cases.len());
    let mut failures = Vec::new();
    for case in cases {
        let got = run_case(&doc["base"], case);
        let expected = match &case["expect"] {
            Value::Null => None,
            Value::Array(a) => {
                let s = |i: usize| a.get(i).and_then(Value::as_str).map(ToString::to_string);
                Some((s(0).expect("decision"), s(1).expect("rule"), s(2)))
            }
            other => panic!("bad expect {other}"),
        };
        if got != expected {
            failures.push(format!("{}: got {got:?}, expected {expected:?}", case["name"]));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_ledger_holds_no_clear_text_recipient_or_body() {
    let world = World::new();
    let ports = world.ports();
    let config = GateConfig { ledger_secret: Some(LedgerSecret(SECRET.into())), ..base_config() };
    let recipient = "ada.lovelace@example.test";
    let body = "Reminder: your appointment is tomorrow.";
    consent(&config, &ports, "email", recipient, Some("+01:00"), Some("signup form"), at("09:00", 0), None)
        .expect("consent");
    set_variables(&config, &ports, "email", recipient, &[("first".into(), "Ada".into())], at("09:01", 0), None)
        .expect("vars");
    let v = check(&config, &ports, &message("email", recipient, body, Some("t-9"), at("12:00", 0))).expect("verdict");
    assert_eq!(v.rule, rules::ROUTINE);
    let report = OutcomeReport {
        channel: "email".into(),
        recipient: recipient.into(),
        delivery: Delivery::Sent,
        thread: Some("t-9".into()),
        now_ms: at("12:01", 0),
        idempotency_key: None,
    };
    record_outcome(&config, &ports, &report).expect("sent");
    opt_out(&config, &ports, recipient, at("13:00", 0), None).expect("optout");
    let dump = world.storage.dump();
    assert!(dump.len() >= 8, "{} records", dump.len());
    for (ns, key, value) in dump {
        let text = String::from_utf8_lossy(&value);
        for needle in [recipient, "ada.lovelace", body, "appointment", SECRET] {
            assert!(!key.contains(needle) && !text.contains(needle), "{ns}/{key} holds `{needle}`: {text}");
        }
    }
    let lines = log(&config, &ports, MAX_LOG_LIMIT).expect("log");
    assert_eq!(lines.len(), 5);
    assert!(lines.iter().all(|l| l.recipient_hash.len() == 64 && l.recipient_hash == lines[0].recipient_hash));
}

#[test]
fn the_log_lists_decisions_with_their_rules_last_written_first_whatever_their_times() {
    let world = World::new();
    let ports = world.ports();
    let config = base_config();
    consent(&config, &ports, "sms", ALICE, None, None, at("08:00", 0), None).expect("consent");
    let body = "Reminder: your appointment is tomorrow.";
    let checks = [("12:00", body), ("22:00", body), ("12:30", "free text")];
    for (time, text) in checks {
        check(&config, &ports, &message("sms", ALICE, text, None, at(time, 0)));
    }
    let lines = log(&config, &ports, 3).expect("log");
    let got: Vec<(u64, &str, Option<&str>, Option<&str>)> =
        lines.iter().map(|l| (l.at_ms, l.event.as_str(), l.decision.as_deref(), l.rule.as_deref())).collect();
    assert_eq!(
        got,
        vec![
            (at("12:30", 0), "check", Some("approve"), Some(rules::NO_TEMPLATE)),
            (at("22:00", 0), "check", Some("block"), Some(rules::QUIET_HOURS)),
            (at("12:00", 0), "check", Some("pass"), Some(rules::ROUTINE)),
        ]
    );
    assert!(lines.iter().all(|l| l.body_hash.is_some()));
    assert_eq!(log(&config, &ports, 1).map(|l| l.len()), Ok(1));
    assert_eq!(log(&config, &ports, MAX_LOG_LIMIT).map(|l| l.len()), Ok(4));
    for bad in [0, MAX_LOG_LIMIT + 1] {
        assert_eq!(
            log(&config, &ports, bad),
            Err(PolicyError::InvalidInput(format!("limit: must be between 1 and 50, got `{bad}`")))
        );
    }
    let s = status(&config, &ports).expect("status");
    assert_eq!((s.consents, s.opt_outs, s.open_threads, s.entries), (1, 0, 0, 4));
    assert_eq!(s.decisions, vec![("pass".to_string(), 1), ("approve".to_string(), 1), ("block".to_string(), 1)]);
}

/// Storage that runs another writer's whole operation right before its own `n`-th write.
struct Interleaved<'a> {
    inner: &'a MemoryStorage,
    before_write: Cell<usize>,
    other: RefCell<Option<Box<dyn FnOnce() + 'a>>>,
}

impl Storage for Interleaved<'_> {
    fn get(&self, ns: &str, key: &str) -> Result<Option<Entry>, StorageError> {
        self.inner.get(ns, key)
    }

    fn set(&self, ns: &str, key: &str, value: &[u8], when: Condition) -> Result<u64, StorageError> {
        let n = self.before_write.get();
        self.before_write.set(n.saturating_sub(1));
        if n == 1
            && let Some(other) = self.other.borrow_mut().take()
        {
            other();
        }
        self.inner.set(ns, key, value, when)
    }

    fn delete(&self, ns: &str, key: &str, when: Condition) -> Result<bool, StorageError> {
        self.inner.delete(ns, key, when)
    }

    fn list(&self, ns: &str, prefix: &str, limit: u32, reverse: bool) -> Result<Vec<(String, Entry)>, StorageError> {
        self.inner.list(ns, prefix, limit, reverse)
    }

    fn commit(&self, writes: &[Write]) -> Result<(), BatchError> {
        let n = self.before_write.get();
        self.before_write.set(n.saturating_sub(1));
        if n == 1
            && let Some(other) = self.other.borrow_mut().take()
        {
            other();
        }
        self.inner.commit(writes)
    }
}

#[test]
fn two_hosts_recording_sends_to_one_thread_lose_no_record() {
    // Host B's whole send lands between host A's reads and A's one batch (the
    // thread update, the ledger line in the same millisecond and the totals).
    for nth_write in 1..=1 {
        let storage = MemoryStorage::default();
        let http = ScriptedHttp::unreachable();
        let log_port = VecLog::default();
        let config = base_config();
        let direct = Ports { http: &http as &dyn Http, storage: &storage, log: &log_port as &dyn Log };
        consent(&config, &direct, "sms", ALICE, None, None, at("08:00", 0), None).expect("consent");
        let report = |t: &str| OutcomeReport {
            channel: "sms".into(),
            recipient: ALICE.into(),
            delivery: Delivery::Sent,
            thread: Some("t".into()),
            now_ms: at(t, 0),
            idempotency_key: None,
        };
        let host_b = || record_outcome(&config, &direct, &report("09:00")).expect("host B");
        let racing = Interleaved {
            inner: &storage,
            before_write: Cell::new(nth_write),
            other: RefCell::new(Some(Box::new(host_b))),
        };
        let ports_a = Ports { http: &http, storage: &racing, log: &log_port };
        record_outcome(&config, &ports_a, &report("09:00")).expect("host A");
        assert!(racing.other.borrow().is_none(), "host B ran (write {nth_write})");
        let key = open(&config, &storage, 0).expect("key");
        let rh = key.recipient(ALICE);
        let thread =
            store::get_json::<ThreadRecord>(&storage, NAMESPACE, &thread_key("sms", &rh, &key.thread(Some("t"))))
                .expect("read")
                .map(|(t, _)| t);
        assert_eq!(thread.map(|t| (t.sends, t.awaiting_reply)), Some((2, true)), "write {nth_write}");
        let lines = log(&config, &direct, MAX_LOG_LIMIT).expect("log");
        let sent = lines.iter().filter(|l| l.event == "sent").count();
        assert_eq!(sent, 2, "write {nth_write}: {lines:?}");
        assert_eq!(ledger::stats(&storage).map(|s| s.entries), Ok(3), "write {nth_write}");
    }
}

#[test]
fn hosts_creating_the_ledger_at_once_share_one_key() {
    let storage = MemoryStorage::default();
    let config = base_config();
    let other = || {
        open(&config, &storage, 5).expect("other host opens");
    };
    let racing =
        Interleaved { inner: &storage, before_write: Cell::new(1), other: RefCell::new(Some(Box::new(other))) };
    let mine = open(&config, &racing, 7).expect("opens after losing the race");
    let theirs = open(&config, &storage, 9).expect("reopen");
    assert_eq!(mine.recipient(ALICE), theirs.recipient(ALICE));
}

#[test]
fn a_changed_or_added_ledger_secret_fails_closed_instead_of_losing_opt_outs() {
    let world = World::new();
    let ports = world.ports();
    let keyed = GateConfig { ledger_secret: Some(LedgerSecret(SECRET.into())), ..base_config() };
    consent(&keyed, &ports, "sms", ALICE, None, None, at("08:00", 0), None).expect("consent");
    opt_out(&keyed, &ports, ALICE, at("08:01", 0), None).expect("optout");
    let m = message("sms", ALICE, "Reminder: your appointment is tomorrow.", None, at("12:00", 0));
    assert_eq!(check(&keyed, &ports, &m).map(|v| v.rule), Some(rules::OPTED_OUT.to_string()));
    let other_secret = GateConfig { ledger_secret: Some(LedgerSecret("x".repeat(MIN_SECRET_CHARS))), ..base_config() };
    let no_secret = base_config();
    for config in [&other_secret, &no_secret] {
        let v = check(config, &ports, &m).expect("verdict");
        assert_eq!((v.decision, v.rule.as_str()), (Decision::Deny, rules::LEDGER_KEY_MISMATCH));
        assert!(!v.reason.contains(SECRET));
        let e = consent(config, &ports, "sms", "+15550111", None, None, at("12:00", 0), None).expect_err("refused");
        assert!(matches!(&e, PolicyError::Other(m) if m.contains("ledger")), "{e:?}");
    }
    // An unkeyed ledger refuses a secret added later, too.
    let fresh = World::new();
    let p = fresh.ports();
    consent(&no_secret, &p, "sms", ALICE, None, None, at("08:00", 0), None).expect("consent");
    assert_eq!(check(&keyed, &p, &m).map(|v| v.rule), Some(rules::LEDGER_KEY_MISMATCH.to_string()));
}

#[test]
fn the_ledger_secret_never_leaves_the_configuration() {
    let config = config_from(json!({"ownerOffset": "+01:00", "ledgerSecret": SECRET})).expect("valid");
    assert!(config.ledger_secret.is_some());
    assert!(!format!("{config:?}").contains(SECRET));
    assert!(!serde_json::to_string(&config).expect("json").contains(SECRET));
    let a = crate::Config::parse(&json!({"gate": {"ownerOffset": "+01:00", "ledgerSecret": SECRET}}).to_string());
    let b = crate::Config::parse(&json!({"gate": {"ownerOffset": "+01:00"}}).to_string());
    assert_eq!(a.map(|c| c.policy_version()), b.map(|c| c.policy_version()));
    let short = "s".repeat(MIN_SECRET_CHARS - 1);
    let errors = config_from(json!({"ownerOffset": "+01:00", "ledgerSecret": short})).expect_err("too short");
    assert_eq!(errors, ["gate.ledgerSecret: must be 32 to 512 characters, got 31 (value not shown)"]);
    assert!(config_from(json!({"ownerOffset": "+01:00", "ledgerSecret": "s".repeat(MAX_SECRET_CHARS)})).is_ok());
    assert!(config_from(json!({"ownerOffset": "+01:00", "ledgerSecret": "s".repeat(MAX_SECRET_CHARS + 1)})).is_err());
    assert_eq!(base_config().warnings().len(), 1);
    assert!(config.warnings().is_empty());
}

#[test]
fn unreadable_state_holds_messages_back_even_in_order_to_record_them() {
    let world = World::new();
    let ports = world.ports();
    let config = base_config();
    consent(&config, &ports, "sms", ALICE, None, None, at("08:00", 0), None).expect("consent");
    let m = message("sms", ALICE, "Reminder: your appointment is tomorrow.", None, at("12:00", 0));
    world.storage.fail_with(StorageError::Unavailable("disk gone".into()));
    let v = check(&config, &ports, &m).expect("verdict");
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Deny, rules::STORAGE_UNAVAILABLE));
    let observe = GateConfig { mode: Mode::Observe, ..config.clone() };
    let v = check(&observe, &ports, &m).expect("verdict");
    assert_eq!(
        (v.decision, v.rule.as_str(), v.observed),
        (Decision::Allow, rules::STORAGE_UNAVAILABLE, Some(Decision::Deny))
    );
    world.storage.heal();
    assert_eq!(check(&config, &ports, &m).map(|v| v.rule), Some(rules::ROUTINE.to_string()));
}

#[test]
fn inbound_messages_are_not_gated() {
    let world = World::new();
    let mut m = message("sms", ALICE, "hi", None, at("12:00", 0));
    m.direction = Direction::Inbound;
    assert_eq!(check(&base_config(), &world.ports(), &m), None);
    assert!(world.storage.is_empty());
}

#[test]
fn gate_settings_are_checked_with_every_error_at_once() {
    let cases: &[(Value, &[&str])] = &[
        (json!({}), &["gate.ownerOffset: is required"]),
        (
            json!({"ownerOffset": "+14:01"}),
            &["gate.ownerOffset: `+14:01` must be `+HH:MM` or `-HH:MM` between `-12:00` and `+14:00`"],
        ),
        (
            json!({"ownerOffset": "UTC"}),
            &["gate.ownerOffset: `UTC` must be `+HH:MM` or `-HH:MM` between `-12:00` and `+14:00`"],
        ),
        (
            json!({"ownerOffset": "+00:00", "start": "8:00", "end": "25:00"}),
            &[
                "gate.start: `8:00` must be `HH:MM` from `00:00` to `23:59`",
                "gate.end: `25:00` must be `HH:MM` from `00:00` to `24:00`",
            ],
        ),
        (
            json!({"ownerOffset": "+00:00", "start": "24:00"}),
            &["gate.start: `24:00` must be `HH:MM` from `00:00` to `23:59`"],
        ),
        (
            json!({"ownerOffset": "+00:00", "start": "09:00", "end": "09:00"}),
            &["gate.end: must differ from `start` (`09:00`); use `00:00` to `24:00` for the whole day"],
        ),
        (
            json!({"ownerOffset": "+00:00", "minGapSeconds": MAX_MIN_GAP_SECONDS + 1}),
            &["gate.minGapSeconds: must be between 0 and 604800, got `604801`"],
        ),
        (
            json!({"ownerOffset": "+00:00", "templates": ["Pay 5$ now"]}),
            &[
                "gate.templates[0]: `Pay 5$ now` has a `$` that starts no variable; write `$$` for a dollar sign (at character 5)",
            ],
        ),
        (
            json!({"ownerOffset": "+00:00", "templates": ["a", "a"]}),
            &["gate.templates[1]: duplicate template `a`; first used at gate.templates[0]"],
        ),
        (json!({"ownerOffset": "+00:00", "templates": ["  "]}), &["gate.templates[0]: must not be blank"]),
        (json!({"ownerOffset": "+00:00", "stopKeywords": []}), &["gate.stopKeywords: must name at least one keyword"]),
        (
            json!({"ownerOffset": "+00:00", "stopKeywords": ["STOP", "stop"]}),
            &["gate.stopKeywords[1]: duplicate stop keyword `STOP`; first used at gate.stopKeywords[0]"],
        ),
        (
            json!({"ownerOffset": "+00:00", "ledgerSecret": 12}),
            &["gate.ledgerSecret: must be a string of 32 to 512 characters"],
        ),
        (
            json!({"ownerOffset": "+00:00", "quietHours": true}),
            &[
                "gate.quietHours: unknown field; allowed fields are `enabled`, `mode`, `ownerOffset`, `requireConsent`, `start`, `end`, `minGapSeconds`, `templates`, `stopKeywords`, `ledgerSecret`, `channels`, `freeTextForConsented`",
            ],
        ),
    ];
    for (section, expected) in cases {
        let errors = config_from(section.clone()).expect_err("invalid");
        assert_eq!(errors, *expected, "{section}");
    }
    let at_bound = config_from(json!({"ownerOffset": "-12:00", "minGapSeconds": MAX_MIN_GAP_SECONDS})).expect("valid");
    assert_eq!(at_bound.min_gap_seconds, MAX_MIN_GAP_SECONDS);
    let many: Vec<String> = (0..MAX_TEMPLATES).map(|i| format!("t{i}")).collect();
    assert!(config_from(json!({"ownerOffset": "+00:00", "templates": many})).is_ok());
    let too_many: Vec<String> = (0..=MAX_TEMPLATES).map(|i| format!("t{i}")).collect();
    assert_eq!(
        config_from(json!({"ownerOffset": "+00:00", "templates": too_many})).expect_err("too many"),
        ["gate.templates: must have at most 100 items, got 101"]
    );
    let long = "t".repeat(MAX_TEMPLATE_CHARS);
    assert!(config_from(json!({"ownerOffset": "+00:00", "templates": [long]})).is_ok());
    let too_long = "t".repeat(MAX_TEMPLATE_CHARS + 1);
    assert!(config_from(json!({"ownerOffset": "+00:00", "templates": [too_long]})).is_err());
    let off = config_from(json!({"ownerOffset": "+00:00", "enabled": false})).expect("valid");
    assert!(!off.status().active);
    assert!(base_config().status().active);
    assert!(!GateConfig::default().status().active);
}

#[test]
fn admin_calls_refuse_bad_input_without_echoing_recipients_and_change_nothing() {
    let world = World::new();
    let ports = world.ports();
    let config = base_config();
    let now = at("08:00", 0);
    let long_recipient = "9".repeat(MAX_RECIPIENT_CHARS + 1);
    let too_many: Vec<(String, String)> = (0..=MAX_VARIABLES).map(|i| (format!("v{i}"), "x".into())).collect();
    let long_value = vec![("name".to_string(), "x".repeat(MAX_VARIABLE_VALUE_CHARS + 1))];
    let cases: Vec<(Result<(), PolicyError>, &str)> = vec![
        (
            consent(&config, &ports, "", ALICE, None, None, now, None),
            "channel: `` must be 1 to 64 visible ASCII characters without `/`",
        ),
        (consent(&config, &ports, "s m s", ALICE, None, None, now, None), "channel: `s m s` must be 1 to 64"),
        (consent(&config, &ports, "sms", " ", None, None, now, None), "recipient: must not be blank"),
        (
            consent(&config, &ports, "sms", &long_recipient, None, None, now, None),
            "recipient: must be at most 512 characters, got 513",
        ),
        (consent(&config, &ports, "sms", ALICE, Some("+5:30"), None, now, None), "offset: `+5:30` must be"),
        (
            consent(&config, &ports, "sms", ALICE, None, Some(&"h".repeat(MAX_HOW_CHARS + 1)), now, None),
            "how: must be 1 to 256 characters, got 257",
        ),
        (opt_out(&config, &ports, "", now, None), "recipient: must not be blank"),
        (set_variables(&config, &ports, "sms", ALICE, &too_many, now, None), "variables: must be at most 64, got 65"),
        (
            set_variables(&config, &ports, "sms", ALICE, &[("9x".into(), "v".into())], now, None),
            "variables[0]: `9x` must be a letter",
        ),
        (
            set_variables(&config, &ports, "sms", ALICE, &long_value, now, None),
            "variables[0]: the value of `name` must be at most 512 characters, got 513",
        ),
        (
            set_variables(
                &config,
                &ports,
                "sms",
                ALICE,
                &[("a".into(), "1".into()), ("a".into(), "2".into())],
                now,
                None,
            ),
            "variables[1]: `a` is given twice",
        ),
        (reply(&config, &ports, "sms", ALICE, Some(""), now, None), "thread: must be 1 to 256 characters"),
    ];
    for (got, expected) in cases {
        match got {
            Err(PolicyError::InvalidInput(m)) => {
                assert!(m.starts_with(expected), "{m} vs {expected}");
                assert!(!m.contains(ALICE) && !m.contains("99999"), "{m}");
            }
            other => panic!("expected invalid input `{expected}`, got {other:?}"),
        }
    }
    assert!(world.storage.is_empty(), "nothing was written");
    let at_limit: Vec<(String, String)> =
        (0..MAX_VARIABLES).map(|i| (format!("v{i}"), "x".repeat(MAX_VARIABLE_VALUE_CHARS))).collect();
    assert_eq!(set_variables(&config, &ports, "sms", ALICE, &at_limit, now, None), Ok(()));
}

#[test]
fn a_disabled_gate_refuses_admin_calls_and_records_nothing() {
    let world = World::new();
    let ports = world.ports();
    let off = GateConfig::default();
    let now = at("08:00", 0);
    assert!(
        matches!(consent(&off, &ports, "sms", ALICE, None, None, now, None), Err(PolicyError::Other(m)) if m.contains("not configured"))
    );
    assert!(matches!(opt_out(&off, &ports, ALICE, now, None), Err(PolicyError::Other(_))));
    assert!(matches!(log(&off, &ports, 5), Err(PolicyError::Other(_))));
    assert!(matches!(status(&off, &ports), Err(PolicyError::Other(_))));
    assert_eq!(check(&off, &ports, &message("sms", ALICE, "x", None, now)), None);
    assert!(world.storage.is_empty());
}

#[test]
fn revoke_says_whether_there_was_a_consent_and_status_counts_what_is_stored() {
    let world = World::new();
    let ports = world.ports();
    let config = base_config();
    let now = at("08:00", 0);
    consent(&config, &ports, "sms", ALICE, None, None, now, None).expect("consent");
    consent(&config, &ports, "email", ALICE, None, None, now, None).expect("consent");
    opt_out(&config, &ports, "+15550111", now, None).expect("optout");
    opt_out(&config, &ports, "+15550111", now + 1, None).expect("repeated optout");
    let sent = OutcomeReport {
        channel: "sms".into(),
        recipient: ALICE.into(),
        delivery: Delivery::Sent,
        thread: None,
        now_ms: now,
        idempotency_key: None,
    };
    record_outcome(&config, &ports, &sent).expect("sent");
    assert_eq!(revoke(&config, &ports, "email", ALICE, now, None), Ok(true));
    assert_eq!(revoke(&config, &ports, "email", ALICE, now, None), Ok(false));
    let s = status(&config, &ports).expect("status");
    assert_eq!((s.consents, s.opt_outs, s.open_threads, s.entries), (1, 1, 1, 7));
    let events: Vec<String> = log(&config, &ports, MAX_LOG_LIMIT).expect("log").into_iter().map(|l| l.event).collect();
    // Last written first, whatever the times: the repeated opt-out is a millisecond later than the rest.
    assert_eq!(events, ["revoke", "revoke", "sent", "optout", "optout", "consent", "consent"]);
}

#[test]
fn stop_keywords_match_a_whole_reply_in_any_case() {
    let config = config_from(json!({"ownerOffset": "+00:00", "stopKeywords": ["STOP", "Unsubscribe"]})).expect("valid");
    for (reply, stop) in
        [("STOP", true), (" stop ", true), ("UNSUBSCRIBE", true), ("please stop", false), ("STOPP", false), ("", false)]
    {
        assert_eq!(is_stop_keyword(&config, reply), stop, "{reply:?}");
    }
}

#[cfg(feature = "schema")]
#[test]
fn the_schema_accepts_the_ledger_secret_it_never_serializes() {
    let schema = serde_json::to_value(schemars::schema_for!(crate::Config)).expect("schema");
    let gate = &schema["$defs"]["GateConfig"]["properties"];
    assert_eq!(gate["ledgerSecret"]["minLength"], MIN_SECRET_CHARS);
    assert!(gate["ownerOffset"].is_object());
    let classifier = &schema["$defs"]["ClassifierConfig"]["properties"];
    assert!(classifier["model"].is_object() && classifier.get("url").is_none());
}

#[test]
fn name_and_list_limits_hold_at_their_bounds() {
    let world = World::new();
    let ports = world.ports();
    let config = base_config();
    let now = at("08:00", 0);
    let channel = "c".repeat(MAX_CHANNEL_CHARS);
    assert_eq!(consent(&config, &ports, &channel, ALICE, None, None, now, None), Ok(()));
    assert!(consent(&config, &ports, &format!("{channel}c"), ALICE, None, None, now, None).is_err());
    let recipient = "9".repeat(MAX_RECIPIENT_CHARS);
    assert_eq!(consent(&config, &ports, "sms", &recipient, None, Some(&"h".repeat(MAX_HOW_CHARS)), now, None), Ok(()));
    let thread = "t".repeat(MAX_THREAD_CHARS);
    assert_eq!(reply(&config, &ports, "sms", ALICE, Some(&thread), now, None), Ok(()));
    assert!(reply(&config, &ports, "sms", ALICE, Some(&format!("{thread}t")), now, None).is_err());
    let keywords: Vec<String> = (0..MAX_STOP_KEYWORDS).map(|i| format!("STOP{i}")).collect();
    assert!(config_from(json!({"ownerOffset": "+00:00", "stopKeywords": keywords})).is_ok());
    let too_many: Vec<String> = (0..=MAX_STOP_KEYWORDS).map(|i| format!("STOP{i}")).collect();
    assert!(config_from(json!({"ownerOffset": "+00:00", "stopKeywords": too_many})).is_err());
    let word = "S".repeat(MAX_STOP_KEYWORD_CHARS);
    assert!(config_from(json!({"ownerOffset": "+00:00", "stopKeywords": [word.clone()]})).is_ok());
    assert!(config_from(json!({"ownerOffset": "+00:00", "stopKeywords": [format!("{word}S")]})).is_err());
}

#[test]
fn status_counts_stop_at_the_scan_limit() {
    let world = World::new();
    let ports = world.ports();
    let config = base_config();
    for i in 0..=MAX_STATUS_SCAN {
        store::put_json(
            &world.storage,
            NAMESPACE,
            &format!("{}{i:08}", ledger::OPT_OUT_PREFIX),
            &OptOutRecord { at_ms: 0 },
            Condition::Any,
        )
        .expect("seed");
    }
    assert_eq!(status(&config, &ports).map(|s| s.opt_outs), Ok(u64::from(MAX_STATUS_SCAN)));
    world.storage.delete(NAMESPACE, &format!("{}{:08}", ledger::OPT_OUT_PREFIX, 0), Condition::Any).expect("delete");
    assert_eq!(status(&config, &ports).map(|s| s.opt_outs), Ok(u64::from(MAX_STATUS_SCAN)));
    world.storage.delete(NAMESPACE, &format!("{}{:08}", ledger::OPT_OUT_PREFIX, 1), Condition::Any).expect("delete");
    assert_eq!(status(&config, &ports).map(|s| s.opt_outs), Ok(u64::from(MAX_STATUS_SCAN) - 1));
}

/// Storage whose ledger-line writes lose the race a set number of times.
struct Contended<'a> {
    inner: &'a MemoryStorage,
    losses: Cell<usize>,
}

impl Storage for Contended<'_> {
    fn get(&self, ns: &str, key: &str) -> Result<Option<Entry>, StorageError> {
        self.inner.get(ns, key)
    }

    fn set(&self, ns: &str, key: &str, value: &[u8], when: Condition) -> Result<u64, StorageError> {
        if key.starts_with(ledger::LOG_PREFIX) && self.losses.get() > 0 {
            self.losses.set(self.losses.get() - 1);
            return Err(StorageError::Conflict);
        }
        self.inner.set(ns, key, value, when)
    }

    fn delete(&self, ns: &str, key: &str, when: Condition) -> Result<bool, StorageError> {
        self.inner.delete(ns, key, when)
    }

    fn list(&self, ns: &str, prefix: &str, limit: u32, reverse: bool) -> Result<Vec<(String, Entry)>, StorageError> {
        self.inner.list(ns, prefix, limit, reverse)
    }

    fn commit(&self, writes: &[Write]) -> Result<(), BatchError> {
        let line =
            writes.iter().position(|w| matches!(w, Write::Put { key, .. } if key.starts_with(ledger::LOG_PREFIX)));
        if let Some(i) = line
            && self.losses.get() > 0
        {
            self.losses.set(self.losses.get() - 1);
            return Err(BatchError::Conflict(i));
        }
        self.inner.commit(writes)
    }
}

#[test]
fn a_ledger_line_retries_up_to_the_attempt_limit_then_holds_the_message_back() {
    let config = base_config();
    let m = message("sms", ALICE, "Reminder: your appointment is tomorrow.", None, at("12:00", 0));
    for (losses, rule) in
        [(ledger::MAX_APPEND_ATTEMPTS - 1, rules::ROUTINE), (ledger::MAX_APPEND_ATTEMPTS, rules::STORAGE_UNAVAILABLE)]
    {
        let inner = MemoryStorage::default();
        let http = ScriptedHttp::unreachable();
        let log_port = VecLog::default();
        let direct = Ports { http: &http, storage: &inner, log: &log_port };
        consent(&config, &direct, "sms", ALICE, None, None, at("08:00", 0), None).expect("consent");
        let contended = Contended { inner: &inner, losses: Cell::new(losses) };
        let ports = Ports { http: &http, storage: &contended, log: &log_port };
        assert_eq!(check(&config, &ports, &m).map(|v| v.rule), Some(rule.to_string()), "{losses} lost races");
    }
}

fn sent_with(key: Option<&str>, thread: &str, now_ms: u64) -> OutcomeReport {
    OutcomeReport {
        channel: "sms".into(),
        recipient: ALICE.into(),
        delivery: Delivery::Sent,
        thread: Some(thread.into()),
        now_ms,
        idempotency_key: key.map(Into::into),
    }
}

/// Every ledger line, the totals and the thread records, for comparing states.
fn lines_and_totals(world: &World) -> (u64, u64, u64) {
    let lines = world.storage.list(NAMESPACE, ledger::LOG_PREFIX, 100_000, false).expect("lines").len() as u64;
    let totals = ledger::stats(&world.storage).expect("stats").entries;
    let sends = world
        .storage
        .list(NAMESPACE, ledger::THREAD_PREFIX, 1000, false)
        .expect("threads")
        .iter()
        .map(|(_, e)| serde_json::from_slice::<ThreadRecord>(&e.value).map(|t| t.sends).unwrap_or(0))
        .sum();
    (lines, totals, sends)
}

#[test]
fn a_retried_outcome_with_the_same_idempotency_key_is_recorded_once() {
    let world = World::new();
    let ports = world.ports();
    let config = base_config();
    let now = at("09:00", 0);
    record_outcome(&config, &ports, &sent_with(Some("send-1"), "t", now)).expect("first");
    // The retry is stamped later, as a host that stamps on each attempt would.
    record_outcome(&config, &ports, &sent_with(Some("send-1"), "t", now + 5_000)).expect("retry");
    assert_eq!(lines_and_totals(&world), (1, 1, 1));
    record_outcome(&config, &ports, &sent_with(Some("send-2"), "t", now)).expect("another send");
    record_outcome(&config, &ports, &sent_with(None, "t", now)).expect("unkeyed");
    record_outcome(&config, &ports, &sent_with(None, "t", now)).expect("unkeyed again");
    assert_eq!(lines_and_totals(&world), (4, 4, 4));
}

#[test]
fn an_idempotency_key_reused_for_a_different_request_is_refused_and_writes_nothing() {
    let world = World::new();
    let ports = world.ports();
    let config = base_config();
    let now = at("09:00", 0);
    record_outcome(&config, &ports, &sent_with(Some("k"), "t", now)).expect("first");
    let before = world.storage.dump();
    let other_thread = record_outcome(&config, &ports, &sent_with(Some("k"), "u", now));
    assert!(
        matches!(&other_thread, Err(PolicyError::InvalidInput(m)) if m.starts_with("idempotencyKey: was already used for a different request")),
        "{other_thread:?}"
    );
    assert_eq!(world.storage.dump(), before);
    // One key may name one request of each operation.
    consent(&config, &ports, "sms", ALICE, None, None, now, Some("k")).expect("a consent under the same key");
    consent(&config, &ports, "sms", ALICE, None, None, now, Some("k")).expect("its retry");
    assert_eq!(status(&config, &ports).map(|s| (s.consents, s.entries)), Ok((1, 2)));
}

#[test]
fn every_gate_admin_call_records_once_per_idempotency_key() {
    let world = World::new();
    let ports = world.ports();
    let config = base_config();
    let now = at("09:00", 0);
    let vars = [("first".to_string(), "Ada".to_string())];
    for attempt in 0..3 {
        let t = now + attempt;
        consent(&config, &ports, "sms", ALICE, Some("+01:00"), Some("form"), t, Some("c")).expect("consent");
        set_variables(&config, &ports, "sms", ALICE, &vars, t, Some("v")).expect("variables");
        reply(&config, &ports, "sms", ALICE, Some("t"), t, Some("r")).expect("reply");
        opt_out(&config, &ports, "+15550111", t, Some("o")).expect("optout");
    }
    // A revocation answers as the first did, though the consent is gone by the retry.
    assert_eq!(revoke(&config, &ports, "sms", ALICE, now, Some("x")), Ok(true));
    assert_eq!(revoke(&config, &ports, "sms", ALICE, now, Some("x")), Ok(true));
    assert_eq!(revoke(&config, &ports, "sms", ALICE, now, Some("y")), Ok(false));
    let lines = log(&config, &ports, MAX_LOG_LIMIT).expect("log");
    let events: Vec<&str> = lines.iter().rev().map(|l| l.event.as_str()).collect();
    assert_eq!(events, ["consent", "variables", "reply", "optout", "revoke", "revoke"]);
    assert_eq!(status(&config, &ports).map(|s| (s.consents, s.opt_outs, s.entries)), Ok((0, 1, 6)));
}

#[test]
fn idempotency_keys_are_checked_at_and_past_their_bound_and_by_alphabet() {
    let world = World::new();
    let ports = world.ports();
    let config = base_config();
    let now = at("09:00", 0);
    let longest = "k".repeat(crate::idempotency::MAX_KEY_CHARS);
    assert_eq!(opt_out(&config, &ports, ALICE, now, Some(&longest)), Ok(()));
    assert_eq!(opt_out(&config, &ports, ALICE, now, Some("a.b_c:d-9")), Ok(()));
    let writes = world.storage.writes();
    for bad in [format!("{longest}k"), String::new(), "a b".into(), "ключ".into(), "a/b".into(), "a\nb".into()] {
        let e = opt_out(&config, &ports, ALICE, now, Some(&bad));
        assert!(
            matches!(&e, Err(PolicyError::InvalidInput(m)) if m.starts_with("idempotencyKey: `") && m.contains("must be 1 to 128 characters")),
            "{bad:?}: {e:?}"
        );
    }
    assert_eq!(world.storage.writes(), writes, "refused keys wrote nothing");
}

#[test]
fn an_idempotency_key_expires_after_its_retention_and_old_keys_are_pruned() {
    use crate::idempotency::{BY_TIME_PREFIX, MAX_PRUNED, PREFIX, RETENTION_MS};
    let world = World::new();
    let ports = world.ports();
    let config = base_config();
    let t0 = at("09:00", 0);
    let keys = |w: &World| w.storage.list(NAMESPACE, PREFIX, 10_000, false).expect("keys").len();
    for i in 0..20 {
        record_outcome(&config, &ports, &sent_with(Some(&format!("k{i}")), "t", t0 + i)).expect("send");
    }
    assert_eq!(keys(&world), 20);
    // Just inside the retention the key still holds; at it, the key is new again.
    record_outcome(&config, &ports, &sent_with(Some("k0"), "t", t0 + RETENTION_MS - 1)).expect("retry");
    assert_eq!(lines_and_totals(&world).0, 20);
    record_outcome(&config, &ports, &sent_with(Some("k0"), "t", t0 + RETENTION_MS)).expect("expired");
    assert_eq!(lines_and_totals(&world).0, 21);
    // Each keyed write after the retention removes at most MAX_PRUNED expired keys.
    let later = t0 + 2 * RETENTION_MS;
    record_outcome(&config, &ports, &sent_with(Some("fresh-1"), "t", later)).expect("fresh");
    assert_eq!(keys(&world), 20 + 1 - MAX_PRUNED as usize);
    for i in 2..6 {
        record_outcome(&config, &ports, &sent_with(Some(&format!("fresh-{i}")), "t", later)).expect("fresh");
    }
    assert_eq!(keys(&world), 5, "only the fresh keys are left");
    let index = world.storage.list(NAMESPACE, BY_TIME_PREFIX, 10_000, false).expect("index").len();
    assert_eq!(index, 5);
}

#[test]
fn a_failed_commit_leaves_no_line_no_total_and_no_thread_change() {
    let world = World::new();
    let ports = world.ports();
    let config = base_config();
    consent(&config, &ports, "sms", ALICE, None, None, at("08:00", 0), None).expect("consent");
    let before = world.storage.dump();
    world.storage.fail_commits_with(StorageError::Unavailable("disk full".into()));
    let e = record_outcome(&config, &ports, &sent_with(Some("k"), "t", at("09:00", 0)));
    assert!(matches!(&e, Err(PolicyError::Storage(m)) if m.contains("disk full")), "{e:?}");
    let m = message("sms", ALICE, "Reminder: your appointment is tomorrow.", None, at("12:00", 0));
    let v = check(&config, &ports, &m).expect("verdict");
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Deny, rules::STORAGE_UNAVAILABLE));
    assert_eq!(world.storage.dump(), before, "nothing of either batch is visible");
    // Once the storage heals, the retry with the same key records exactly once.
    world.storage.heal();
    record_outcome(&config, &ports, &sent_with(Some("k"), "t", at("09:01", 0))).expect("retry");
    record_outcome(&config, &ports, &sent_with(Some("k"), "t", at("09:02", 0))).expect("retry again");
    assert_eq!(lines_and_totals(&world), (2, 2, 1));
}

#[test]
fn a_conflict_storm_fails_closed_after_the_attempt_limit_and_writes_nothing() {
    let world = World::new();
    let ports = world.ports();
    let config = base_config();
    consent(&config, &ports, "sms", ALICE, None, None, at("08:00", 0), None).expect("consent");
    let m = message("sms", ALICE, "Reminder: your appointment is tomorrow.", None, at("12:00", 0));
    let before = world.storage.dump();
    world.storage.lose_commits(ledger::MAX_APPEND_ATTEMPTS);
    let v = check(&config, &ports, &m).expect("verdict");
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Deny, rules::STORAGE_UNAVAILABLE));
    world.storage.lose_commits(ledger::MAX_APPEND_ATTEMPTS);
    let e = record_outcome(&config, &ports, &sent_with(None, "t", at("12:00", 0)));
    assert!(matches!(&e, Err(PolicyError::Storage(_))), "{e:?}");
    assert_eq!(world.storage.dump(), before);
    // One lost race fewer than the limit still records, once.
    world.storage.lose_commits(ledger::MAX_APPEND_ATTEMPTS - 1);
    let v = check(&config, &ports, &m).expect("verdict");
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Allow, rules::ROUTINE));
    assert_eq!(lines_and_totals(&world), (2, 2, 0));
}

#[test]
fn the_totals_equal_the_lines_after_interleaved_writers() {
    let world = World::new();
    let ports = world.ports();
    let config = base_config();
    consent(&config, &ports, "sms", ALICE, None, None, at("08:00", 0), None).expect("consent");
    let m = message("sms", ALICE, "Reminder: your appointment is tomorrow.", Some("t"), at("12:00", 0));
    for i in 0..30 {
        // Every third batch loses a race first, as under load.
        if i % 3 == 0 {
            world.storage.lose_commits(1);
        }
        assert!(check(&config, &ports, &m).is_some());
        record_outcome(&config, &ports, &sent_with(None, "t", at("12:00", 0))).expect("sent");
    }
    let (lines, totals, sends) = lines_and_totals(&world);
    assert_eq!((lines, totals, sends), (61, 61, 30));
    let s = status(&config, &ports).expect("status");
    let decided: u64 = s.decisions.iter().map(|(_, n)| n).sum();
    assert_eq!(decided, 30);
}

fn gap_config() -> GateConfig {
    config_from(json!({
        "ownerOffset": "+00:00",
        "minGapSeconds": 600,
        "templates": ["Reminder: your appointment is tomorrow."]
    }))
    .expect("valid")
}

#[test]
fn a_pass_under_min_gap_reserves_the_thread_so_the_next_check_asks_before_any_send() {
    let world = World::new();
    let ports = world.ports();
    let config = gap_config();
    consent(&config, &ports, "sms", ALICE, None, None, at("08:00", 0), None).expect("consent");
    let first = message("sms", ALICE, "Reminder: your appointment is tomorrow.", Some("t"), at("12:00", 0));
    let v = check(&config, &ports, &first).expect("verdict");
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Allow, rules::ROUTINE));
    let again = message("sms", ALICE, "Reminder: your appointment is tomorrow.", Some("t"), at("12:01", 0));
    let v = check(&config, &ports, &again).expect("verdict");
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Ask, rules::MIN_GAP));
    // Another thread is not held, and the gap ends on time.
    let other = message("sms", ALICE, "Reminder: your appointment is tomorrow.", Some("u"), at("12:01", 0));
    assert_eq!(check(&config, &ports, &other).map(|v| v.rule), Some(rules::ROUTINE.to_string()));
    let later = message("sms", ALICE, "Reminder: your appointment is tomorrow.", Some("t"), at("12:10", 0));
    assert_eq!(check(&config, &ports, &later).map(|v| v.rule), Some(rules::ROUTINE.to_string()));
}

#[test]
fn without_min_gap_a_pass_writes_no_thread_record() {
    let world = World::new();
    let ports = world.ports();
    let config = base_config();
    consent(&config, &ports, "sms", ALICE, None, None, at("08:00", 0), None).expect("consent");
    let m = message("sms", ALICE, "Reminder: your appointment is tomorrow.", Some("t"), at("12:00", 0));
    assert_eq!(check(&config, &ports, &m).map(|v| v.rule), Some(rules::ROUTINE.to_string()));
    let threads = world.storage.list(NAMESPACE, ledger::THREAD_PREFIX, 10, false).expect("list");
    assert!(threads.is_empty(), "{threads:?}");
}

/// Storage that, at the first batch holding a ledger line, lets another
/// gateway's check of the same message commit first.
struct RacingCheck<'a> {
    inner: &'a MemoryStorage,
    config: &'a GateConfig,
    other: RefCell<Option<OutboundMessage>>,
    other_verdict: RefCell<Option<Verdict>>,
}

impl Storage for RacingCheck<'_> {
    fn get(&self, ns: &str, key: &str) -> Result<Option<Entry>, StorageError> {
        self.inner.get(ns, key)
    }

    fn set(&self, ns: &str, key: &str, value: &[u8], when: Condition) -> Result<u64, StorageError> {
        self.inner.set(ns, key, value, when)
    }

    fn delete(&self, ns: &str, key: &str, when: Condition) -> Result<bool, StorageError> {
        self.inner.delete(ns, key, when)
    }

    fn list(&self, ns: &str, prefix: &str, limit: u32, reverse: bool) -> Result<Vec<(String, Entry)>, StorageError> {
        self.inner.list(ns, prefix, limit, reverse)
    }

    fn commit(&self, writes: &[Write]) -> Result<(), BatchError> {
        let other = self.other.borrow_mut().take();
        if let Some(m) = other {
            let http = ScriptedHttp::unreachable();
            let log = VecLog::default();
            let ports = Ports { http: &http, storage: self.inner, log: &log };
            *self.other_verdict.borrow_mut() = check(self.config, &ports, &m);
        }
        self.inner.commit(writes)
    }
}

#[test]
fn two_gateways_checking_one_thread_at_once_cannot_both_pass_inside_the_gap() {
    let config = gap_config();
    let inner = MemoryStorage::default();
    let http = ScriptedHttp::unreachable();
    let log = VecLog::default();
    let direct = Ports { http: &http, storage: &inner, log: &log };
    consent(&config, &direct, "sms", ALICE, None, None, at("08:00", 0), None).expect("consent");
    let m = message("sms", ALICE, "Reminder: your appointment is tomorrow.", Some("t"), at("12:00", 0));
    let racing = RacingCheck {
        inner: &inner,
        config: &config,
        other: RefCell::new(Some(m.clone())),
        other_verdict: RefCell::new(None),
    };
    let ports = Ports { http: &http, storage: &racing, log: &log };
    // Both read the thread before either committed: the other one commits first and passes.
    let v = check(&config, &ports, &m).expect("verdict");
    let other = racing.other_verdict.borrow().clone().expect("the other check ran");
    assert_eq!((other.decision, other.rule.as_str()), (Decision::Allow, rules::ROUTINE));
    // This one's batch conflicts on the thread, decides again, and sees the reservation.
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Ask, rules::MIN_GAP));
    // The consent's line and one line for each check, with the decision it answered.
    let lines = inner.list(NAMESPACE, ledger::LOG_PREFIX, 10, false).expect("list");
    assert_eq!(lines.len(), 3);
}
