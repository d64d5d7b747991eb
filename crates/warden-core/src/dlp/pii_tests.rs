//! Personal data and listed values: the detectors in both directions, their
//! configuration, and the decisions through the outbound checks.

use super::*;
use crate::config::Config;
use crate::dlp::listed::{self, ListedValues};
use crate::dlp::{MAX_BODY_BYTES, rules};
use crate::fakes::{MemoryStorage, ScriptedHttp, VecLog};
use crate::model::{Approval, Identity, Scope};
use crate::ports::{HttpError, Ports};
use serde_json::{Value, json};

fn message(direction: Direction, body: &str) -> OutboundMessage {
    OutboundMessage {
        direction,
        channel: "slack".into(),
        recipient: "U0123".into(),
        sender: Some("agent".into()),
        body: body.as_bytes().to_vec(),
        thread: None,
        message_id: None,
        session_id: None,
        now_ms: 1_717_372_800_000,
        identity: Identity::default(),
    }
}

fn config(dlp: Value) -> Config {
    Config::parse(&json!({ "dlp": dlp }).to_string()).expect("valid config")
}

fn errors(dlp: Value) -> Vec<String> {
    match Config::parse(&json!({ "dlp": dlp }).to_string()) {
        Ok(_) => Vec::new(),
        Err(errors) => errors.iter().map(ToString::to_string).collect(),
    }
}

/// The outbound decision and rule for `body` under `config`.
fn decide(config: &Config, body: &str) -> (Decision, String) {
    let http = ScriptedHttp::new(|_| Err(HttpError::Timeout));
    let storage = MemoryStorage::default();
    let log = VecLog::default();
    let ports = Ports { http: &http, storage: &storage, log: &log };
    let v = crate::outbound::check(config, &ports, &message(Direction::Outbound, body));
    (v.decision, v.rule)
}

/// `prefix` completed with its Luhn check digit.
fn with_check_digit(prefix: &str) -> String {
    (0..10).map(|d| format!("{prefix}{d}")).find(|n| luhn(n.as_bytes())).expect("one digit fits")
}

fn cards_hit(text: &str) -> Option<usize> {
    scan(text, true, false).first().map(|h| h.offset)
}

#[test]
fn card_numbers_in_their_usual_spellings_are_caught_where_they_start() {
    let cases: &[(&str, &str, usize)] = &[
        ("a visa test number in fours with spaces", "card 4111 1111 1111 1111 please", 5),
        ("a visa test number in fours with dashes", "4111-1111-1111-1111", 0),
        ("a visa test number written together", "n=4111111111111111", 2),
        ("a thirteen-digit visa", "old card 4222222222222.", 9),
        ("a mastercard in the 51-55 range", "pay with 5555555555554444 today", 9),
        ("a mastercard in the 2221-2720 range", "2223 0031 2200 3222", 0),
        ("an amex in 4-6-5", "amex 3782 822463 10005", 5),
        ("an amex written together", "378282246310005", 0),
        ("a discover", "6011 1111 1111 1117", 0),
        ("a jcb", "3530 1113 3330 0000", 0),
        ("a diners in 4-6-4", "3056 930902 5904", 0),
        ("a unionpay", "6200000000000005", 0),
        ("a maestro", "6759649826438453", 0),
        ("a card followed by its expiry", "4111 1111 1111 1111 12/27", 0),
        ("a card followed by a short code", "4111 1111 1111 1111 123", 0),
        ("a card after a short number", "room 12 4111 1111 1111 1111", 8),
        ("a card in mixed separators", "4111-1111 1111-1111", 0),
        ("a card with spaced dashes between its groups", "4111 - 1111 - 1111 - 1111", 0),
        ("a card with double spaces between its groups", "4111  1111  1111  1111", 0),
        ("a card in no-break spaces", "4111\u{a0}1111\u{a0}1111\u{a0}1111", 0),
        (
            "a card in full-width digits",
            "\u{ff14}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}",
            0,
        ),
        ("a card with zero-width spaces between its groups", "x 4111\u{200b}1111\u{200b}1111\u{200b}1111", 2),
        ("a card at the end of a sentence", "Use 4111111111111111.", 4),
        ("a card in quotes in JSON", "{\"pan\":\"4111111111111111\"}", 8),
    ];
    for (name, text, offset) in cases {
        assert_eq!(cards_hit(text), Some(*offset), "{name}: {text}");
    }
}

#[test]
fn numbers_that_only_look_like_cards_are_not_caught() {
    let timestamp = with_check_digit("171737280000");
    let no_network = with_check_digit("900000000000000");
    let cases: Vec<(&str, String)> = vec![
        ("a visa number that fails luhn", "4111 1111 1111 1112".into()),
        ("a luhn-valid number with no network's prefix", no_network),
        ("a luhn-valid millisecond timestamp", format!("at {timestamp}")),
        ("a visa of a length visa does not issue", with_check_digit("4111111111111")),
        ("an amex of sixteen digits", with_check_digit("341111111111111")),
        ("a card inside a longer run of digits", "041111111111111111".into()),
        ("a card followed by more digits", "41111111111111110".into()),
        ("a card window inside a longer series of four-digit groups", "1234 4111 1111 1111 1111 5678".into()),
        ("a card glued to letters", "x4111111111111111".into()),
        ("a card glued to an underscore", "id_4111111111111111".into()),
        ("a phone number with its plus", "+4111111111111111".into()),
        ("the integer part of a decimal", "4111111111111111.25".into()),
        ("the fraction of a decimal", "3.4111111111111111".into()),
        ("a card in odd groups", "41 1111 1111 1111 11".into()),
        ("a card with more separators between groups than a spelling uses", "4111    1111    1111    1111".into()),
        ("a phone number", "+1 415 555 2671".into()),
        ("an ISO date and time", "2024-06-03 12:00:00".into()),
    ];
    for (name, text) in cases {
        assert_eq!(cards_hit(&text), None, "{name}: {text}");
    }
}

#[test]
fn ibans_with_or_without_spaces_in_any_case_are_caught() {
    let cases: &[(&str, &str, usize)] = &[
        ("a german iban in groups", "to DE89 3704 0044 0532 0130 00 now", 3),
        ("a german iban written together", "DE89370400440532013000", 0),
        ("a german iban in lower case", "de89 3704 0044 0532 0130 00", 0),
        ("a british iban with letters in the account", "GB82 WEST 1234 5698 7654 32", 0),
        ("a british iban written together", "iban:GB82WEST12345698765432.", 5),
        ("the shortest, norwegian", "NO9386011117947", 0),
        ("a french iban with a letter late in it", "FR1420041010050500013M02606", 0),
        ("a german iban in groups with dashes", "DE89-3704-0044-0532-0130-00", 0),
        ("a swiss iban in no-break spaces", "CH93\u{a0}0076\u{a0}2011\u{a0}6238\u{a0}5295\u{a0}7", 0),
    ];
    for (name, text, offset) in cases {
        assert_eq!(scan(text, false, true).first().map(|h| (h.kind, h.offset)), Some((kinds::IBAN, *offset)), "{name}");
    }
}

#[test]
fn strings_that_only_look_like_ibans_are_not_caught() {
    let cases: &[(&str, &str)] = &[
        ("a german iban that fails mod-97", "DE89 3704 0044 0532 0130 01"),
        ("a german iban one character short", "DE89 3704 0044 0532 0130 0"),
        ("a german iban one character long", "DE893704004405320130001"),
        ("an unknown country", "XX89370400440532013000"),
        ("an iban glued to a word", "ADE89370400440532013000"),
        ("an iban in groups other than fours", "DE 89 3704 0044 0532 0130 00"),
        ("a product code", "AB12 3456 7890"),
    ];
    for (name, text) in cases {
        assert!(scan(text, true, true).is_empty(), "{name}: {text}");
    }
}

#[test]
fn the_checksums_are_the_published_ones() {
    assert!(luhn(b"79927398713"));
    assert!(!luhn(b"79927398710"));
    assert!(!luhn(b""));
    assert!(iban_checksum(b"GB82WEST12345698765432"));
    assert!(!iban_checksum(b"GB82WEST12345698765433"));
    assert!(!iban_checksum(b"GB8"));
    assert_eq!(network(b"378282246310005").map(|n| n.name), Some("amex"));
    assert_eq!(network(b"5555555555554444").map(|n| n.name), Some("mastercard"));
    assert_eq!(network(b"2720999999999999").map(|n| n.name), Some("mastercard"));
    assert_eq!(network(b"2721000000000000").map(|n| n.name), None);
    assert_eq!(iban_length(b"DE"), Some(22));
    assert!(IBAN_LENGTHS.windows(2).all(|w| w[0].0 < w[1].0), "the table is sorted and has no duplicates");
}

#[test]
fn card_lengths_are_bounded_exactly() {
    let thirteen = with_check_digit("422222222222");
    let nineteen = with_check_digit("411111111111111111");
    assert_eq!((thirteen.len(), nineteen.len()), (MIN_CARD_DIGITS, MAX_CARD_DIGITS));
    assert_eq!(cards_hit(&thirteen), Some(0));
    assert_eq!(cards_hit(&nineteen), Some(0));
    assert_eq!(cards_hit(&with_check_digit("42222222222")), None, "one digit short");
    assert_eq!(cards_hit(&with_check_digit("4111111111111111111")), None, "one digit long");
}

#[test]
fn hits_are_capped_at_max_pii_hits() {
    let at = |n: usize| vec!["4111111111111111"; n].join(" , ");
    assert_eq!(scan(&at(MAX_PII_HITS), true, true).len(), MAX_PII_HITS);
    assert_eq!(scan(&at(MAX_PII_HITS + 1), true, true).len(), MAX_PII_HITS);
    assert_eq!(scan(&at(MAX_PII_HITS - 1), true, true).len(), MAX_PII_HITS - 1);
}

fn listed_config(values: &[&str]) -> Config {
    config(json!({"listedValues": {"values": values}}))
}

#[test]
fn a_listed_value_is_caught_however_it_is_spelled_and_split() {
    let c = listed_config(&["Project Bluebird", "ACME-4471-22"]);
    let cases: &[(&str, &str)] = &[
        ("as listed", "status of Project Bluebird?"),
        ("in lower case", "project bluebird is late"),
        ("in upper case with an underscore", "PROJECT_BLUEBIRD"),
        ("split by hyphens", "project-blue-bird"),
        ("written together", "ProjectBluebird"),
        ("with a zero-width space inside", "Project Blue\u{200b}bird"),
        ("with a soft hyphen inside", "Pro\u{ad}ject Bluebird"),
        (
            "in full-width letters",
            "\u{ff30}\u{ff52}\u{ff4f}\u{ff4a}\u{ff45}\u{ff43}\u{ff54} \u{ff22}\u{ff4c}\u{ff55}\u{ff45}\u{ff42}\u{ff49}\u{ff52}\u{ff44}",
        ),
        ("with extra spaces and a line break", "Project   \n Bluebird"),
        ("an account number without its dashes", "account ACME447122."),
        ("an account number split across other punctuation", "acme/4471.22"),
    ];
    for (name, text) in cases {
        assert_eq!(decide(&c, text), (Decision::Deny, rules::LISTED_VALUE.into()), "{name}: {text}");
    }
}

#[test]
fn text_that_only_contains_part_of_a_listed_value_is_not_caught() {
    let c = listed_config(&["Project Bluebird", "ACME-4471-22"]);
    let cases: &[(&str, &str)] = &[
        ("one word of it", "the bluebird sings"),
        ("its words in another order", "bluebird project"),
        ("a longer word that starts with it", "Project Bluebirds"),
        ("a word that ends with it", "subproject bluebird"),
        ("an account number with another digit", "ACME-4471-223"),
        ("an account number glued to letters", "xacme447122"),
    ];
    for (name, text) in cases {
        assert_eq!(decide(&c, text), (Decision::Allow, rules::PRE_CHECKS_PASSED.into()), "{name}: {text}");
    }
}

#[test]
fn accents_case_and_sharp_s_fold_like_the_listed_value() {
    let c = listed_config(&["Jürgen Straße"]);
    for text in ["JURGEN STRASSE", "jürgen strasse", "Ju\u{308}rgen Straße"] {
        assert_eq!(decide(&c, text).1, rules::LISTED_VALUE, "{text}");
    }
}

#[test]
fn personal_data_is_off_by_default_and_each_kind_only_when_turned_on() {
    let card = "card 4111 1111 1111 1111";
    let iban = "iban DE89 3704 0044 0532 0130 00";
    let passed = (Decision::Allow, rules::PRE_CHECKS_PASSED.to_string());
    let none = config(json!({}));
    assert_eq!(decide(&none, card), passed);
    assert_eq!(decide(&none, iban), passed);
    let cards = config(json!({"pii": {"cards": true}}));
    assert_eq!(decide(&cards, card), (Decision::Deny, "dlp.pii.card".into()));
    assert_eq!(decide(&cards, iban), passed);
    let ibans = config(json!({"pii": {"ibans": true}}));
    assert_eq!(decide(&ibans, card), passed);
    assert_eq!(decide(&ibans, iban), (Decision::Deny, "dlp.pii.iban".into()));
    let off = config(json!({"pii": {"cards": false, "ibans": false, "action": "ask"}}));
    assert_eq!(decide(&off, card), passed);
}

#[test]
fn a_secret_still_decides_before_personal_data() {
    let c = config(json!({"pii": {"cards": true, "action": "ask"}}));
    let key = format!("AKIA{}", "Q2W3E4R5T6Y7U2I3");
    let (decision, rule) = decide(&c, &format!("4111 1111 1111 1111 and {key}"));
    assert_eq!((decision, rule.as_str()), (Decision::Deny, "dlp.secret.aws-access-key"));
}

#[test]
fn a_family_set_to_deny_decides_over_one_set_to_ask() {
    let c = config(json!({"pii": {"cards": true, "action": "ask"}, "listedValues": {"values": ["Bluebird"]}}));
    assert_eq!(decide(&c, "4111 1111 1111 1111 for bluebird"), (Decision::Deny, rules::LISTED_VALUE.into()));
    assert_eq!(decide(&c, "4111 1111 1111 1111"), (Decision::Ask, "dlp.pii.card".into()));
}

#[test]
fn personal_data_in_inbound_messages_is_not_judged() {
    let c = config(json!({"pii": {"cards": true, "ibans": true}, "listedValues": {"values": ["Bluebird"]}}));
    let http = ScriptedHttp::new(|_| Err(HttpError::Timeout));
    let (storage, log) = (MemoryStorage::default(), VecLog::default());
    let ports = Ports { http: &http, storage: &storage, log: &log };
    let v = crate::outbound::check(&c, &ports, &message(Direction::Inbound, "bluebird 4111 1111 1111 1111"));
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Allow, rules::PRE_CHECKS_PASSED));
}

#[test]
fn an_asked_card_is_sent_once_a_person_approves_that_exact_message() {
    let c = config(json!({"pii": {"cards": true, "action": "ask"}}));
    let http = ScriptedHttp::new(|_| Err(HttpError::Timeout));
    let (storage, log) = (MemoryStorage::default(), VecLog::default());
    let ports = Ports { http: &http, storage: &storage, log: &log };
    let m = message(Direction::Outbound, "refund to 4111 1111 1111 1111");
    let v = crate::outbound::check(&c, &ports, &m);
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Ask, "dlp.pii.card"));
    let key = v.approval_key.clone().expect("an ask carries its key");
    let approval = Approval {
        key,
        allow: true,
        scope: Scope::Once,
        session_id: None,
        call_id: None,
        now_ms: m.now_ms,
        idempotency_key: None,
    };
    crate::outbound::record_approval(&c, &ports, &approval).expect("recorded");
    let v = crate::outbound::check(&c, &ports, &m);
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Allow, crate::outbound::rules::APPROVED));
    let other = message(Direction::Outbound, "refund to 5555 5555 5555 4444");
    let v = crate::outbound::check(&c, &ports, &other);
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Ask, "dlp.pii.card"), "the approval covers one message");
    assert!(http.requests().is_empty(), "no classifier was asked");
}

#[test]
fn observe_mode_does_not_relax_personal_data() {
    let c = config(json!({"mode": "observe", "pii": {"cards": true}}));
    assert_eq!(decide(&c, "4111111111111111"), (Decision::Deny, "dlp.pii.card".into()));
}

#[test]
fn verdicts_name_the_kind_and_position_but_never_the_number_or_value() {
    let c = config(json!({"pii": {"cards": true, "ibans": true}, "listedValues": {"values": ["Project Bluebird"]}}));
    let text = "4111 1111 1111 1111 / DE89370400440532013000 / project bluebird";
    let v = personal(&c.dlp, &message(Direction::Outbound, text), text).expect("hit");
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Deny, "dlp.pii.card"));
    let details: Vec<String> = v.signals.iter().map(|s| format!("{}={}", s.name, s.detail)).collect();
    assert_eq!(
        details,
        ["dlp.pii=card at character 0", "dlp.pii=iban at character 22", "dlp.listed-value=at character 47"]
    );
    let everything = format!("{} {details:?} {:?}", v.reason, c);
    for leaked in ["4111", "DE89", "bluebird", "Bluebird"] {
        assert!(!everything.contains(leaked), "`{leaked}` shown in {everything}");
    }
}

#[test]
fn listed_values_are_kept_only_as_keyed_hashes() {
    let c = listed_config(&["Project Bluebird"]);
    let kept = serde_json::to_string(&c).expect("serializes");
    assert!(!kept.to_lowercase().contains("bluebird"), "{kept}");
    assert!(kept.contains(listed::HASHED_PREFIX), "{kept}");
    assert!(!format!("{c:?}").to_lowercase().contains("bluebird"));
    assert_ne!(c.policy_version(), listed_config(&["Project Redbird"]).policy_version());
    assert_eq!(c.policy_version(), listed_config(&["project-bluebird"]).policy_version(), "one normalized value");
}

#[test]
fn hashed_entries_match_like_the_plain_values_they_were_made_from() {
    let key = "k".repeat(listed::MIN_LISTED_KEY_CHARS);
    let entry = listed::hashed_entry(&key, "Project Bluebird").expect("listable");
    assert!(entry.starts_with("hmac-sha256:15:"), "{entry}");
    let c = config(json!({"listedValues": {"hashed": [entry], "key": key, "action": "ask"}}));
    assert_eq!(decide(&c, "PROJECT-BLUEBIRD"), (Decision::Ask, rules::LISTED_VALUE.into()));
    let other_key = config(json!({"listedValues": {"hashed": [entry], "key": "z".repeat(16)}}));
    assert_eq!(decide(&other_key, "PROJECT-BLUEBIRD").1, rules::PRE_CHECKS_PASSED, "a hash under another key");
    let both = config(json!({"listedValues": {"values": ["Project Bluebird"], "key": key}}));
    assert_eq!(
        both.policy_version(),
        config(json!({"listedValues": {"hashed": [entry], "key": key}})).policy_version()
    );
}

#[test]
fn bad_personal_data_settings_are_refused_with_path_value_and_what_is_allowed() {
    let cases: Vec<(Value, &str)> = vec![
        (json!({"pii": {"cards": "yes"}}), "dlp.pii.cards: must be `true` or `false`, got `\"yes\"`"),
        (json!({"pii": {"action": "block"}}), "dlp.pii.action: must be `deny` or `ask`, got `\"block\"`"),
        (
            json!({"pii": {"phones": true}}),
            "dlp.pii.phones: unknown field; allowed fields are `cards`, `ibans`, `action`",
        ),
        (json!({"pii": true}), "dlp.pii: must be an object, got `true`"),
        (
            json!({"listedValues": {"action": "allow"}}),
            "dlp.listedValues.action: must be `deny` or `ask`, got `\"allow\"`",
        ),
        (
            json!({"listedValues": {"values": "Bluebird"}}),
            "dlp.listedValues.values: must be a list of strings (the value is not shown)",
        ),
        (
            json!({"listedValues": {"hashed": [listed::hashed_entry(&"k".repeat(16), "abc")]}}),
            "dlp.listedValues.key: is required with `hashed`: the key the entries were hashed with",
        ),
        (
            json!({"listedValues": {"values": ["x"], "unknown": 1}}),
            "dlp.listedValues.unknown: unknown field; allowed fields are `values`, `hashed`, `key`, `action`",
        ),
    ];
    for (dlp, expected) in cases {
        let got = errors(dlp.clone());
        assert!(got.iter().any(|e| e == expected), "{dlp}: {got:?}");
    }
}

#[test]
fn errors_about_listed_values_never_show_them() {
    let secret_key = "short-key-123";
    let long = "Bluebird".repeat(listed::MAX_LISTED_VALUE_CHARS / 8 + 1);
    let cases: Vec<(Value, String)> = vec![
        (
            json!({"values": [4471_2233]}),
            "dlp.listedValues.values[0]: must be a string (the value is not shown)".into(),
        ),
        (
            json!({"values": ["ok value", "B-7"]}),
            format!(
                "dlp.listedValues.values[1]: must have at least {} letters or digits after normalization, got 2 (the value is not shown)",
                listed::MIN_LISTED_VALUE_CHARS
            ),
        ),
        (
            json!({"values": [long]}),
            format!(
                "dlp.listedValues.values[0]: must be at most {} characters, got {}",
                listed::MAX_LISTED_VALUE_CHARS,
                long.chars().count()
            ),
        ),
        (
            json!({"values": ["one two three four five six seven eight nine"]}),
            format!(
                "dlp.listedValues.values[0]: must be at most {} words after normalization, got 9 (the value is not shown)",
                listed::MAX_LISTED_VALUE_WORDS
            ),
        ),
        (
            json!({"hashed": ["Bluebird"], "key": "k".repeat(16)}),
            format!(
                "dlp.listedValues.hashed[0]: must be `hmac-sha256:<characters>:<64 lowercase hex digits>` with {} to {} characters (the entry is not shown)",
                listed::MIN_LISTED_VALUE_CHARS,
                listed::MAX_LISTED_VALUE_CHARS
            ),
        ),
        (
            json!({"values": ["Bluebird"], "key": secret_key}),
            format!(
                "dlp.listedValues.key: must be {} to {} characters, got {} (the key is not shown)",
                listed::MIN_LISTED_KEY_CHARS,
                listed::MAX_LISTED_KEY_CHARS,
                secret_key.len()
            ),
        ),
    ];
    for (section, expected) in cases {
        let got = errors(json!({ "listedValues": section }));
        assert_eq!(got, core::slice::from_ref(&expected), "{section}");
        for leaked in ["4471", "B-7", "Bluebird", "bluebird", secret_key] {
            assert!(!got.iter().any(|e| e.contains(leaked)), "`{leaked}` shown in {got:?}");
        }
    }
}

#[test]
fn listed_value_limits_hold_exactly_at_and_just_past_each_bound() {
    let many = |n: usize| (0..n).map(|i| format!("value number {i}")).collect::<Vec<_>>();
    assert!(errors(json!({"listedValues": {"values": many(listed::MAX_LISTED_VALUES)}})).is_empty());
    let over = errors(json!({"listedValues": {"values": many(listed::MAX_LISTED_VALUES + 1)}}));
    assert!(over.iter().any(|e| e.contains(&format!("at most {} items", listed::MAX_LISTED_VALUES))), "{over:?}");
    let key = "k".repeat(listed::MIN_LISTED_KEY_CHARS);
    let split = many(listed::MAX_LISTED_VALUES / 2 + 1);
    let hashed: Vec<String> = split.iter().filter_map(|v| listed::hashed_entry(&key, v)).collect();
    let together = errors(json!({"listedValues": {"values": split, "hashed": hashed, "key": key}}));
    assert!(
        together.iter().any(|e| e.starts_with(&format!("dlp.listedValues: at most {}", listed::MAX_LISTED_VALUES))),
        "{together:?}"
    );

    let at_chars = "b".repeat(listed::MAX_LISTED_VALUE_CHARS);
    assert!(errors(json!({"listedValues": {"values": [at_chars]}})).is_empty());
    assert_eq!(errors(json!({"listedValues": {"values": [format!("{at_chars}b")]}})).len(), 1);
    let at_min = "a-b-c";
    assert!(errors(json!({"listedValues": {"values": [at_min]}})).is_empty());
    assert_eq!(errors(json!({"listedValues": {"values": ["a-b"]}})).len(), 1);
    let words = |n: usize| (0..n).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ");
    assert!(errors(json!({"listedValues": {"values": [words(listed::MAX_LISTED_VALUE_WORDS)]}})).is_empty());
    assert_eq!(errors(json!({"listedValues": {"values": [words(listed::MAX_LISTED_VALUE_WORDS + 1)]}})).len(), 1);
    for (n, ok) in [
        (listed::MIN_LISTED_KEY_CHARS, true),
        (listed::MIN_LISTED_KEY_CHARS - 1, false),
        (listed::MAX_LISTED_KEY_CHARS, true),
        (listed::MAX_LISTED_KEY_CHARS + 1, false),
    ] {
        assert_eq!(errors(json!({"listedValues": {"values": ["abc"], "key": "k".repeat(n)}})).is_empty(), ok, "{n}");
    }
}

#[test]
fn a_match_spans_at_most_max_listed_value_words_of_the_message() {
    let c = listed_config(&["abcdefghi"]);
    let pieces = |n: usize| {
        let letters: Vec<char> = "abcdefghi".chars().collect();
        let mut parts: Vec<String> = letters.iter().take(n - 1).map(|c| c.to_string()).collect();
        parts.push(letters.iter().skip(n - 1).collect());
        parts.join(" ")
    };
    assert_eq!(decide(&c, &pieces(listed::MAX_LISTED_VALUE_WORDS)).1, rules::LISTED_VALUE);
    assert_eq!(decide(&c, &pieces(listed::MAX_LISTED_VALUE_WORDS + 1)).1, rules::PRE_CHECKS_PASSED);
}

#[test]
fn listed_value_hits_are_capped_at_max_listed_hits() {
    let c = listed_config(&["Bluebird"]);
    let at = |n: usize| vec!["bluebird"; n].join(" and ");
    assert_eq!(c.dlp.listed_values.scan(&at(listed::MAX_LISTED_HITS)).len(), listed::MAX_LISTED_HITS);
    assert_eq!(c.dlp.listed_values.scan(&at(listed::MAX_LISTED_HITS + 1)).len(), listed::MAX_LISTED_HITS);
    assert!(ListedValues::default().scan(&at(3)).is_empty());
}

#[test]
fn a_largest_message_against_a_full_list_is_scanned_in_bounded_time() {
    let values: Vec<String> =
        (0..listed::MAX_LISTED_VALUES).map(|i| format!("client {i} {}", "x".repeat(i % 40))).collect();
    let c = config(json!({"pii": {"cards": true, "ibans": true}, "listedValues": {"values": values}}));
    let body = "ab 1234 ".repeat(MAX_BODY_BYTES / 8);
    assert_eq!(body.len(), MAX_BODY_BYTES);
    let started = std::time::Instant::now();
    assert_eq!(decide(&c, &body).1, rules::PRE_CHECKS_PASSED);
    assert!(started.elapsed() < std::time::Duration::from_secs(2), "took {:?}", started.elapsed());
}

#[test]
fn sections_that_turn_nothing_on_leave_the_policy_version_as_it_was() {
    let plain = config(json!({}));
    let off = config(json!({"pii": {"cards": false, "action": "ask"}, "listedValues": {"values": []}}));
    assert_eq!(plain.policy_version(), off.policy_version());
    assert_eq!(crate::outbound::policy_version(&plain), crate::outbound::policy_version(&off));
    assert_ne!(plain.policy_version(), config(json!({"pii": {"cards": true}})).policy_version());
    assert_ne!(
        config(json!({"pii": {"cards": true}})).policy_version(),
        config(json!({"pii": {"cards": true, "action": "ask"}})).policy_version()
    );
}

#[test]
fn a_hashed_entry_is_the_documented_hmac_of_the_normalized_value() {
    // `printf %s projectbluebird | openssl dgst -sha256 -hmac an-operator-key-0001`
    let expected = "hmac-sha256:15:1cd7a3614206cf129263b4c2bec697c978f1ea16a670b699601ec6eb335bf8ef";
    assert_eq!(listed::hashed_entry("an-operator-key-0001", "Project Bluebird").as_deref(), Some(expected));
    assert_eq!(listed::normalized("Project Bluebird").as_deref(), Ok("projectbluebird"));
    assert_eq!(listed::hashed_entry("an-operator-key-0001", "a-b"), None, "too short to list");
}

#[test]
fn card_separators_are_bounded_exactly() {
    let spaced = |n: usize| ["4111", "1111", "1111", "1111"].join(&" ".repeat(n));
    assert_eq!(cards_hit(&spaced(MAX_CARD_SEPARATOR_CHARS)), Some(0));
    assert_eq!(cards_hit(&spaced(MAX_CARD_SEPARATOR_CHARS + 1)), None);
}

proptest::proptest! {
    #[test]
    fn any_text_is_scanned_without_panicking_and_hits_point_inside_it(
        text in "[0-9 \\-+.A-Za-z\u{a0}\u{200b}\u{ff10}-\u{ff19}ßΣς\u{308}]{0,120}"
    ) {
        let c = listed_config(&["Project Bluebird", "ACME-4471-22", "Σίσυφος"]);
        let n = text.chars().count();
        for hit in scan(&text, true, true) {
            proptest::prop_assert!(hit.offset < n, "{:?} in {:?}", hit, text);
        }
        for at in c.dlp.listed_values.scan(&text) {
            proptest::prop_assert!(at < n, "{} in {:?}", at, text);
        }
    }
}
