//! Personal data and operator-listed values through the `warden` binary as a
//! subprocess: `check outbound`, `approve` and `validate` on a real
//! configuration file and SQLite database.

use serde_json::{Value, json};
use warden_host::cli::EXIT_INVALID;
use warden_tests::{CapturedLog, TempDb, decided, options, warden_process};

const VALUES: &[&str] = &["Project Bluebird", "ACME-4471-22"];

struct Setup {
    db: TempDb,
    config: String,
}

impl Setup {
    fn new(config: &Value) -> Setup {
        let db = TempDb::new();
        let path = db.dir.path().join("config.json");
        std::fs::write(&path, config.to_string()).expect("write config");
        Setup { config: path.display().to_string(), db }
    }

    fn check(&self, body: &str) -> Value {
        let request = json!({"channel": "slack", "recipient": "U0123", "body": body});
        let db = self.db.path().display().to_string();
        let out = warden_process(&["check", "outbound", "--config", &self.config, "--db", &db], &request.to_string());
        assert_eq!(out.code, 0, "{}", out.stderr);
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stdout))
    }
}

fn rule(v: &Value) -> (&str, &str) {
    (v["decision"].as_str().unwrap_or_default(), v["rule"].as_str().unwrap_or_default())
}

fn turned_on() -> Value {
    json!({"dlp": {"pii": {"cards": true, "ibans": true}, "listedValues": {"values": VALUES}}})
}

#[test]
fn personal_data_table_decides_with_its_rule_through_the_warden_binary() {
    let s = Setup::new(&turned_on());
    let rows: &[(&str, &str, &str, &str)] = &[
        ("a visa test number in fours is a card", "refund 4111 1111 1111 1111 today", "deny", "dlp.pii.card"),
        ("an amex in 4-6-5 is a card", "amex 3782-822463-10005", "deny", "dlp.pii.card"),
        (
            "a card in full-width digits is a card",
            "\u{ff14}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}\u{ff11}",
            "deny",
            "dlp.pii.card",
        ),
        (
            "a card split by zero-width spaces is a card",
            "4111\u{200b}1111\u{200b}1111\u{200b}1111",
            "deny",
            "dlp.pii.card",
        ),
        ("an iban in lower case with spaces is an iban", "pay de89 3704 0044 0532 0130 00", "deny", "dlp.pii.iban"),
        ("an iban written together is an iban", "GB82WEST12345698765432", "deny", "dlp.pii.iban"),
        ("a listed name in another case is listed", "PROJECT BLUEBIRD ships friday", "deny", "dlp.listed-value"),
        ("a listed number without its dashes is listed", "account acme447122", "deny", "dlp.listed-value"),
        ("a listed name split across punctuation is listed", "project.blue-bird", "deny", "dlp.listed-value"),
        ("a number that fails luhn passes", "4111 1111 1111 1112", "allow", "dlp.pre-checks-passed"),
        ("a luhn-valid number without a network passes", "9000 0000 0000 0009", "allow", "dlp.pre-checks-passed"),
        ("a card inside a longer run of digits passes", "041111111111111111", "allow", "dlp.pre-checks-passed"),
        (
            "a card window inside a series of groups passes",
            "1234 4111 1111 1111 1111 5678",
            "allow",
            "dlp.pre-checks-passed",
        ),
        ("an iban that fails mod-97 passes", "DE89 3704 0044 0532 0130 01", "allow", "dlp.pre-checks-passed"),
        ("one word of a listed name passes", "the bluebird sings", "allow", "dlp.pre-checks-passed"),
        ("a longer word than a listed name passes", "Project Bluebirds", "allow", "dlp.pre-checks-passed"),
    ];
    let mut failures = Vec::new();
    for (name, body, decision, expected_rule) in rows {
        let v = s.check(body);
        if rule(&v) != (*decision, *expected_rule) {
            failures.push(format!("{name}: got {:?}, expected {:?}", rule(&v), (decision, expected_rule)));
        }
        let shown = v.to_string().to_lowercase();
        for leaked in ["4111", "3782", "de89", "gb82", "bluebird", "acme"] {
            if *decision == "deny" && shown.contains(leaked) {
                failures.push(format!("{name}: the verdict shows `{leaked}`: {shown}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn personal_data_is_not_judged_until_the_operator_turns_it_on() {
    let s = Setup::new(&json!({}));
    for body in ["refund 4111 1111 1111 1111 today", "pay DE89 3704 0044 0532 0130 00", "Project Bluebird"] {
        assert_eq!(rule(&s.check(body)), ("allow", "dlp.pre-checks-passed"), "{body}");
    }
}

#[test]
fn an_asked_card_goes_out_once_warden_approve_answers_that_exact_message() {
    let s = Setup::new(&json!({"dlp": {"pii": {"cards": true, "action": "ask"}}}));
    let body = "refund to 4111 1111 1111 1111";
    let asked = s.check(body);
    assert_eq!(rule(&asked), ("ask", "dlp.pii.card"), "{asked}");
    let key = asked["approvalKey"].as_str().expect("an ask carries its key").to_string();
    let db = s.db.path().display().to_string();
    let out = warden_process(&["approve", "--config", &s.config, "--db", &db, "--key", &key, "--scope", "once"], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(rule(&s.check(body)), ("allow", "outbound.approved"));
    assert_eq!(rule(&s.check(body)), ("ask", "dlp.pii.card"), "a once answer is used up");
    assert_eq!(rule(&s.check("refund to 5555 5555 5555 4444")), ("ask", "dlp.pii.card"), "another message");
}

#[test]
fn validate_refuses_bad_personal_data_settings_naming_the_field_but_never_a_listed_value() {
    let s = Setup::new(&json!({"dlp": {
        "pii": {"cards": "yes", "action": "block"},
        "listedValues": {"values": ["Project Bluebird", "B-7"], "key": "short-key-12"}
    }}));
    let out = warden_process(&["validate", "--config", &s.config], "");
    assert_eq!(out.code, EXIT_INVALID, "{}", out.stderr);
    for expected in [
        "dlp.pii.cards: must be `true` or `false`, got `\"yes\"`",
        "dlp.pii.action: must be `deny` or `ask`, got `\"block\"`",
        "dlp.listedValues.values[1]: must have at least 3 letters or digits after normalization, got 2 (the value is not shown)",
        "dlp.listedValues.key: must be 16 to 1024 characters, got 12 (the key is not shown)",
    ] {
        assert!(out.stderr.contains(expected), "missing `{expected}` in {}", out.stderr);
    }
    for leaked in ["Bluebird", "B-7", "short-key-12"] {
        assert!(!out.stderr.contains(leaked) && !out.stdout.contains(leaked), "`{leaked}` shown: {}", out.stderr);
    }
}

#[test]
fn a_valid_list_is_reported_without_its_values_and_never_logged() {
    let s = Setup::new(&turned_on());
    let out = warden_process(&["validate", "--config", &s.config], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let all = format!("{}{}", out.stdout, out.stderr).to_lowercase();
    assert!(!all.contains("bluebird") && !all.contains("acme"), "{all}");

    // The component's own log lines for a hit, at debug level.
    let log = CapturedLog::default();
    let rt = warden_host::Runtime::new(options(s.db.open(), &log), &turned_on().to_string()).expect("starts");
    let m = super::outbound("slack", "U0123", "Project Bluebird and 4111 1111 1111 1111", None, super::DAY0);
    assert_eq!(decided(&rt.check_outbound(&m)), ("deny", "dlp.listed-value"));
    let lines = log.lines();
    assert!(!lines.is_empty(), "the hit is logged");
    for (_, line) in lines {
        let line = line.to_lowercase();
        assert!(!line.contains("bluebird") && !line.contains("4111"), "{line}");
    }
}

#[test]
fn a_largest_message_against_a_full_list_is_decided_well_inside_the_cpu_deadline() {
    let values: Vec<String> = (0..1024).map(|i| format!("{i:04}{}", "z".repeat(i % 200))).collect();
    let config = json!({"dlp": {"pii": {"cards": true, "ibans": true}, "listedValues": {"values": values}}});
    let db = TempDb::new();
    let log = CapturedLog::default();
    let rt = warden_host::Runtime::new(options(db.open(), &log), &config.to_string()).expect("starts");
    // One-letter words: every window of 4 to 8 of them has a listed length and is hashed.
    let body = "a ".repeat(32 * 1024 / 2);
    let m = super::outbound("slack", "U0123", &body, None, super::DAY0);
    let started = std::time::Instant::now();
    assert_eq!(decided(&rt.check_outbound(&m)), ("allow", "dlp.pre-checks-passed"));
    let took = started.elapsed();
    println!("32 KiB of one-letter words against 1,024 listed values: {took:.1?}");
    assert!(took < std::time::Duration::from_secs(1), "took {took:?}");
}

#[test]
fn warden_hash_values_prints_entries_that_catch_the_value_without_it_in_the_configuration() {
    let db = TempDb::new();
    let key_file = db.dir.path().join("listed.key");
    std::fs::write(&key_file, "an-operator-key-0001\n").expect("write key");
    let key_path = key_file.display().to_string();
    let out = warden_process(&["hash-values", "--key-file", &key_path], "Project Bluebird\n\nACME-4471-22\n");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let entries: Vec<&str> = out.stdout.lines().collect();
    // `printf %s projectbluebird | openssl dgst -sha256 -hmac an-operator-key-0001`
    assert_eq!(
        entries.first().copied(),
        Some("hmac-sha256:15:1cd7a3614206cf129263b4c2bec697c978f1ea16a670b699601ec6eb335bf8ef")
    );
    assert_eq!(entries.len(), 2, "{}", out.stdout);
    let s = Setup::new(&json!({"dlp": {"listedValues": {"hashed": entries, "key": "an-operator-key-0001"}}}));
    assert!(!std::fs::read_to_string(&s.config).expect("config").to_lowercase().contains("bluebird"));
    assert_eq!(rule(&s.check("news on project-bluebird")), ("deny", "dlp.listed-value"));
    assert_eq!(rule(&s.check("acme 4471 22")), ("deny", "dlp.listed-value"));
    assert_eq!(rule(&s.check("a bluebird")), ("allow", "dlp.pre-checks-passed"));

    let refused = warden_process(&["hash-values", "--key-file", &key_path], "Bluebird\nB-7\n");
    assert_eq!(refused.code, EXIT_INVALID);
    assert_eq!(
        refused.stderr.trim_end(),
        "error: stdin line 2: must have at least 3 letters or digits after normalization, got 2 (the value is not shown)"
    );
    assert!(refused.stdout.is_empty(), "no entry is printed when a line is refused: {}", refused.stdout);
    std::fs::write(&key_file, "short-key\n").expect("write key");
    let short = warden_process(&["hash-values", "--key-file", &key_path], "Bluebird\n");
    assert_eq!(short.code, EXIT_INVALID);
    assert!(short.stderr.contains("--key-file: the key must be 16 to 1024 characters, got 9"), "{}", short.stderr);
    assert!(!short.stderr.contains("short-key"), "{}", short.stderr);
}
