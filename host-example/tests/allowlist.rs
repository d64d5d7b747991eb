//! The destination allow-list through the `warden` binary: every row of the
//! shared URL table marked `viaComponent` becomes the classifier's path behind
//! a loopback destination, and a refused URL never opens a connection. Also
//! `warden validate` on destinations: refusals and missing-credential warnings.

// Test code: a failed expectation is the test failing.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

mod support;

use serde_json::{Value, json};
use support::{Listener, warden, warden_env, write};

const TABLE: &str = include_str!("../../tests/fixtures/url-allowlist/cases.json");
const LOOPBACK: &str = "http://127.0.0.1:9/v1";
const MODEL: &str = "gpt-4o-mini-2024-07-18";

fn classifier_config(base: &str, path: &str) -> String {
    json!({
        "destinations": [{"name": "classifier", "baseUrl": base}],
        "dlp": {"classifier": {"destination": "classifier", "model": MODEL, "path": path, "timeoutMs": 2000}},
    })
    .to_string()
}

const MESSAGE: &str = r#"{"channel": "slack", "recipient": "U-ADA", "body": "Lunch at noon?"}"#;

#[test]
fn every_encoded_path_trick_is_refused_by_the_binary_before_any_connection() {
    let table: Value = serde_json::from_str(TABLE).expect("the table is JSON");
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("warden.db").display().to_string();
    let (mut refused, mut reached) = (0, 0);
    for case in table["cases"].as_array().expect("cases") {
        if case["viaComponent"] != json!(true) {
            continue;
        }
        let (name, url, allow) =
            (&case["name"], case["url"].as_str().unwrap_or_default(), case["allow"] == json!(true));
        assert_eq!(case["base"], json!(LOOPBACK), "{name}: replayed rows sit on the loopback base");
        let path = url.strip_prefix(LOOPBACK).unwrap_or_else(|| panic!("{name}: the URL extends the base"));
        let listener = Listener::start();
        let base = format!("http://127.0.0.1:{}/v1", listener.port);
        let config = write(dir.path(), "config.json", &classifier_config(&base, path));
        let out = warden(&["check", "outbound", "--config", &config, "--db", &db], MESSAGE);
        assert_eq!(out.code, 0, "{name}: {}", out.stderr);
        let v = out.json();
        assert_eq!(
            (v["decision"].as_str(), v["rule"].as_str()),
            (Some("deny"), Some("dlp.guard-failure")),
            "{name}: {v}"
        );
        let reason = v["reason"].as_str().unwrap_or_default();
        if allow {
            assert_eq!(listener.connections(), 1, "{name}: an allowed URL reaches the destination");
            assert!(reason.contains("status 204"), "{name}: {reason}");
            reached += 1;
        } else {
            assert_eq!(listener.connections(), 0, "{name}: refused before any connection");
            assert!(reason.contains("could not be reached (denied)"), "{name}: {reason}");
            refused += 1;
        }
    }
    assert!(refused >= 20 && reached >= 4, "{refused} refused, {reached} reached");
}

#[test]
fn validate_refuses_destination_tricks_naming_the_field_and_the_value() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cases = [
        (
            json!({"name": "a", "baseUrl": "https://user:pass@api.example.test/v1"}),
            "destinations[0].baseUrl: `https://user:pass@api.example.test/v1` must not hold a user name or password",
        ),
        (
            json!({"name": "a", "baseUrl": "https://api.example.test/v1\r\nX: 1"}),
            "destinations[0].baseUrl: `https://api.example.test/v1\\r\\nX: 1` must hold only printable ASCII",
        ),
        (
            json!({"name": "a", "baseUrl": "https://api.example.test/v1/.%2e"}),
            "destinations[0].baseUrl: `https://api.example.test/v1/.%2e` must not percent-encode a dot",
        ),
        (
            json!({"name": "a", "baseUrl": "https://api.example.test", "credential": {"env": "K", "scheme": "Bearer\r\nX-Evil: 1"}}),
            "destinations[0].credential.scheme: `Bearer\\r\\nX-Evil: 1` must be visible ASCII",
        ),
        (
            json!({"name": "a", "baseUrl": "https://api.example.test", "credential": {"env": "K", "header": "content-type"}}),
            "destinations[0].credential.header: `content-type` is not a credential header; allowed: `authorization`",
        ),
    ];
    for (destination, expected) in cases {
        let config = write(dir.path(), "config.json", &json!({"destinations": [destination]}).to_string());
        let out = warden(&["validate", "--config", &config], "");
        assert_eq!(out.code, 2, "{expected}: {}", out.stderr);
        assert!(out.stderr.contains(expected), "expected {expected}\n got {}", out.stderr);
        assert_eq!(out.stdout, "");
    }
}

#[test]
fn validate_warns_when_a_destinations_credential_is_missing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let key = write(dir.path(), "key.txt", "sk-present\n");
    let empty = write(dir.path(), "empty.txt", "  \n");
    let gone = dir.path().join("gone.txt").display().to_string();
    let config = json!({"destinations": [
        {"name": "env-set", "baseUrl": "https://a.example.test", "credential": {"env": "WARDEN_TEST_KEY_SET"}},
        {"name": "env-unset", "baseUrl": "https://a.example.test", "credential": {"env": "WARDEN_TEST_KEY_UNSET"}},
        {"name": "file-ok", "baseUrl": "https://a.example.test", "credential": {"file": key}},
        {"name": "file-empty", "baseUrl": "https://a.example.test", "credential": {"file": empty}},
        {"name": "file-gone", "baseUrl": "https://a.example.test", "credential": {"file": gone}},
        {"name": "open", "baseUrl": "https://a.example.test"},
    ]});
    let config = write(dir.path(), "config.json", &config.to_string());
    let out = warden_env(&["validate", "--config", &config], "", &[("WARDEN_TEST_KEY_SET", "sk-1")]);
    assert_eq!(out.code, 0, "a missing credential is a warning, not an error: {}", out.stderr);
    let warnings: Vec<String> = out.json()["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .filter_map(|w| w.as_str().map(String::from))
        .collect();
    let expected = [
        "destinations[1].credential.env: `WARDEN_TEST_KEY_UNSET` is not set in this environment, or is empty; requests to `env-unset` will fail with `missing-credential`".to_string(),
        format!("destinations[3].credential.file: `{empty}` cannot be read, or is empty; requests to `file-empty` will fail with `missing-credential`"),
        format!("destinations[4].credential.file: `{gone}` cannot be read, or is empty; requests to `file-gone` will fail with `missing-credential`"),
    ];
    assert_eq!(warnings, expected);
    for w in &expected {
        assert!(out.stderr.contains(&format!("warning: {w}")), "stderr names it: {}", out.stderr);
    }
}
