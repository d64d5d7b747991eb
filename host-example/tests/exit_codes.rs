//! Every subcommand family's exit codes through the `warden` binary as a
//! subprocess: 0 answered, 1 could not answer, 2 bad input, 3 `check
//! --fail-on` met, and error texts without Rust type names.

// Test code: a failed expectation is the test failing.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

mod support;

use serde_json::json;
use support::{Run, warden, warden_env, write};
use warden_host::cli::{EXIT_ANSWERED, EXIT_FAILURE, EXIT_INVALID, EXIT_THRESHOLD, START_FAILURE_RULE};
use warden_host::runtime::MAX_SHOWN_CONFIG_ERRORS;

/// A database path that cannot be opened: its folder does not exist.
const NO_DB: &str = "/nonexistent-warden-folder/warden.db";
const ALLOWED: &str = r#"{"toolName": "calendar_list", "arguments": {}}"#;
const DENIED: &str = r#"{"toolName": "exec", "arguments": {"command": "rm -r -f /"}}"#;
const ASKED: &str = r#"{"toolName": "mcp__fs__write_file", "arguments": {"path": "/tmp/x", "content": "a"}}"#;
const TURN: &str = r#"{"message": "hello"}"#;
const MESSAGE: &str = r#"{"channel": "sms", "recipient": "+15550100", "body": "hello"}"#;

struct Fixture {
    dir: tempfile::TempDir,
    config: String,
    db: String,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = write(dir.path(), "config.json", r#"{"tools": {"askTools": ["mcp__fs__write_file"]}}"#);
    let db = dir.path().join("warden.db").display().to_string();
    Fixture { dir, config, db }
}

/// An error text a person can act on: one `error:` line or more, no Rust
/// type names, no bare `line 1 column 2`.
fn assert_plain_error(run: &Run, what: &str) {
    assert!(run.stderr.starts_with("error: "), "{what}: {}", run.stderr);
    for word in ["struct ", "Json", "u64", "u32", "usize", "i64", "Some(", "Err(", "Error {", "sequence"] {
        assert!(!run.stderr.contains(word), "{what}: `{word}` in {}", run.stderr);
    }
    if run.stderr.contains("line ") {
        assert!(run.stderr.contains("at line "), "{what}: a position needs a sentence: {}", run.stderr);
        assert!(run.stderr.contains("JSON"), "{what}: {}", run.stderr);
    }
}

fn decided(run: &Run) -> (String, String) {
    let v = run.json();
    (v["decision"].as_str().unwrap_or_default().into(), v["rule"].as_str().unwrap_or_default().into())
}

#[test]
fn help_documents_every_exit_code_and_answers_zero() {
    let out = warden(&["--help"], "");
    assert_eq!(out.code, EXIT_ANSWERED, "{}", out.stderr);
    for line in ["Exit codes", "0  answered", "1  could not answer", "2  bad input", "3  `check --fail-on deny|ask`"] {
        assert!(out.stdout.contains(line), "--help shows {line}:\n{}", out.stdout);
    }
    let out = warden(&["check", "--help"], "");
    assert_eq!(out.code, EXIT_ANSWERED);
    assert!(out.stdout.contains("--fail-on <DECISION>"), "{}", out.stdout);
    assert_eq!(warden(&["--version"], "").code, EXIT_ANSWERED);
}

#[test]
fn unknown_arguments_are_bad_input() {
    for args in [
        &["frobnicate"][..],
        &["check", "tool"],
        &["check", "tool", "--config", "c", "--fail-on", "allow"],
        &["mcp", "--config", "c"],
    ] {
        let out = warden(args, "");
        assert_eq!(out.code, EXIT_INVALID, "{args:?}: {}", out.stderr);
        assert_eq!(out.stdout, "", "{args:?}");
    }
}

#[test]
fn check_answers_zero_whatever_the_decision_without_fail_on() {
    let f = fixture();
    for (call, expected) in [
        (ALLOWED, ("allow", "tools.allow")),
        (DENIED, ("deny", "exec.recursive-delete")),
        (ASKED, ("ask", "tools.ask-tool")),
    ] {
        let out = warden(&["check", "tool", "--config", &f.config, "--db", &f.db], call);
        assert_eq!(out.code, EXIT_ANSWERED, "{call}: {}", out.stderr);
        assert_eq!(decided(&out), (expected.0.to_string(), expected.1.to_string()));
    }
}

#[test]
fn check_fail_on_exits_three_exactly_when_the_decision_meets_the_threshold() {
    let f = fixture();
    let cases = [
        (ALLOWED, "ask", EXIT_ANSWERED, ("allow", "tools.allow")),
        (ALLOWED, "deny", EXIT_ANSWERED, ("allow", "tools.allow")),
        (ASKED, "ask", EXIT_THRESHOLD, ("ask", "tools.ask-tool")),
        (ASKED, "deny", EXIT_ANSWERED, ("ask", "tools.ask-tool")),
        (DENIED, "ask", EXIT_THRESHOLD, ("deny", "exec.recursive-delete")),
        (DENIED, "deny", EXIT_THRESHOLD, ("deny", "exec.recursive-delete")),
    ];
    for (call, threshold, code, expected) in cases {
        let out = warden(&["check", "tool", "--config", &f.config, "--db", &f.db, "--fail-on", threshold], call);
        assert_eq!(out.code, code, "{call} --fail-on {threshold}: {}", out.stderr);
        assert_eq!(decided(&out), (expected.0.to_string(), expected.1.to_string()), "the answer is printed either way");
        if code == EXIT_THRESHOLD {
            assert_eq!(
                out.stderr.trim(),
                format!("warden: the decision is `{}` by rule `{}`", expected.0, expected.1),
                "{call}"
            );
        }
    }
    // A turn that proceeds never meets a threshold.
    let out = warden(&["check", "turn", "--config", &f.config, "--db", &f.db, "--fail-on", "ask"], TURN);
    assert_eq!(out.code, EXIT_ANSWERED, "{}", out.stderr);
    assert_eq!(out.json()["proceed"], json!(true));
    // Outbound: an unconsented SMS under a configured gate would be refused;
    // with no gate configured the message is allowed, so `--fail-on` stays 0.
    let out = warden(&["check", "outbound", "--config", &f.config, "--db", &f.db, "--fail-on", "ask"], MESSAGE);
    assert_eq!(out.code, EXIT_ANSWERED, "{}", out.stderr);
    assert_eq!(out.json()["decision"], json!("allow"));
}

#[test]
fn check_outbound_fail_on_deny_exits_three_on_a_refused_message() {
    let f = fixture();
    let config = write(
        f.dir.path(),
        "gate.json",
        &json!({"gate": {"ownerOffset": "+00:00", "templates": ["hello"]}}).to_string(),
    );
    let out = warden(&["check", "outbound", "--config", &config, "--db", &f.db, "--fail-on", "deny"], MESSAGE);
    let v = out.json();
    assert_eq!((v["decision"].as_str(), v["rule"].as_str()), (Some("deny"), Some("gate.no-consent")), "{}", out.stderr);
    assert_eq!(out.code, EXIT_THRESHOLD, "{}", out.stderr);
}

#[test]
fn a_malformed_request_is_bad_input_in_plain_words() {
    let f = fixture();
    let cases = [
        ("{\"toolName\":", "the request is not valid JSON: the text ends inside"),
        ("{not json", "the request is not valid JSON: key must be a string (at line 1, column 2)"),
        ("\"x\"", "invalid type: string \"x\", expected a JSON object"),
        ("5", "invalid type: integer `5`, expected a JSON object"),
        (
            r#"{"toolName": "x", "arguments": {}, "nowMs": "soon"}"#,
            "nowMs: invalid type: string \"soon\", expected a non-negative integer",
        ),
        (
            r#"{"toolName": "x", "arguments": {}, "nowMs": -1}"#,
            "nowMs: invalid value: integer `-1`, expected a non-negative integer",
        ),
        (
            r#"{"toolName": "x", "arguments": {}, "derivedPaths": "a"}"#,
            "derivedPaths: invalid type: string \"a\", expected an array",
        ),
        (
            r#"{"toolName": "x", "arguments": {}} {}"#,
            "the request is one JSON value followed by more text at line 1, column",
        ),
    ];
    for (input, expected) in cases {
        let out = warden(&["check", "tool", "--config", &f.config, "--db", &f.db], input);
        assert_eq!(out.code, EXIT_INVALID, "{input}: {}", out.stderr);
        assert_eq!(out.stdout, "", "{input}");
        assert_plain_error(&out, input);
        assert!(out.stderr.contains(expected), "{input}: expected {expected}\n got {}", out.stderr);
    }
    assert!(!std::path::Path::new(&f.db).exists(), "bad input opens no database");
    let out = warden(&["check", "turn", "--config", &f.config, "--db", &f.db], r#"{"message": "hi", "trigger": 5}"#);
    assert_eq!(out.code, EXIT_INVALID, "a malformed turn is bad input, not a fail-open answer: {}", out.stderr);
    assert_plain_error(&out, "turn");
}

#[test]
fn a_database_that_cannot_be_opened_fails_closed_for_tools_and_messages_and_open_for_turns() {
    let f = fixture();
    for (what, input) in [("tool", ALLOWED), ("outbound", MESSAGE)] {
        let out = warden(&["check", what, "--config", &f.config, "--db", NO_DB], input);
        assert_eq!(out.code, EXIT_FAILURE, "{what}: {}", out.stderr);
        assert_eq!(out.stdout, "", "{what}: no answer");
        assert!(out.stderr.contains("the database") && out.stderr.contains(NO_DB), "{}", out.stderr);
        assert_plain_error(&out, what);
    }
    for threshold in [None, Some("deny")] {
        let mut args = vec!["check", "turn", "--config", &f.config, "--db", NO_DB];
        args.extend(threshold.map(|t| ["--fail-on", t]).into_iter().flatten());
        let out = warden(&args, TURN);
        assert_eq!(out.code, EXIT_ANSWERED, "{}", out.stderr);
        let v = out.json();
        assert_eq!(
            (v["proceed"].as_bool(), v["outcome"].as_str(), v["rule"].as_str()),
            (Some(true), Some("failed"), Some(START_FAILURE_RULE))
        );
        assert!(v["reason"].as_str().unwrap_or_default().contains(NO_DB), "{v}");
        assert!(out.stderr.contains("the turn proceeds unchecked"), "{}", out.stderr);
    }
    // A configuration error is still bad input, even for a turn.
    let bad = write(f.dir.path(), "bad.json", r#"{"pin": {"enabled": "yes"}}"#);
    let out = warden(&["check", "turn", "--config", &bad, "--db", &f.db], TURN);
    assert_eq!(out.code, EXIT_INVALID, "{}", out.stderr);
    assert_plain_error(&out, "bad config");
}

#[test]
fn lifecycle_and_admin_commands_use_the_same_codes() {
    let f = fixture();
    let gate = write(
        f.dir.path(),
        "gate.json",
        &json!({"gate": {"ownerOffset": "+00:00", "templates": ["hello"]}}).to_string(),
    );
    let (c, d, g) = (f.config.as_str(), f.db.as_str(), gate.as_str());
    let cases: Vec<(Vec<&str>, &str, i32)> = vec![
        (vec!["pin", "--config", c, "--db", d, "--session", "s1", "--chat", "19:a"], "", EXIT_ANSWERED),
        (vec!["pin", "--config", c, "--db", d, "--session", "", "--chat", "19:a"], "", EXIT_INVALID),
        (vec!["pin", "--config", c, "--db", NO_DB, "--session", "s1", "--chat", "19:a"], "", EXIT_FAILURE),
        (vec!["settle", "--config", c, "--db", d, "--session", "s1"], "", EXIT_ANSWERED),
        (vec!["settle", "--config", c, "--db", d, "--session", ""], "", EXIT_INVALID),
        (vec!["settle", "--config", c, "--db", NO_DB, "--session", "s1"], "", EXIT_FAILURE),
        (vec!["diagnostics", "--config", c, "--db", d], "", EXIT_ANSWERED),
        (vec!["diagnostics", "--config", c, "--db", NO_DB], "", EXIT_FAILURE),
        (vec!["diagnostics", "--config", "/nonexistent-warden-folder/c.json", "--db", d], "", EXIT_INVALID),
        (vec!["validate", "--config", c], "", EXIT_ANSWERED),
        (vec!["approve", "--config", c, "--db", d, "--key", "bogus", "--scope", "once"], "", EXIT_INVALID),
        (vec!["approve", "--config", c, "--db", d, "--scope", "once"], ALLOWED, EXIT_INVALID),
        (vec!["approve", "--config", c, "--db", NO_DB, "--scope", "session"], ASKED, EXIT_FAILURE),
        (vec!["gate", "status", "--config", g, "--db", d, "--json"], "", EXIT_ANSWERED),
        (vec!["gate", "status", "--config", c, "--db", d], "", EXIT_INVALID),
        (vec!["gate", "log", "--config", g, "--db", d, "10001"], "", EXIT_INVALID),
        (vec!["gate", "status", "--config", g, "--db", NO_DB], "", EXIT_FAILURE),
        (vec!["mcp", "--config", "/nonexistent-warden-folder/c.json", "--", "true"], "", EXIT_INVALID),
        (vec!["mcp", "--config", c, "--db", NO_DB, "--", "true"], "", EXIT_FAILURE),
        (vec!["serve", "--config", c, "--db", d], "", EXIT_INVALID),
    ];
    for (args, stdin, code) in cases {
        let out = warden(&args, stdin);
        assert_eq!(out.code, code, "{args:?}: {}", out.stderr);
        if code == EXIT_ANSWERED {
            let _ = out.json();
        } else {
            assert_eq!(out.stdout, "", "{args:?}: nothing on stdout");
            assert_plain_error(&out, &format!("{args:?}"));
        }
    }
}

#[test]
fn serve_cannot_listen_on_a_taken_port_and_says_so() {
    let f = fixture();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = taken.local_addr().expect("address").to_string();
    let token = "0123456789abcdef0123456789abcdef";
    let out =
        warden_env(&["serve", "--config", &f.config, "--db", &f.db, "--listen", &addr], "", &[("WARDEN_TOKEN", token)]);
    assert_eq!(out.code, EXIT_FAILURE, "{}", out.stderr);
    assert!(out.stderr.contains(&format!("cannot serve on {addr}")), "{}", out.stderr);
}

#[test]
fn the_hook_speaks_its_runtimes_protocol() {
    let f = fixture();
    let event = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "rm -r -f /"}})
        .to_string();
    let out = warden(&["hook", "claude-code", "--config", &f.config, "--db", &f.db], &event);
    assert_eq!(out.code, EXIT_ANSWERED, "{}", out.stderr);
    assert_eq!(out.json()["hookSpecificOutput"]["permissionDecision"], json!("deny"));
    assert!(out.stdout.contains("exec.recursive-delete"), "{}", out.stdout);
    let out = warden(&["hook", "claude-code", "--config", &f.config, "--db", &f.db], "{");
    assert_eq!(out.code, warden_host::hook::EXIT_BLOCK, "a broken event blocks the call: {}", out.stderr);
    assert!(out.stderr.contains("not valid JSON"), "{}", out.stderr);
}

#[test]
fn demo_answers_zero() {
    let out = warden(&["demo"], "");
    assert_eq!(out.code, EXIT_ANSWERED, "{}", out.stderr);
    assert!(out.stdout.contains("exec.recursive-delete"), "{}", out.stdout);
}

fn unknown_keys(n: usize) -> String {
    let keys: Vec<String> = (0..n).map(|i| format!("\"unknown{i}\": 1")).collect();
    format!("{{{}}}", keys.join(", "))
}

#[test]
fn a_configuration_with_thousands_of_errors_prints_a_bounded_list_and_a_count() {
    let f = fixture();
    for (n, more) in [
        (MAX_SHOWN_CONFIG_ERRORS, None),
        (MAX_SHOWN_CONFIG_ERRORS + 1, Some(1)),
        (3000, Some(3000 - MAX_SHOWN_CONFIG_ERRORS)),
    ] {
        let config = write(f.dir.path(), "many.json", &unknown_keys(n));
        let out = warden(&["validate", "--config", &config], "");
        assert_eq!(out.code, EXIT_INVALID, "{n}: {}", out.stderr);
        assert!(
            out.stderr.starts_with(&format!("error: the configuration has {n} error(s):")),
            "{n}: {}",
            &out.stderr[..200.min(out.stderr.len())]
        );
        let shown = out.stderr.lines().filter(|l| l.starts_with("  unknown")).count();
        assert_eq!(shown, MAX_SHOWN_CONFIG_ERRORS, "{n} errors");
        let tail = out.stderr.lines().last().unwrap_or_default().to_string();
        match more {
            None => assert!(tail.starts_with("  unknown"), "{n}: no count line: {tail}"),
            Some(rest) => assert_eq!(tail, format!("  ... and {rest} more error(s) not shown; fix these first")),
        }
    }
}
