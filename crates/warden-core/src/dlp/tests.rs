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
fn a_label_in_the_text_before_a_secret_is_a_secret_of_its_own() {
    let key = format!("AKIA{}", "Q2W3E4R5T6Y7U2I3");
    for (before, first) in [
        ("pwd:abc,def:ghi ", "labelled-secret at character 4"),
        ("a,pwd:abcdefgh,b ", "labelled-secret at character 6"),
        ("pwd:", "aws-access-key at character 4"),
        ("pwd is ", "aws-access-key at character 7"),
    ] {
        let m = message(Direction::Outbound, format!("{before}{key} done").into_bytes());
        let v = precheck(&m).expect_err("denied");
        let rule =
            if first.starts_with("labelled") { "dlp.secret.labelled-secret" } else { "dlp.secret.aws-access-key" };
        assert_eq!((v.decision, v.rule.as_str()), (Decision::Deny, rule), "{before}");
        assert_eq!(v.signals[0].detail, first, "{before}");
        assert_eq!(
            v.signals.last().map(|s| s.detail.as_str()),
            Some(format!("aws-access-key at character {}", before.len()).as_str())
        );
    }
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
        // The text around names no secret: `pwd:abc,def` in it is a labelled secret of its own
        // (see `a_label_in_the_text_before_a_secret_is_a_secret_of_its_own`).
        prop_assume!(!super::labelled::LABEL_PIECES.iter().any(|p| before.as_bytes().windows(p.len()).any(|w| w == *p)
            || after.as_bytes().windows(p.len()).any(|w| w == *p)));
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
        ..DlpConfig::default()
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
fn author_names_no_credential_but_authorization_does() {
    let hex = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b";
    assert!(detectors::scan(&format!("author ada {hex}")).is_empty());
    assert!(detectors::scan(&format!("authored by ada {hex}")).is_empty());
    assert_eq!(detectors::scan(&format!("authorization {hex}")).first().map(|h| h.detector), Some("high-entropy"));
    assert_eq!(detectors::scan(&format!("auth {hex}")).first().map(|h| h.detector), Some("high-entropy"));
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
        "password=Xk9#mQ2$pL7& ".repeat(MAX_BODY_BYTES / 22),
        "password ".repeat(MAX_BODY_BYTES / 9),
        "|1|AAAAAAAAAAAAAAAAAAAAAAAAAAAA| ".repeat(MAX_BODY_BYTES / 32),
        "data:image/png;base64,".repeat(MAX_BODY_BYTES / 22),
        "a1-us1 ".repeat(MAX_BODY_BYTES / 7),
        "x://u:p@h ".repeat(MAX_BODY_BYTES / 10),
        "<password>".repeat(MAX_BODY_BYTES / 10),
        "MTIzNDU2Nzg5MDEyMzQ1Njc4.abcdef.".repeat(MAX_BODY_BYTES / 32),
        "123456789:".repeat(MAX_BODY_BYTES / 10),
        "aGVsbG8gd29ybGQgaGVsbG8gd29ybGQ= ".repeat(MAX_BODY_BYTES / 33),
        "a ".repeat(MAX_BODY_BYTES / 2),
    ];
    for text in inputs {
        let started = std::time::Instant::now();
        let _ = detectors::scan(&text);
        let took = started.elapsed();
        assert!(took < std::time::Duration::from_secs(2), "{} took {took:?}", &text[..12]);
    }
}

/// A small seeded generator, so every run builds the same fakes without storing them.
struct Fakes(u64);

impl Fakes {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// `n` characters of `alphabet`, with at least one upper-case letter, lower-case letter and digit when it has them.
    fn of(&mut self, n: usize, alphabet: &str) -> String {
        let chars: Vec<char> = alphabet.chars().collect();
        loop {
            let out: String = (0..n).map(|_| chars[(self.next() % chars.len() as u64) as usize]).collect();
            let has = |f: fn(&char) -> bool| !chars.iter().any(f) || out.chars().any(|c| f(&c));
            let low = out.to_ascii_lowercase();
            if has(char::is_ascii_uppercase)
                && has(char::is_ascii_lowercase)
                && has(char::is_ascii_digit)
                && !low.contains("xxxx")
                && !low.contains("example")
            {
                return out;
            }
        }
    }
}

const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const B64U: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const HEX: &str = "0123456789abcdef";
const LETTERS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// One vendor format: a sentence, how a format-valid fake is built, the detector, and a near miss that passes.
type VendorCase = (&'static str, fn(&mut Fakes) -> String, &'static str, &'static str);

fn vendor_cases() -> Vec<VendorCase> {
    use detectors::names::*;
    vec![
        (
            "a github classic token with its checksum is a github token",
            |f| checksummed("ghp_", &f.of(30, ALNUM)),
            GITHUB_TOKEN,
            "ghp_aaaaaaaaaaaaaaaaaaaaaaaaabcdefghijk",
        ),
        (
            "a github app token with its checksum is a github token",
            |f| checksummed("ghs_", &f.of(30, ALNUM)),
            GITHUB_TOKEN,
            "ghs_installation_token_for_the_app_bot",
        ),
        (
            "a github fine-grained token is a github token",
            |f| format!("github_pat_{}_{}", f.of(22, ALNUM), f.of(59, ALNUM)),
            GITHUB_TOKEN,
            "github_pat_ABC123",
        ),
        (
            "a gitlab personal access token is a gitlab token",
            |f| format!("glpat-{}", f.of(20, B64U)),
            GITLAB_TOKEN,
            "glpat-token",
        ),
        ("a gitlab deploy token is a gitlab token", |f| format!("gldt-{}", f.of(20, B64U)), GITLAB_TOKEN, "gldt-docs"),
        (
            "a gitlab runner registration token is a gitlab token",
            |f| format!("GR1348941{}", f.of(20, B64U)),
            GITLAB_TOKEN,
            "GR1348941 is the prefix",
        ),
        (
            "a hugging face token is a hugging face token",
            |f| format!("hf_{}", f.of(34, LETTERS)),
            HUGGINGFACE_TOKEN,
            "hf_hub_download_with_local_cache_dir",
        ),
        (
            "a stripe live secret key is a stripe key",
            |f| format!("sk_live_{}", f.of(24, ALNUM)),
            STRIPE_KEY,
            "sk_live_abc",
        ),
        (
            "a stripe webhook secret is a stripe key",
            |f| format!("whsec_{}", f.of(32, ALNUM)),
            STRIPE_KEY,
            "whsec_short",
        ),
        (
            "a slack app token is a slack token",
            |f| {
                format!(
                    "xapp-1-A{}-{}-{}",
                    f.of(10, "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789"),
                    f.of(13, "0123456789"),
                    f.of(64, HEX)
                )
            },
            SLACK_TOKEN,
            "xapp-1-docs",
        ),
        (
            "a sendgrid key is a sendgrid key",
            |f| format!("SG.{}.{}", f.of(22, B64U), f.of(43, B64U)),
            SENDGRID_KEY,
            "SG.config.value",
        ),
        (
            "a twilio api key is a twilio key",
            |f| format!("SK{}", f.of(32, HEX)),
            TWILIO_KEY,
            "SKU 12345 is back in stock",
        ),
        ("a twilio account sid is a twilio key", |f| format!("AC{}", f.of(32, HEX)), TWILIO_KEY, "ACME corp"),
        (
            "an azure storage account key is an azure storage key",
            |f| format!("AccountName=a;AccountKey={}==", f.of(86, ALNUM)),
            AZURE_STORAGE_KEY,
            "AccountKey=<key>",
        ),
        (
            "an azure sas signature is an azure sas",
            |f| format!("https://a.blob.core.windows.net/c?sv=2022-11-02&sp=r&sig={}%3D", f.of(43, ALNUM)),
            AZURE_SAS,
            "https://a.blob.core.windows.net/c?sv=2022-11-02&sig=abc",
        ),
        (
            "a pypi token is a pypi token",
            |f| format!("pypi-AgEIcHlwaS5vcmc{}", f.of(60, B64U)),
            PYPI_TOKEN,
            "pypi-AgEIcHlwaS5vcmc",
        ),
        (
            "a docker hub token is a docker hub token",
            |f| format!("dckr_pat_{}", f.of(27, B64U)),
            DOCKERHUB_TOKEN,
            "dckr_pat_short",
        ),
        (
            "a shopify admin token is a shopify token",
            |f| format!("shpat_{}", f.of(32, HEX)),
            SHOPIFY_TOKEN,
            "shpat_docs",
        ),
        ("a google api key is a google api key", |f| format!("AIza{}", f.of(35, B64U)), GOOGLE_API_KEY, "AIzaShort"),
        (
            "a google oauth access token is a google oauth token",
            |f| format!("ya29.{}", f.of(60, B64U)),
            GOOGLE_OAUTH,
            "ya29.short",
        ),
        (
            "an anthropic key is an anthropic key",
            |f| format!("sk-ant-api03-{}AA", f.of(93, B64U)),
            ANTHROPIC_KEY,
            "sk-ant-api03-REDACTED",
        ),
        (
            "an openai project key is an openai key",
            |f| format!("sk-proj-{}", f.of(48, B64U)),
            OPENAI_KEY,
            "sk-proj-name",
        ),
        (
            "an npm token with its checksum is an npm token",
            |f| checksummed("npm_", &f.of(30, ALNUM)),
            NPM_TOKEN,
            "npm_config_cache_directory_override",
        ),
        (
            "a digitalocean token is a digitalocean token",
            |f| format!("dop_v1_{}", f.of(64, HEX)),
            DIGITALOCEAN_TOKEN,
            "dop_v1_docs",
        ),
        (
            "a databricks token is a databricks token",
            |f| format!("dapi{}", f.of(32, HEX)),
            DATABRICKS_TOKEN,
            "dapiClient",
        ),
        ("a mailgun key is a mailgun key", |f| format!("key-{}", f.of(32, HEX)), MAILGUN_KEY, "key-value-store"),
        ("a mailchimp key is a mailchimp key", |f| format!("{}-us21", f.of(32, HEX)), MAILCHIMP_KEY, "deploy-us21"),
        ("a square access token is a square token", |f| format!("EAAA{}", f.of(60, B64U)), SQUARE_TOKEN, "EAAA"),
        ("a heroku api key is a heroku key", |f| format!("HRKU-{}", f.of(60, B64U)), HEROKU_KEY, "HRKU-docs"),
        (
            "an atlassian api token is an atlassian token",
            |f| format!("ATATT3{}", f.of(180, B64U)),
            ATLASSIAN_TOKEN,
            "ATATT3 tokens",
        ),
        ("a linear api key is a linear key", |f| format!("lin_api_{}", f.of(40, ALNUM)), LINEAR_KEY, "lin_api_docs"),
        ("a notion token is a notion token", |f| format!("ntn_{}", f.of(46, ALNUM)), NOTION_TOKEN, "ntn_short"),
        (
            "a discord bot token is a discord token",
            |f| {
                let id = format!("{}", 100_000_000_000_000_000 + f.next() % 800_000_000_000_000_000);
                let encoded = base64::Engine::encode(&base64::engine::general_purpose::STANDARD_NO_PAD, id);
                format!("{encoded}.{}.{}", f.of(6, B64U), f.of(38, B64U))
            },
            DISCORD_TOKEN,
            "MTIz.abcdef.not-a-token",
        ),
        (
            "a telegram bot token is a telegram token",
            |f| format!("{}:AA{}", 100_000_000 + f.next() % 900_000_000, f.of(33, B64U)),
            TELEGRAM_TOKEN,
            "12345678:30",
        ),
        ("a vault token is a vault token", |f| format!("hvs.{}", f.of(90, B64U)), VAULT_TOKEN, "hvs.short"),
        (
            "an age secret key is an age secret key",
            |f| format!("AGE-SECRET-KEY-1{}", f.of(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")),
            AGE_SECRET_KEY,
            "AGE-SECRET-KEY-1",
        ),
        (
            "an aws access key id is an aws access key",
            |f| format!("AKIA{}", f.of(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")),
            AWS_ACCESS_KEY,
            "ASIANFOODDELIVERYSERVICE",
        ),
        (
            "a google oauth client secret is a google oauth token",
            |f| format!("GOCSPX-{}", f.of(28, B64U)),
            GOOGLE_OAUTH,
            "GOCSPX-short",
        ),
        (
            "a square oauth token is a square token",
            |f| format!("sq0atp-{}", f.of(22, B64U)),
            SQUARE_TOKEN,
            "sq0atp-docs",
        ),
        (
            "a linear oauth token is a linear key",
            |f| format!("lin_oauth_{}", f.of(64, HEX)),
            LINEAR_KEY,
            "lin_oauth_docs",
        ),
        ("a sentry user token is a sentry token", |f| format!("sntryu_{}", f.of(64, HEX)), SENTRY_TOKEN, "sntryu_docs"),
        (
            "a grafana service account token is a grafana token",
            |f| format!("glsa_{}_{}", f.of(32, ALNUM), f.of(8, HEX)),
            GRAFANA_TOKEN,
            "glsa_short",
        ),
        (
            "a new relic key is a new relic key",
            |f| format!("NRAK-{}", f.of(27, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")),
            NEWRELIC_KEY,
            "NRAK-DOCS",
        ),
        (
            "a postman key is a postman key",
            |f| format!("PMAK-{}-{}", f.of(24, HEX), f.of(34, HEX)),
            POSTMAN_KEY,
            "PMAK-docs",
        ),
        (
            "a tailscale auth key is a tailscale key",
            |f| format!("tskey-auth-{}", f.of(40, B64U)),
            TAILSCALE_KEY,
            "tskey-auth",
        ),
        ("a groq key is a groq key", |f| format!("gsk_{}", f.of(52, ALNUM)), GROQ_KEY, "gsk_short"),
        ("an xai key is an xai key", |f| format!("xai-{}", f.of(80, ALNUM)), XAI_KEY, "xai-sdk"),
        ("a replicate token is a replicate token", |f| format!("r8_{}", f.of(37, ALNUM)), REPLICATE_TOKEN, "r8_short"),
        ("a supabase token is a supabase token", |f| format!("sbp_{}", f.of(40, HEX)), SUPABASE_TOKEN, "sbp_docs"),
        ("a doppler token is a doppler token", |f| format!("dp.st.{}", f.of(43, B64U)), DOPPLER_TOKEN, "dp.st.dev"),
        ("a pulumi token is a pulumi token", |f| format!("pul-{}", f.of(40, HEX)), PULUMI_TOKEN, "pul-docs"),
        ("a fly token is a fly token", |f| format!("fo1_{}", f.of(43, B64U)), FLY_TOKEN, "fo1_short"),
    ]
}

#[test]
fn every_vendor_format_is_named_and_its_near_miss_passes() {
    let mut fakes = Fakes(0x5eed_2026_1201);
    let mut failures = Vec::new();
    for (sentence, build, detector, near_miss) in vendor_cases() {
        for _ in 0..8 {
            let secret = build(&mut fakes);
            let text = format!("here it is: {secret} thanks");
            let hits = detectors::scan(&text);
            // The hit starts where the fake does, or inside it where the secret part of a longer string starts.
            let inside = |h: &detectors::Hit| h.detector == detector && (12..12 + secret.len()).contains(&h.offset);
            if !hits.first().is_some_and(inside) {
                failures.push(format!("{sentence}: {hits:?} for a fake of {} characters", secret.len()));
            }
        }
        let hits = detectors::scan(near_miss);
        if !hits.is_empty() {
            failures.push(format!("{sentence}: the near miss `{near_miss}` is {hits:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_github_token_with_a_broken_checksum_is_not_named_a_github_token() {
    let good = checksummed("ghp_", "aB3dE5gH7jK9mN2pQ4sT6vW8yZ1bC3");
    assert_eq!(detectors::scan(&good).first().map(|h| h.detector), Some(detectors::names::GITHUB_TOKEN));
    // One checksum character changed: random enough to stay a secret, but not GitHub's.
    let last = if good.ends_with('A') { 'B' } else { 'A' };
    let broken = format!("{}{last}", &good[..good.len() - 1]);
    assert_eq!(detectors::scan(&broken).first().map(|h| h.detector), Some(detectors::names::HIGH_ENTROPY));
    assert!(vendors::crc32_base62_ok(&good.as_bytes()[4..]));
    assert!(!vendors::crc32_base62_ok(&broken.as_bytes()[4..]));
}

/// Labelled values and URL passwords: (sentence, text, the detector of the first hit or none).
const LABELLED_CASES: &[(&str, &str, Option<&str>)] = &[
    ("a password in an env file is a secret", "DB_PASSWORD=Xk9#mQ2$pL7&", Some("labelled-secret")),
    (
        "a password in json is a secret whatever punctuation it holds",
        r#"{"password": "a b\"c;d,e!9"}"#,
        Some("labelled-secret"),
    ),
    ("a password in yaml is a secret", "db:\n  password: Tr0ub4dor&3\n", Some("labelled-secret")),
    ("a password after a go short assignment is a secret", r#"dbPassword := "Sup3r-S3cret""#, Some("labelled-secret")),
    (
        "a password in a long command line flag is a secret",
        "mysql --password=Winter2024! -h db",
        Some("labelled-secret"),
    ),
    ("a password after a flag and a space is a secret", "psql --password Winter2024! -h db", Some("labelled-secret")),
    ("a password said in a sentence is a secret", "my password is Tr0ub4dor&3 for now", Some("labelled-secret")),
    ("a one-word env name ending in password is a label", "PGPASSWORD=Qw3rty!x9", Some("labelled-secret")),
    ("a dotted property key is a label", "spring.datasource.password=Qw3rty!x9", Some("labelled-secret")),
    ("an api key header is a secret", "x-api-key: 9fK2mQ8zL4pR7vX1", Some("labelled-secret")),
    ("a camel case client secret is a secret", "clientSecret: 'q8R~Zx1_4Kp'", Some("labelled-secret")),
    (
        "a basic authorization header is judged by its password",
        "Authorization: Basic YWRtaW46U3VwM3JTM2NyZXQh",
        Some("labelled-secret"),
    ),
    (
        "a bearer token of hex is a secret",
        "Authorization: Bearer 4f8a9c2e7b1d6f3a5e8c9b2d4f6a1e3c",
        Some("labelled-secret"),
    ),
    (
        "a base64 password in a kubernetes secret is judged by its text",
        "data:\n  password: SHVudGVyMiFYeQ==",
        Some("labelled-secret"),
    ),
    (
        "a token in a query string stops at the next parameter",
        "https://a.test/cb?token=Zk3mQ9pL2xR7vB4nT8wY&state=1",
        Some("labelled-secret"),
    ),
    ("a password read from getpass is code", "password = getpass.getpass()", None),
    ("a token read from the environment is code", "token = os.environ['GITHUB_TOKEN']", None),
    ("a secret read from settings is code", "api_key = settings.SECRET_KEY", None),
    ("a rust option type is code", "password: Option<String>,", None),
    ("a python type hint is code", "def login(user: str, password: str) -> bool:", None),
    ("a password compared with another is code", "if password == expected_password:", None),
    ("prose about the password policy passes", "The password policy requires 12 characters.", None),
    ("a reset link sentence passes", "Reset your password: click the link we sent.", None),
    ("a token sentence passes", "The token is valid for 24 hours.", None),
    ("a weak label with a short value passes", "auth: oauth2", None),
    ("a value in angle brackets is a placeholder", "DB_PASSWORD=<your-password>", None),
    ("a shell variable is a placeholder", "export API_KEY=$API_KEY", None),
    ("a template variable is a placeholder", "password: ${DB_PASSWORD}", None),
    ("a jinja variable is a placeholder", "password: {{ vault_db_password }}", None),
    ("a printf template is a placeholder", "token=%(token)s", None),
    ("stars are a placeholder", "Password: ********", None),
    ("changeme is a placeholder", "POSTGRES_PASSWORD=changeme", None),
    ("your password here is a placeholder", "password = \"your_password_here\"", None),
    ("a kubernetes secret name is a name", "secretName: db-credentials", None),
    ("a resource name with a version is a name", "existingSecret: postgres-secret-v2", None),
    ("a resource name with a number is a name", "credentials: aws-prod-01", None),
    ("words mixed with digits inside a part are a secret", "password: blue-hunter2-river", Some("labelled-secret")),
    ("a password file path is a path", "password_file: /run/secrets/db", None),
    ("a private key path is a path", "private_key: ~/.ssh/id_ed25519", None),
    ("a label that only ends a longer setting is not a label", "PASSWORD_MIN_LENGTH=12", None),
    ("a token url is not a token", "token_url: https://auth.example.test/oauth/token", None),
    ("a netrc password is a secret", "machine api.test login ada password Hunt3r2x!", Some("labelled-secret")),
    ("a curl user flag password is a secret", "curl -u admin:S3cret!9 https://api.test", Some("labelled-secret")),
    ("a curl user flag of variables is a placeholder", "curl -u \"$USER:$PASS\" https://api.test", None),
    ("a sql password literal is a secret", "CREATE USER app WITH PASSWORD 'S3cret!99';", Some("labelled-secret")),
    ("a php define of a password is a secret", "define('DB_PASSWORD', 'S3cret!99');", Some("labelled-secret")),
    (
        "an xml password element is a secret",
        "<server><id>n</id><password>S3cret!99x</password></server>",
        Some("labelled-secret"),
    ),
    ("an xml password element of a variable is a placeholder", "<password>${env.PASS}</password>", None),
    ("a connection string password is a secret", "Server=db;User Id=sa;Password=MyS3cret!;", Some("labelled-secret")),
    ("a password after is and a colon is a secret", "Your temporary password is: Xy7!pq2z", Some("labelled-secret")),
    ("a password ending in a question mark is not a type", "POSTGRES_PASSWORD=Cobalt4056?", Some("labelled-secret")),
    ("a nullable type is code", "token: String?", None),
    ("a union type is code", "password: str | None", None),
    ("a value in parentheses is prose", "API key: (see vault)", None),
    ("a terraform reference is code", "password = var.db_password", None),
    ("a php request field is code", "$password = $_POST['password'];", None),
    ("a go environment read is code", "password := os.Getenv(\"DB_PASSWORD\")", None),
    ("a formatted bearer header is a placeholder", "token = f\"Bearer {access_token}\"", None),
    (
        "a password in a postgres url is a secret",
        "postgres://app:S3cr3tPw9@db.internal:5432/app",
        Some("url-credentials"),
    ),
    (
        "a password in a mongodb srv url is a secret",
        "mongodb+srv://admin:p4ssW0rd!x@cluster0.mongodb.net/db",
        Some("url-credentials"),
    ),
    ("a password-only redis url is a secret", "redis://:hunter22x@cache:6379/0", Some("url-credentials")),
    ("a password in an ftp url is a secret", "ftp://deploy:Zq8!mW3r@files.test/", Some("url-credentials")),
    ("the word password in a url is a placeholder", "postgres://user:password@localhost/db", None),
    ("a variable in a url is a placeholder", "mysql://app:${DB_PASS}@db/app", None),
    ("default guest credentials are not a secret", "amqp://guest:guest@localhost:5672/", None),
    ("a port before an at sign in a query is not a password", "https://api.test:8443/v1?owner=ada@example.test", None),
];

#[test]
fn labelled_values_and_url_passwords_are_judged_whole() {
    let mut failures = Vec::new();
    for &(sentence, text, expected) in LABELLED_CASES {
        let got = detectors::scan(text).first().map(|h| h.detector);
        if got != expected {
            failures.push(format!("{sentence}: got {got:?}, expected {expected:?} for `{text}`"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn labelled_value_lengths_hold_at_their_bounds() {
    use super::labelled::{MIN_LABELLED_VALUE_CHARS, MIN_WEAK_LABELLED_VALUE_CHARS};
    let strong = "a1!b2@c3#d4$e5%f6^g7";
    let at = format!("password={}", &strong[..MIN_LABELLED_VALUE_CHARS]);
    let under = format!("password={}", &strong[..MIN_LABELLED_VALUE_CHARS - 1]);
    assert_eq!(detectors::scan(&at).first().map(|h| h.detector), Some(detectors::names::LABELLED_SECRET));
    assert!(detectors::scan(&under).is_empty());
    let weak = "Zk3mQ9pL2xR7vB4nT8wY";
    let at = format!("token={}", &weak[..MIN_WEAK_LABELLED_VALUE_CHARS]);
    let under = format!("token={}", &weak[..MIN_WEAK_LABELLED_VALUE_CHARS - 1]);
    assert_eq!(detectors::scan(&at).first().map(|h| h.detector), Some(detectors::names::LABELLED_SECRET));
    assert!(detectors::scan(&under).is_empty());
}

/// Public material and look-alikes the high-entropy detector passes: (sentence, text).
fn public_cases() -> Vec<(&'static str, String)> {
    use base64::Engine as _;
    let b64 = |raw: &[u8]| base64::engine::general_purpose::STANDARD.encode(raw);
    let mut key = b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20".to_vec();
    key.extend((0u8..32).map(|i| i.wrapping_mul(97).wrapping_add(13)));
    let ed = b64(&key);
    let noise: Vec<u8> = (0u8..96).map(|i| i.wrapping_mul(89).wrapping_add(7)).collect();
    vec![
        ("a one-line openssh public key passes", format!("ssh-ed25519 {ed} ada@laptop")),
        ("an authorized keys line with options passes", format!("no-pty,from=\"10.0.0.0/8\" ssh-ed25519 {ed} ci")),
        ("a known hosts line passes", format!("github.com,140.82.121.4 ssh-ed25519 {ed}")),
        (
            "a hashed known hosts line passes",
            format!("|1|{}|{} ssh-ed25519 {ed}", b64(&noise[..20]), b64(&noise[20..40])),
        ),
        ("a png data uri passes", format!("<img src=\"data:image/png;base64,{}\">", b64(&noise))),
        ("a font data uri passes", format!("src: url(data:font/woff2;base64,{})", b64(&noise))),
        ("base64 of prose passes", b64(b"The quick brown fox jumps over the lazy dog, twice.")),
        ("base64 of json passes", b64(br#"{"user":"ada","roles":["admin","dev"],"exp":1900000000}"#)),
        ("a go sum line passes", format!("github.com/acme/lib v1.2.3 h1:{}", b64(&noise[..32]))),
        ("a lockfile integrity line passes", format!("integrity sha512-{}", b64(&noise[..64]))),
        (
            "an ssh fingerprint passes",
            "256 SHA256:Y9x9MeQo2WUBXzTsPeKpzNP5Wu6XA/VZAq/0uX++yXE ada@laptop (ED25519)".to_string(),
        ),
        (
            "an svg data uri passes by the text it decodes to",
            format!("url(data:image/svg+xml;base64,{})", b64(b"<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>")),
        ),
        (
            "a pgp signature block passes",
            format!("-----BEGIN PGP SIGNATURE-----\n\n{}\n=AbCd\n-----END PGP SIGNATURE-----", b64(&noise)),
        ),
        ("a commit after an author name passes", "author ada 1d7381066242e2f529d89c6ced4d60bd4357431e".to_string()),
        ("a recaptcha site key passes", "data-sitekey=\"6LcQ3kZ9AAAAAJ7x2Vd8Rr1mP4sT6uW8yB0nE5hL\"".to_string()),
    ]
}

#[test]
fn public_material_and_look_alikes_pass() {
    let mut failures = Vec::new();
    for (sentence, text) in public_cases() {
        let hits = detectors::scan(&text);
        if !hits.is_empty() {
            failures.push(format!("{sentence}: {hits:?} for `{text}`"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn no_exemption_is_earned_by_text_around_a_secret() {
    use base64::Engine as _;
    let aws = format!("AKIA{}", "Q2W3E4R5T6Y7U2I3");
    let wrapped = [
        format!("ssh-ed25519 {aws} ada@laptop"),
        format!("data:image/png;base64,{aws}"),
        format!("|1|{aws}|"),
        format!("integrity sha512-{aws}"),
        format!("data-sitekey=\"{aws}\""),
        // Base64 of text holding a secret is judged by that text.
        base64::engine::general_purpose::STANDARD.encode(format!("key {aws} here")),
    ];
    for text in wrapped {
        assert_eq!(
            detectors::scan(&text).first().map(|h| h.detector),
            Some(detectors::names::AWS_ACCESS_KEY),
            "`{text}`"
        );
    }
    // A random token after an ssh key type is not a public key: its blob must decode to one.
    let random = "AAAAq8Zk3mQ9pL2xR7vB4nT8wY1cD5eF6gH7jK0";
    assert_eq!(detectors::scan(&format!("ssh-ed25519 {random}")).first().map(|h| h.detector), Some("high-entropy"));
}
