use super::*;
use crate::fakes::{MemoryStorage, ScriptedHttp, VecLog};
use crate::model::Identity;
use crate::ports::{HttpError, HttpResponse};
use proptest::prelude::*;
use serde_json::{Value, json};

const DATA: &str = include_str!("../../testdata/dlp-strings.json");
const MODEL: &str = "gpt-4o-mini-2024-07-18";

fn message(direction: Direction, body: Vec<u8>) -> OutboundMessage {
    OutboundMessage {
        direction,
        channel: "slack".into(),
        recipient: "U0123".into(),
        sender: Some("agent".into()),
        body,
        thread: None,
        message_id: None,
        session_id: None,
        now_ms: 1_717_372_800_000,
        identity: Identity::default(),
    }
}

/// The body of a data-file case: its parts joined.
pub(crate) fn body_of(parts: &Value) -> Vec<u8> {
    crate::fakes::body_from_parts(parts).expect("every part is a string, a repeat or hex")
}

#[test]
fn every_string_of_the_data_file_gets_its_expected_decision_rule_and_offset() {
    let doc: Value = serde_json::from_str(DATA).expect("data file is JSON");
    let cases = doc["cases"].as_array().expect("cases");
    assert!(cases.len() >= 100, "only {} cases", cases.len());
    let mut detectors_seen = BTreeSet::new();
    let mut failures = Vec::new();
    for case in cases {
        let name = case["name"].as_str().expect("name");
        let direction = if case["direction"] == "inbound" { Direction::Inbound } else { Direction::Outbound };
        let m = message(direction, body_of(&case["parts"]));
        let verdict = match precheck(&m) {
            Ok(_) => passed(),
            Err(v) => v,
        };
        let expected = (case["expect"].as_str().expect("expect"), case["rule"].as_str().expect("rule"));
        if (verdict.decision.as_str(), verdict.rule.as_str()) != expected {
            failures.push(format!("{name}: got {} {}, expected {expected:?}", verdict.decision.as_str(), verdict.rule));
            continue;
        }
        if let Some(offset) = case.get("offset").and_then(Value::as_u64) {
            let detector = expected.1.trim_start_matches(rules::SECRET_PREFIX);
            let wanted = format!("{detector} at character {offset}");
            if verdict.signals.first().map(|s| s.detail.as_str()) != Some(wanted.as_str()) {
                failures.push(format!("{name}: signals {:?}, expected {wanted}", verdict.signals));
            }
            detectors_seen.insert(detector.to_string());
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let all: BTreeSet<String> = detectors::names::ALL.iter().map(|s| s.to_string()).collect();
    assert_eq!(detectors_seen, all, "every detector has a case");
}

#[test]
fn a_hit_names_the_detector_and_position_but_never_the_secret() {
    let key = format!("AKIA{}", "Q2W3E4R5T6Y7U2I3");
    let m = message(Direction::Outbound, format!("deploy with {key} now").into_bytes());
    let v = precheck(&m).expect_err("denied");
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Deny, "dlp.secret.aws-access-key"));
    assert_eq!(v.risk, Risk::Critical);
    assert!(!v.reason.contains(&key) && !v.reason.contains("Q2W3"), "{}", v.reason);
    assert!(v.signals.iter().all(|s| !s.detail.contains("Q2W3")));
    assert_eq!(v.signals[0].detail, "aws-access-key at character 12");
}

#[test]
fn the_body_limit_is_exact_and_checked_before_decoding() {
    let at = message(Direction::Outbound, vec![b'a'; MAX_BODY_BYTES]);
    assert!(precheck(&at).is_ok());
    let mut over = vec![b'a'; MAX_BODY_BYTES];
    over.push(0xff);
    let v = precheck(&message(Direction::Outbound, over)).expect_err("too large");
    assert_eq!(v.rule, rules::TOO_LARGE);
}

#[test]
fn more_hits_than_the_limit_are_cut_at_the_limit() {
    let one = format!("AKIA{} ", "ABCDEFGHIJKLMNO2");
    let text = one.repeat(MAX_BODY_BYTES / one.len());
    let hits = detectors::scan(&text);
    assert_eq!(hits.len(), detectors::MAX_HITS);
    let text = one.repeat(detectors::MAX_HITS);
    assert_eq!(detectors::scan(&text).len(), detectors::MAX_HITS);
    let text = one.repeat(detectors::MAX_HITS - 1);
    assert_eq!(detectors::scan(&text).len(), detectors::MAX_HITS - 1);
}

#[test]
fn private_key_material_is_counted_at_the_threshold() {
    let block = |n: usize| format!("-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----", "Ab3+".repeat(n / 4));
    assert_eq!(detectors::scan(&block(detectors::MIN_PRIVATE_KEY_BODY_CHARS)).len(), 1);
    assert!(detectors::scan(&block(detectors::MIN_PRIVATE_KEY_BODY_CHARS - 4)).is_empty());
}

#[test]
fn entropy_thresholds_hold_at_their_bounds() {
    // 24 distinct characters: log2(24) ≈ 4.58 bits, short runs.
    let token = "aB3cD4eF5gH6iJ7kL8mN9oP0";
    assert_eq!(token.len(), detectors::MIN_ENTROPY_TOKEN_CHARS);
    assert_eq!(detectors::scan(token).len(), 1);
    assert!(detectors::scan(&token[1..]).is_empty(), "one character short of the minimum");
    // Exactly 16 symbols used evenly: 4.0 bits, at the threshold.
    let even = "aB3cD4eF5gH6iJ7kaB3cD4eF5gH6iJ7k";
    assert!((detectors::entropy(even.as_bytes()) - detectors::MIN_ENTROPY_BITS).abs() < 1e-9);
    assert_eq!(detectors::scan(even).len(), 1);
    // 15 symbols: just under 4 bits.
    let under = "aB3cD4eF5gH6iJ7aB3cD4eF5gH6iJ7aB3";
    assert!(detectors::entropy(under.as_bytes()) < detectors::MIN_ENTROPY_BITS);
    assert!(detectors::scan(under).is_empty());
}

/// CRC32 (IEEE), bit by bit: an independent statement of the checksum GitHub and npm tokens carry.
pub(crate) fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// A token of `prefix`, thirty random characters and their six-character base62 CRC32.
pub(crate) fn checksummed(prefix: &str, random: &str) -> String {
    const B62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut n = crc32(random.as_bytes());
    let mut check = [b'0'; 6];
    for slot in check.iter_mut().rev() {
        *slot = B62[(n % 62) as usize];
        n /= 62;
    }
    format!("{prefix}{random}{}", String::from_utf8_lossy(&check))
}

fn secret_kinds() -> impl Strategy<Value = (String, &'static str)> {
    prop_oneof![
        "[A-Z2-7]{16}".prop_map(|s| (format!("AKIA{s}"), detectors::names::AWS_ACCESS_KEY)),
        "[A-Za-z0-9]{30}".prop_map(|s| (checksummed("ghp_", &s), detectors::names::GITHUB_TOKEN)),
        "[A-Za-z0-9]{22}_[A-Za-z0-9]{59}".prop_map(|s| (format!("github_pat_{s}"), detectors::names::GITHUB_TOKEN)),
        ("[0-9]{12}", "[0-9]{13}", "[A-Za-z0-9]{24}")
            .prop_map(|(a, b, c)| (format!("xoxb-{a}-{b}-{c}"), detectors::names::SLACK_TOKEN)),
        "[A-Z0-9]{10}[a-z0-9]{10}[A-Za-z0-9]{28}".prop_map(|s| (format!("sk-{s}"), detectors::names::OPENAI_KEY)),
        "[A-Za-z0-9]{24}".prop_map(|s| (format!("sk_live_{s}"), detectors::names::STRIPE_KEY)),
        "[A-Za-z0-9_-]{35}".prop_map(|s| (format!("AIza{s}"), detectors::names::GOOGLE_API_KEY)),
        "[A-Za-z0-9_-]{43}".prop_map(|s| (format!("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.{s}"), detectors::names::JWT)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn format_valid_fakes_built_at_test_time_are_denied_wherever_they_sit(
        (secret, detector) in secret_kinds(),
        before in "[a-z ,.:]{0,40}",
        after in "[ ,.!?][a-z ]{0,40}",
    ) {
        prop_assume!(!["XXXX", "xxxx", "EXAMPLE", "example", "REDACTED", "redacted"].iter().any(|w| secret.contains(w)));
        // OpenAI keys must mix cases and digits.
        prop_assume!(detector != detectors::names::OPENAI_KEY
            || (secret.bytes().any(|b| b.is_ascii_uppercase()) && secret[3..].bytes().any(|b| b.is_ascii_lowercase())));
        let before = if before.ends_with(|c: char| c.is_ascii_alphanumeric()) { format!("{before} ") } else { before };
        let text = format!("{before}{secret}{after}");
        let v = precheck(&message(Direction::Outbound, text.clone().into_bytes())).expect_err("denied");
        prop_assert_eq!(v.rule, secret_rule(detector));
        let wanted = format!("{detector} at character {}", before.chars().count());
        prop_assert_eq!(v.signals[0].detail.as_str(), wanted.as_str());
        prop_assert!(!v.reason.contains(&secret));
    }

    #[test]
    fn scanning_arbitrary_text_never_panics_and_offsets_stay_inside(text in any::<String>()) {
        let chars = text.chars().count();
        for hit in detectors::scan(&text) {
            prop_assert!(hit.offset < chars);
        }
    }

    #[test]
    fn ordinary_prose_is_never_a_secret(words in proptest::collection::vec("[a-z]{1,12}|[A-Z][a-z]{1,10}|[0-9]{1,4}", 1..60)) {
        let text = words.join(" ");
        prop_assert!(detectors::scan(&text).is_empty(), "{}", text);
    }
}

fn dlp_config(mode: Mode, rules: OperatorRules) -> DlpConfig {
    DlpConfig {
        mode,
        classifier: Some(ClassifierConfig {
            destination: "classifier".into(),
            model: MODEL.into(),
            allowed_models: Vec::new(),
            path: classifier::DEFAULT_PATH.into(),
            timeout_ms: 2_000,
            directions: vec![Direction::Outbound, Direction::Inbound],
            url: "http://127.0.0.1:9/v1/chat/completions".into(),
        }),
        rules,
    }
}

pub(crate) fn completion(content: &str) -> HttpResponse {
    let body = json!({"model": MODEL, "choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]});
    HttpResponse { status: 200, headers: Vec::new(), body: serde_json::to_vec(&body).expect("json") }
}

pub(crate) fn verdict_json(decision: &str, policy_version: &str) -> String {
    json!({"decision": decision, "category": "routine", "reason": "looked at it", "model": MODEL, "policyVersion": policy_version})
        .to_string()
}

#[test]
fn classifier_answers_and_failures_map_to_decisions_and_rules() {
    let pv = classifier::BASE_POLICY_VERSION;
    type Case = (Result<HttpResponse, HttpError>, Decision, &'static str);
    let cases: Vec<Case> = vec![
        (Ok(completion(&verdict_json("allow", pv))), Decision::Allow, rules::CLASSIFIER_ALLOW),
        (Ok(completion(&verdict_json("review", pv))), Decision::Ask, rules::CLASSIFIER_REVIEW),
        (Ok(completion(&verdict_json("deny", pv))), Decision::Deny, rules::CLASSIFIER_DENY),
        (Err(HttpError::Timeout), Decision::Deny, rules::GUARD_FAILURE),
        (Err(HttpError::Transport("connection refused".into())), Decision::Deny, rules::GUARD_FAILURE),
        (Ok(HttpResponse { status: 500, headers: Vec::new(), body: Vec::new() }), Decision::Deny, rules::GUARD_FAILURE),
        (Ok(completion(&verdict_json("allow", "warden-dlp-0"))), Decision::Deny, rules::GUARD_FAILURE),
        (Ok(completion("{\"decision\":\"allow\"}")), Decision::Deny, rules::GUARD_FAILURE),
        (
            Ok(completion(&format!("{} ", verdict_json("allow", pv)).replace('}', ",\"decision\":\"allow\"}"))),
            Decision::Deny,
            rules::GUARD_FAILURE,
        ),
    ];
    for (answer, decision, rule) in cases {
        let label = format!("{answer:?}").chars().take(100).collect::<String>();
        let http = ScriptedHttp::new(move |_| answer.clone());
        let storage = MemoryStorage::default();
        let log = VecLog::default();
        let ports = Ports { http: &http, storage: &storage, log: &log };
        let m = message(Direction::Outbound, b"status update: all green".to_vec());
        let v = check(&dlp_config(Mode::Enforce, OperatorRules::default()), &ports, &m).expect("verdict");
        assert_eq!((v.decision, v.rule.as_str()), (decision, rule), "{label}");
        if rule == rules::GUARD_FAILURE {
            assert!(v.signals.iter().any(|s| s.name == "dlp.category" && s.detail == GUARD_FAILURE), "{label}");
        }
        assert_eq!(http.requests().len(), 1);
    }
}

#[test]
fn observe_mode_relaxes_classifier_verdicts_but_never_the_pre_checks() {
    let http = ScriptedHttp::new(|_| Err(HttpError::Timeout));
    let storage = MemoryStorage::default();
    let log = VecLog::default();
    let ports = Ports { http: &http, storage: &storage, log: &log };
    let config = dlp_config(Mode::Observe, OperatorRules::default());
    let v = check(&config, &ports, &message(Direction::Outbound, b"hello".to_vec())).expect("verdict");
    assert_eq!(
        (v.decision, v.rule.as_str(), v.observed),
        (Decision::Allow, rules::GUARD_FAILURE, Some(Decision::Deny))
    );
    let secret = checksummed("ghp_", "aB3dE5gH7jK9mN2pQ4sT6vW8yZ1bC3");
    let v = check(&config, &ports, &message(Direction::Outbound, secret.into_bytes())).expect("verdict");
    assert_eq!((v.decision, v.rule.as_str(), v.observed), (Decision::Deny, "dlp.secret.github-token", None));
    assert_eq!(http.requests().len(), 1, "the secret never reached the classifier");
}

#[test]
fn a_classifier_reason_that_quotes_a_secret_is_withheld() {
    let reason = format!("it contains {}{}", "AKIA", "Q2W3E4R5T6Y7U2I3");
    let content = json!({"decision": "deny", "category": "credential", "reason": reason, "model": MODEL, "policyVersion": classifier::BASE_POLICY_VERSION}).to_string();
    let http = ScriptedHttp::new(move |_| Ok(completion(&content)));
    let storage = MemoryStorage::default();
    let log = VecLog::default();
    let ports = Ports { http: &http, storage: &storage, log: &log };
    // The message itself passes the pre-checks (the key is spelled out with spaces).
    let m = message(Direction::Outbound, b"key: A K I A Q 2 W 3 ...".to_vec());
    let v = check(&dlp_config(Mode::Enforce, OperatorRules::default()), &ports, &m).expect("verdict");
    assert_eq!(v.rule, rules::CLASSIFIER_DENY);
    assert!(!v.reason.contains("AKIA"), "{}", v.reason);
    assert!(v.reason.contains("withheld"));
}

#[test]
fn directions_without_a_classifier_are_not_sent_to_it() {
    let http = ScriptedHttp::unreachable();
    let storage = MemoryStorage::default();
    let log = VecLog::default();
    let ports = Ports { http: &http, storage: &storage, log: &log };
    let mut config = dlp_config(Mode::Enforce, OperatorRules::default());
    if let Some(c) = config.classifier.as_mut() {
        c.directions = vec![Direction::Outbound];
    }
    let v = check(&config, &ports, &message(Direction::Inbound, b"hi".to_vec())).expect("verdict");
    assert_eq!((v.decision, v.rule.as_str()), (Decision::Allow, rules::PRE_CHECKS_PASSED));
    assert!(http.requests().is_empty());
}

#[test]
fn categories_are_kept_only_as_short_labels() {
    assert_eq!(safe_category("credential"), "credential");
    assert_eq!(safe_category("prompt_injection"), "prompt_injection");
    assert_eq!(safe_category(&"c".repeat(MAX_STORED_CATEGORY_CHARS)), "c".repeat(MAX_STORED_CATEGORY_CHARS));
    assert_eq!(safe_category(&"c".repeat(MAX_STORED_CATEGORY_CHARS + 1)), "other");
    assert_eq!(safe_category("the key AKIA…"), "other");
    // A label that is itself a secret is screened like a reason that quotes one.
    let aws = format!("{}{}", "AKIA", "Q2W3E4R5T6Y7U2I3");
    assert_eq!(safe_category(&aws), "other");
    assert_eq!(safe_category(&format!("credential {aws}")), "other");
    assert_eq!(safe_category(&format!("ghp_{}", "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5")), "other");
    assert_eq!(safe_category("aws-access-key"), "aws-access-key");
}

#[test]
fn rules_without_a_classifier_are_refused_at_configure() {
    let config = crate::Config::parse(r#"{"dlp": {"rules": {"outbound": "no"}}}"#);
    let errors = config.expect_err("invalid");
    assert_eq!(
        errors[0].to_string(),
        "dlp.rules: only the classifier reads rules; add `dlp.classifier` or remove `dlp.rules`"
    );
}

#[test]
fn context_thresholds_hold_at_their_bounds() {
    use detectors::{CONTEXT_BYTES, MIN_CONTEXT_TOKEN_CHARS, scan};
    let hex = "9f86d081884c7d659a2feaa0c55ad015";
    assert_eq!(hex.len(), MIN_CONTEXT_TOKEN_CHARS);
    assert_eq!(scan(&format!("token {hex}")).len(), 1);
    assert!(scan(&format!("token {}", &hex[1..])).is_empty(), "one short of the minimum");
    // The secret word must start within CONTEXT_BYTES before the token.
    let near = format!("token{}{hex}", " ".repeat(CONTEXT_BYTES - 5));
    let far = format!("token{}{hex}", " ".repeat(CONTEXT_BYTES - 4));
    assert_eq!(scan(&near).len(), 1);
    assert!(scan(&far).is_empty());
    // Eight hex symbols used evenly: exactly 3.0 bits; seven: below.
    let even = "0123abcd".repeat(4);
    assert!((detectors::entropy(even.as_bytes()) - detectors::MIN_CONTEXT_ENTROPY_BITS).abs() < 1e-9);
    assert_eq!(scan(&format!("secret {even}")).len(), 1);
    let seven = "0123abc".repeat(5);
    assert!(detectors::entropy(seven.as_bytes()) < detectors::MIN_CONTEXT_ENTROPY_BITS);
    assert!(scan(&format!("secret {seven}")).is_empty());
}

#[test]
fn shape_thresholds_hold_at_their_bounds() {
    use detectors::scan;
    // Runs of 3, 2, 3, 2 characters: an average run of exactly 2.5.
    let at_run = "ABCab012cdDEFef345ghGHJij678km";
    assert_eq!(scan(at_run).len(), 1);
    assert!(scan(&format!("{at_run}z")).is_empty(), "average run just over 2.5");
    // 12 of 30 characters in lower-case words: exactly the 0.4 share.
    let at_words = "abcD1defE2ghiF3jkmG4H5J6K7L8M9";
    assert_eq!(scan(at_words).len(), 1);
    assert!(scan("abcD1defE2ghiF3jkmnG4H5J6K7L8M").is_empty(), "13 of 30");
}

#[test]
fn private_key_material_counts_only_inside_the_examined_block() {
    let material = "Ab3+".repeat(detectors::MIN_PRIVATE_KEY_BODY_CHARS / 4);
    let block = |filler: usize| format!("-----BEGIN PRIVATE KEY-----{}{material}", " ".repeat(filler));
    let inside = detectors::MAX_PRIVATE_KEY_BLOCK_BYTES - material.len();
    assert_eq!(detectors::scan(&block(inside)).first().map(|h| h.detector), Some(detectors::names::PRIVATE_KEY));
    assert!(detectors::scan(&block(inside + 1)).iter().all(|h| h.detector != detectors::names::PRIVATE_KEY));
}

#[test]
fn adversarial_texts_of_the_full_size_scan_quickly() {
    let inputs = [
        "-----BEGIN PRIVATE KEY-----".repeat(MAX_BODY_BYTES / 27),
        "-----BEGIN CERTIFICATE-----".repeat(MAX_BODY_BYTES / 27),
        "eyJ.".repeat(MAX_BODY_BYTES / 4),
        "AKIA".repeat(MAX_BODY_BYTES / 4),
        "sk-".repeat(MAX_BODY_BYTES / 3),
        "a".repeat(MAX_BODY_BYTES),
        "aB3/".repeat(MAX_BODY_BYTES / 4),
        "token ".repeat(MAX_BODY_BYTES / 6),
    ];
    for text in inputs {
        let started = std::time::Instant::now();
        let _ = detectors::scan(&text);
        assert!(started.elapsed() < std::time::Duration::from_secs(2), "{}", &text[..12]);
    }
}
