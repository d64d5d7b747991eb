//! Request times through the `warden` binary as a subprocess: every command
//! that reads a `nowMs` or `--now-ms` refuses one far from this host's clock
//! unless run with `--replay`, the hook and the MCP proxy take no time from
//! outside, and a record stored with a far time does not freeze later
//! decisions.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Stdio};
use warden_host::clock::CLOCK_TOLERANCE_MS;
use warden_host::json::now_ms;
use warden_tests::binary::{run_warden, warden_command};
use warden_tests::setup::Setup;
use warden_tests::{CliOutput, T0};

const DAY_MS: u64 = 24 * 60 * 60 * 1000;
const ROUTINE: &str = "Reminder: your appointment is tomorrow.";

/// `warden` with `args` on the setup's policy: its JSON answer, exit 0 asserted.
fn ok(setup: &Setup, args: &[&str], stdin: &str) -> Value {
    let out = setup.run(args, stdin);
    assert_eq!(out.code, 0, "warden {args:?}: {}", out.stderr);
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", out.stdout))
}

fn gate_config() -> Value {
    json!({"gate": {"ownerOffset": "+00:00", "start": "00:00", "end": "24:00", "minGapSeconds": 3600,
                    "templates": [ROUTINE]}})
}

fn decided(v: &Value) -> (&str, &str) {
    (v["decision"].as_str().unwrap_or_default(), v["rule"].as_str().unwrap_or_default())
}

/// Asserts a refusal of `value` in `field`: exit 2, the field, the value, the
/// direction, the tolerance and how to replay, on one line; no database.
fn assert_refused(out: &CliOutput, field: &str, value: u64, way: &str, what: &str, setup: &Setup) {
    assert_eq!(out.code, warden_host::cli::EXIT_INVALID, "{what}: {}{}", out.stdout, out.stderr);
    let e = out.stderr.trim_end();
    assert!(e.starts_with(&format!("error: {field}: `{value}` is ")), "{what}: {e}");
    assert!(e.contains(&format!(" ms) {way} this host's clock")), "{what}: {e}");
    assert!(e.contains("at most 5 minutes (300000 ms)"), "{what}: {e}");
    assert!(e.contains("`--replay`"), "{what}: {e}");
    assert_eq!(e.lines().count(), 1, "{what}: {e}");
    assert!(out.stdout.is_empty(), "{what}: {}", out.stdout);
    assert!(!setup.db.path().exists(), "{what}: the database was created");
}

#[test]
fn a_far_future_now_ms_is_refused_by_every_command_that_reads_one_and_nothing_is_written() {
    let setup = Setup::new(&gate_config());
    let far = now_ms() + DAY_MS;
    let t = far.to_string();
    let to = "+15550100";
    let requests = [
        ("tool", json!({"toolName": "calendar_list", "arguments": {}, "nowMs": far})),
        ("outbound", json!({"channel": "sms", "recipient": to, "body": ROUTINE, "nowMs": far})),
        ("turn", json!({"message": "hello", "nowMs": far})),
    ];
    for (what, request) in &requests {
        let out = setup.run(&["check", what], &request.to_string());
        assert_refused(&out, "nowMs", far, "ahead of", &format!("check {what}"), &setup);
    }
    let approve = json!({"toolName": "WebFetch", "arguments": {"url": "https://x", "prompt": "p"}, "nowMs": far});
    let out = setup.run(&["approve", "--scope", "once"], &approve.to_string());
    assert_refused(&out, "nowMs", far, "ahead of", "approve", &setup);

    let commands: [&[&str]; 8] = [
        &["pin", "--session", "s1", "--chat", "19:alice", "--now-ms", &t],
        &["settle", "--session", "s1", "--now-ms", &t],
        &["gate", "consent", "sms", to, "--now-ms", &t],
        &["gate", "optout", to, "--now-ms", &t],
        &["gate", "revoke", "sms", to, "--now-ms", &t],
        &["gate", "reply", "sms", to, "--now-ms", &t],
        &["gate", "variables", "sms", to, "name=Ada", "--now-ms", &t],
        &["gate", "record", "sms", to, "sent", "--now-ms", &t],
    ];
    for args in commands {
        let out = setup.run(args, "");
        assert_refused(&out, "--now-ms", far, "ahead of", &args[..2].join(" "), &setup);
    }
}

#[test]
fn a_now_ms_in_microseconds_is_refused_with_a_hint_and_one_long_past_is_refused_too() {
    let setup = Setup::new(&json!({}));
    let micros = now_ms() * 1000;
    let out = setup.run(&["check", "tool"], &json!({"toolName": "x", "arguments": {}, "nowMs": micros}).to_string());
    assert_refused(&out, "nowMs", micros, "ahead of", "microseconds", &setup);
    assert!(out.stderr.contains("It looks like microseconds"), "{}", out.stderr);

    let out = setup.run(&["pin", "--session", "s1", "--chat", "c", "--now-ms", &T0.to_string()], "");
    assert_refused(&out, "--now-ms", T0, "behind", "a 2023 pin", &setup);
}

#[test]
fn times_within_the_tolerance_are_accepted_and_replay_accepts_any() {
    let setup = Setup::new(&json!({}));
    let margin = 30_000;
    for at in [now_ms() + CLOCK_TOLERANCE_MS - margin, now_ms() - CLOCK_TOLERANCE_MS + margin] {
        let v = ok(
            &setup,
            &["check", "tool"],
            &json!({"toolName": "calendar_list", "arguments": {}, "nowMs": at}).to_string(),
        );
        assert_eq!(decided(&v), ("allow", "tools.allow"), "at {at}");
    }
    let pin =
        ok(&setup, &["pin", "--session", "s1", "--chat", "19:alice", "--now-ms", &T0.to_string(), "--replay"], "");
    assert_eq!((pin["chatId"].as_str(), pin["pinnedAtMs"].as_u64()), (Some("19:alice"), Some(T0)));
    let bob = json!({"toolName": "teams_send_chat_message", "arguments": {"chat": "19:bob"}, "sessionId": "s1", "nowMs": T0 + 1});
    let v = ok(&setup, &["check", "tool", "--replay"], &bob.to_string());
    assert_eq!(decided(&v), ("deny", "pin.other-chat"));
}

/// `warden serve` as a subprocess, stopped when dropped.
struct Served {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const TOKEN: &str = "request-times-token-0123";

fn serve(setup: &Setup, extra: &[&str]) -> Served {
    let mut child = warden_command(&[&["serve", "--listen", "127.0.0.1:0"], &setup.policy()[..], extra].concat())
        .env("WARDEN_TOKEN", TOKEN)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("warden serve starts");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    let addr = loop {
        let line = lines.next().expect("warden serve said where it listens").expect("stderr line");
        if let Some(rest) = line.strip_prefix("warden: serving on http://") {
            break rest.parse().expect("an address");
        }
    };
    // Keep reading stderr so the service never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    Served { child, addr }
}

fn post(s: &Served, path: &str, body: &Value) -> (u16, Value) {
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let mut resp = agent
        .post(format!("http://{}{path}", s.addr))
        .header("authorization", format!("Bearer {TOKEN}"))
        .header("content-type", "application/json")
        .send(body.to_string())
        .expect("request");
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

fn records(db: &Path) -> i64 {
    let conn = rusqlite::Connection::open(db).expect("open");
    conn.query_row("SELECT count(*) FROM records", [], |r| r.get(0)).unwrap_or(0)
}

#[test]
fn warden_serve_refuses_a_far_future_now_ms_with_400_naming_the_field_and_writes_nothing() {
    let setup = Setup::new(&gate_config());
    let served = serve(&setup, &[]);
    let far = now_ms() + DAY_MS;
    let before = records(&setup.db.path());
    let cases = [
        ("/v1/check/tool", json!({"toolName": "calendar_list", "arguments": {}, "nowMs": far}), "nowMs"),
        ("/v1/check/outbound", json!({"channel": "sms", "recipient": "+1", "body": "hi", "nowMs": far}), "nowMs"),
        ("/v1/check/turn", json!({"message": "hello", "nowMs": far}), "nowMs"),
        ("/v1/record", json!({"turnStart": {"sessionId": "s1", "chatId": "c1", "nowMs": far}}), "turnStart.nowMs"),
        ("/v1/record", json!({"turnEnd": {"sessionId": "s1", "nowMs": far}}), "turnEnd.nowMs"),
        ("/v1/record", json!({"usage": {"tokens": 5, "nowMs": far}}), "usage.nowMs"),
        (
            "/v1/record",
            json!({"outcome": {"channel": "sms", "recipient": "+1", "delivery": "sent", "nowMs": far}}),
            "outcome.nowMs",
        ),
        (
            "/v1/record",
            json!({"approval": {"key": "t1:o:0", "allow": true, "scope": "once", "nowMs": far}}),
            "approval.nowMs",
        ),
    ];
    for (path, body, field) in &cases {
        let (status, answer) = post(&served, path, body);
        let e = answer["error"].as_str().unwrap_or_default();
        assert_eq!(status, 400, "{path} {body}: {answer}");
        assert!(e.starts_with(&format!("{field}: `{far}` is ")), "{path}: {e}");
        assert!(e.contains("ahead of this host's clock") && e.contains("`--replay`"), "{path}: {e}");
    }
    assert_eq!(records(&setup.db.path()), before, "nothing was written");
    // Without a time, or with the host's own, requests are answered.
    let (status, v) = post(&served, "/v1/check/tool", &json!({"toolName": "calendar_list", "arguments": {}}));
    assert_eq!((status, decided(&v)), (200, ("allow", "tools.allow")));
    let (status, v) =
        post(&served, "/v1/check/tool", &json!({"toolName": "calendar_list", "arguments": {}, "nowMs": now_ms()}));
    assert_eq!((status, decided(&v)), (200, ("allow", "tools.allow")));
}

#[test]
fn warden_serve_with_replay_accepts_recorded_times() {
    let setup = Setup::new(&json!({}));
    let served = serve(&setup, &["--replay"]);
    let (status, v) =
        post(&served, "/v1/record", &json!({"turnStart": {"sessionId": "s1", "chatId": "19:alice", "nowMs": T0}}));
    assert_eq!(status, 200, "{v}");
    let bob = json!({"toolName": "teams_send_chat_message", "arguments": {"chat": "19:bob"}, "sessionId": "s1", "nowMs": T0 + 1});
    let (status, v) = post(&served, "/v1/check/tool", &bob);
    assert_eq!((status, decided(&v)), (200, ("deny", "pin.other-chat")));
}

fn hook_event(extra: Value) -> String {
    let mut event = json!({"session_id": "cc-1", "cwd": "/work/project", "hook_event_name": "PreToolUse",
                           "tool_name": "teams_send_chat_message", "tool_input": {"chat": "19:bob"},
                           "tool_use_id": "toolu_01"});
    if let (Some(e), Some(x)) = (event.as_object_mut(), extra.as_object()) {
        e.extend(x.clone());
    }
    event.to_string()
}

#[test]
fn the_claude_code_hook_judges_at_this_hosts_clock_whatever_time_the_event_carries() {
    let setup = Setup::new(&json!({}));
    ok(&setup, &["pin", "--session", "cc-1", "--chat", "19:alice", "--label", "Alice"], "");
    let far = now_ms() + DAY_MS;
    // Were the event's time used, the pin would have expired a day ago and the call would pass.
    for extra in [json!({}), json!({"nowMs": far, "timestamp": far, "now_ms": far})] {
        let out = setup.run(&["hook", "claude-code"], &hook_event(extra.clone()));
        assert_eq!(out.code, 0, "{}", out.stderr);
        let v: Value = serde_json::from_str(&out.stdout).expect("hook answer");
        let answer = &v["hookSpecificOutput"];
        assert_eq!(answer["permissionDecision"], "deny", "{extra}: {v}");
        let reason = answer["permissionDecisionReason"].as_str().unwrap_or_default();
        assert!(reason.starts_with("Warden (pin.other-chat): "), "{extra}: {reason}");
    }
}

#[test]
fn replay_is_refused_by_the_commands_that_take_no_time_from_outside() {
    let setup = Setup::new(&json!({}));
    let out = setup.run(&["hook", "claude-code", "--replay"], &hook_event(json!({})));
    assert_eq!(out.code, warden_host::hook::EXIT_BLOCK, "the hook blocks the call: {}", out.stderr);
    assert!(out.stderr.contains("--replay: `warden hook` always uses this host's clock"), "{}", out.stderr);
    let out = run_warden(&[&["mcp"], &setup.policy()[..], &["--replay", "--", "cat"]].concat(), "");
    assert_eq!(out.code, warden_host::cli::EXIT_INVALID, "{}", out.stderr);
    assert!(out.stderr.contains("--replay: `warden mcp` always uses this host's clock"), "{}", out.stderr);
    assert!(!setup.db.path().exists());
}

#[test]
fn a_pin_stored_a_day_ahead_by_a_replaying_host_does_not_hold_a_live_session() {
    let setup = Setup::new(&json!({}));
    let far = (now_ms() + DAY_MS).to_string();
    let pin = ok(&setup, &["pin", "--session", "s1", "--chat", "19:alice", "--now-ms", &far, "--replay"], "");
    assert_eq!(pin["chatId"], "19:alice");
    let bob = json!({"toolName": "teams_send_chat_message", "arguments": {"chat": "19:bob"}, "sessionId": "s1"});
    let v = ok(&setup, &["check", "tool"], &bob.to_string());
    assert_eq!(decided(&v), ("allow", "tools.allow"), "the far pin is not evidence now: {v}");
    // The next live turn pins the session again, and that pin holds.
    ok(&setup, &["pin", "--session", "s1", "--chat", "19:alice"], "");
    let v = ok(&setup, &["check", "tool"], &bob.to_string());
    assert_eq!(decided(&v), ("deny", "pin.other-chat"));
}

#[test]
fn a_send_stored_a_day_ahead_does_not_ask_min_gap_forever_nor_lead_the_gate_log() {
    let setup = Setup::new(&gate_config());
    let to = "+15550100";
    let far = (now_ms() + DAY_MS).to_string();
    ok(&setup, &["gate", "consent", "sms", to], "");
    ok(&setup, &["gate", "record", "sms", to, "sent", "t1", "--now-ms", &far, "--replay"], "");
    ok(&setup, &["gate", "reply", "sms", to, "t1"], "");
    let message = json!({"channel": "sms", "recipient": to, "body": ROUTINE, "thread": "t1"}).to_string();
    let v = ok(&setup, &["check", "outbound"], &message);
    assert_eq!(decided(&v), ("allow", "gate.routine"), "the far send is not evidence now: {v}");
    let log = ok(&setup, &["gate", "log", "1", "--json"], "");
    assert_eq!((log[0]["event"].as_str(), log[0]["rule"].as_str()), (Some("check"), Some("gate.routine")), "{log}");

    // A live send is evidence again: the next message inside the gap asks.
    ok(&setup, &["gate", "record", "sms", to, "sent", "t1"], "");
    ok(&setup, &["gate", "reply", "sms", to, "t1"], "");
    let v = ok(&setup, &["check", "outbound"], &message);
    assert_eq!(decided(&v), ("ask", "gate.min-gap"));
}
