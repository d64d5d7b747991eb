//! Every string of the core's DLP table through `check-outbound`, with no gate
//! and no classifier configured: only the deterministic pre-checks decide.

use super::{data, message, signal};
use serde_json::Value;
use std::collections::BTreeSet;
use std::time::Instant;
use warden_host::bindings::exports::warden::guard::policy::Direction;
use warden_tests::{T0, TempDb, decided, runtime};

/// A case's body: its parts joined (text, `{"repeat", "times"}`, or `{"hex"}` raw bytes).
fn body_of(parts: &Value) -> Vec<u8> {
    warden_core::fakes::body_from_parts(parts).expect("every part is a string, a repeat or hex")
}

#[test]
fn every_string_of_the_dlp_table_gets_its_decision_rule_and_offset_through_the_component() {
    let doc = data("dlp-strings.json");
    let cases = doc["cases"].as_array().expect("cases");
    assert!(cases.len() >= 100, "only {} cases", cases.len());
    let db = TempDb::new();
    let rt = runtime("{}", db.open());
    let started = Instant::now();
    let mut failures = Vec::new();
    let mut detectors = BTreeSet::new();
    let mut denied = 0;
    for case in cases {
        let name = case["name"].as_str().expect("name");
        let direction = if case["direction"] == "inbound" { Direction::Inbound } else { Direction::Outbound };
        let m = message(direction, "slack", "U0123", body_of(&case["parts"]), None, T0);
        let v = rt.check_outbound(&m);
        let expected = (case["expect"].as_str().expect("expect"), case["rule"].as_str().expect("rule"));
        if decided(&v) != expected {
            failures.push(format!("{name}: got {:?}, expected {expected:?}", decided(&v)));
            continue;
        }
        if v.rule != "dlp.pre-checks-passed" {
            denied += 1;
        }
        if let Some(offset) = case.get("offset").and_then(Value::as_u64) {
            let detector = expected.1.trim_start_matches("dlp.secret.");
            let wanted = format!("{detector} at character {offset}");
            if signal(&v, "dlp.secret") != Some(wanted.as_str()) {
                failures.push(format!("{name}: signals {:?}, expected {wanted}", v.signals));
            }
            detectors.insert(detector.to_string());
            // The hit names the detector and the position, never the secret.
            for part in case["parts"].as_array().into_iter().flatten().filter_map(Value::as_str) {
                let secret_like = part.len() >= 10 && !part.contains(char::is_whitespace);
                let shown = v.reason.contains(part) || v.signals.iter().any(|s| s.detail.contains(part));
                if secret_like && shown {
                    failures.push(format!("{name}: the verdict repeats `{part}`"));
                }
            }
        }
    }
    println!(
        "dlp table: {} strings through check-outbound ({denied} denied, {} allowed, {} detectors) in {:.1?}",
        cases.len(),
        cases.len() - denied,
        detectors.len(),
        started.elapsed()
    );
    assert!(failures.is_empty(), "{} of {} strings failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

/// CRC32 (IEEE), bit by bit, for GitHub-format fakes built at test time.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

fn github_fake(random: &str) -> String {
    const B62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut n = crc32(random.as_bytes());
    let mut check = [b'0'; 6];
    for slot in check.iter_mut().rev() {
        *slot = B62[(n % 62) as usize];
        n /= 62;
    }
    format!("{}_{random}{}", "ghp", String::from_utf8_lossy(&check))
}

#[test]
fn each_secret_class_is_refused_by_the_warden_binary_and_its_look_alikes_pass() {
    use base64::Engine as _;
    let b64 = |raw: &[u8]| base64::engine::general_purpose::STANDARD.encode(raw);
    let mut ssh = b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20".to_vec();
    ssh.extend((0u8..32).map(|i| i.wrapping_mul(97).wrapping_add(13)));
    let cases: Vec<(&str, String, &str, &str)> = vec![
        (
            "a checksummed github token",
            format!("push with {}", github_fake("aB3dE5gH7jK9mN2pQ4sT6vW8yZ1bC3")),
            "deny",
            "dlp.secret.github-token",
        ),
        ("a gitlab token", format!("{}-{}", "glpat", "Zx9Qw8Er7Ty6Ui5Op4As"), "deny", "dlp.secret.gitlab-token"),
        (
            "a hugging face token",
            format!("HF_TOKEN={}_{}", "hf", "QwErTyUiOpAsDfGhJkLzXcVbNmQwErTyUi"),
            "deny",
            "dlp.secret.huggingface-token",
        ),
        (
            "an anthropic key",
            format!("{}-ant-api03-{}AA", "sk", "Zx9Qw8Er7Ty6Ui5Op4As".repeat(5)),
            "deny",
            "dlp.secret.anthropic-key",
        ),
        ("a password in an env file", "DB_PASSWORD=Xk9#mQ2$pL7&".into(), "deny", "dlp.secret.labelled-secret"),
        (
            "a password in json",
            r#"{"user": "ada", "password": "correct-h0rse!batt3ry"}"#.into(),
            "deny",
            "dlp.secret.labelled-secret",
        ),
        (
            "a basic authorization header",
            format!("Authorization: Basic {}", b64(b"admin:Sup3rS3cret!")),
            "deny",
            "dlp.secret.labelled-secret",
        ),
        (
            "a password in a database url",
            "postgres://app:S3cr3tPw9@db.internal:5432/app".into(),
            "deny",
            "dlp.secret.url-credentials",
        ),
        (
            "base64 of text holding an aws key",
            b64(format!("key {}{} here", "AKIA", "Q2W3E4R5T6Y7U2I3").as_bytes()),
            "deny",
            "dlp.secret.aws-access-key",
        ),
        ("a password read from getpass", "password = getpass.getpass()".into(), "allow", "dlp.pre-checks-passed"),
        (
            "prose about the password policy",
            "The password policy requires 12 characters.".into(),
            "allow",
            "dlp.pre-checks-passed",
        ),
        ("a templated password", "password: ${DB_PASSWORD}".into(), "allow", "dlp.pre-checks-passed"),
        (
            "a placeholder url password",
            "postgres://user:password@localhost/db".into(),
            "allow",
            "dlp.pre-checks-passed",
        ),
        ("an openssh public key", format!("ssh-ed25519 {} ada@laptop", b64(&ssh)), "allow", "dlp.pre-checks-passed"),
        (
            "base64 of prose",
            b64(b"The quick brown fox jumps over the lazy dog, twice."),
            "allow",
            "dlp.pre-checks-passed",
        ),
        (
            "a png data uri",
            format!("data:image/png;base64,{}", b64(&[0x89, 0x50, 0x4e, 0x47].repeat(24))),
            "allow",
            "dlp.pre-checks-passed",
        ),
    ];
    let db = TempDb::new();
    let config = db.dir.path().join("config.json");
    std::fs::write(&config, "{}").expect("write config");
    let (config, db_path) = (config.display().to_string(), db.path().display().to_string());
    let mut failures = Vec::new();
    for (sentence, body, decision, rule) in &cases {
        let request =
            serde_json::json!({"direction": "outbound", "channel": "slack", "recipient": "U0123", "body": body});
        let out = warden_tests::warden_process(
            &["check", "outbound", "--config", &config, "--db", &db_path],
            &request.to_string(),
        );
        let verdict: Value = serde_json::from_str(&out.stdout).unwrap_or(Value::Null);
        let got = (verdict["decision"].as_str().unwrap_or("?"), verdict["rule"].as_str().unwrap_or("?"));
        if out.code != 0 || got != (*decision, *rule) {
            failures
                .push(format!("{sentence}: exit {} {got:?}, expected ({decision}, {rule}); {}", out.code, out.stderr));
        }
        if out.stdout.contains(body.as_str()) && *decision == "deny" {
            failures.push(format!("{sentence}: the answer repeats the secret"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn bodies_built_to_be_slow_get_their_decision_rule_and_offset_from_the_warden_binary() {
    let doc = data("dlp-strings.json");
    let crafted: Vec<&Value> = doc["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .filter(|c| c["name"].as_str().is_some_and(|n| n.starts_with("crafted:")))
        .collect();
    assert!(crafted.len() >= 8, "only {} crafted cases", crafted.len());
    let db = TempDb::new();
    let config = db.dir.path().join("config.json");
    std::fs::write(&config, "{}").expect("write config");
    let (config, db_path) = (config.display().to_string(), db.path().display().to_string());
    let mut failures = Vec::new();
    for case in crafted {
        let name = case["name"].as_str().unwrap_or_default();
        let body = String::from_utf8(body_of(&case["parts"])).expect("crafted bodies are text");
        let request = serde_json::json!({"channel": "slack", "recipient": "U0123", "body": body});
        let out = warden_tests::warden_process(
            &["check", "outbound", "--config", &config, "--db", &db_path],
            &request.to_string(),
        );
        let verdict: Value = serde_json::from_str(&out.stdout).unwrap_or(Value::Null);
        let got = (verdict["decision"].as_str().unwrap_or("?"), verdict["rule"].as_str().unwrap_or("?"));
        let expected = (case["expect"].as_str().unwrap_or("!"), case["rule"].as_str().unwrap_or("!"));
        if out.code != 0 || got != expected {
            failures.push(format!("{name}: exit {} {got:?}, expected {expected:?}; {}", out.code, out.stderr));
            continue;
        }
        if let Some(offset) = case.get("offset").and_then(Value::as_u64) {
            let wanted = format!("{} at character {offset}", expected.1.trim_start_matches("dlp.secret."));
            let shown = verdict["signals"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|s| s["name"] == "dlp.secret")
                .and_then(|s| s["detail"].as_str());
            if shown != Some(wanted.as_str()) {
                failures.push(format!("{name}: signal {shown:?}, expected {wanted}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
