//! `warden gate ...` driven in-process through `cli::run`, with its real
//! argument parser, the component and a SQLite file.

use super::at;
use serde_json::{Value, json};
use std::path::Path;
use warden_host::cli::EXIT_INVALID;
use warden_tests::TempDb;

/// `warden` with `--replay`: these runs carry fixed instants of 2024 (`at`).
fn warden(args: &[&str], stdin: &str) -> warden_tests::CliOutput {
    warden_tests::cli(&[args, &["--replay"]].concat(), stdin)
}

fn write_config(dir: &Path, name: &str, doc: &Value) -> String {
    let path = dir.join(name);
    std::fs::write(&path, doc.to_string()).expect("write config");
    path.display().to_string()
}

fn gate_config(dir: &Path) -> String {
    let gate = json!({"ownerOffset": "+00:00", "templates": ["Reminder: your appointment is tomorrow."]});
    write_config(dir, "config.json", &json!({ "gate": gate }))
}

fn ok(out: warden_tests::CliOutput) -> String {
    assert_eq!(out.code, 0, "stderr: {}", out.stderr);
    out.stdout
}

fn parsed(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[test]
fn gate_log_shows_decisions_with_their_rules_newest_first() {
    let db = TempDb::new();
    let config = gate_config(db.dir.path());
    let db_path = db.path().display().to_string();
    let p = ["--config", config.as_str(), "--db", db_path.as_str()];
    let time = |t: &str| at(t, 0).to_string();
    let check = |to: &str, t: &str| {
        let request = json!({"channel": "sms", "recipient": to, "body": "Reminder: your appointment is tomorrow.", "nowMs": at(t, 0)});
        parsed(&ok(warden(&[&["check", "outbound"], &p[..]].concat(), &request.to_string())))
    };

    // Options after the arguments, and an offset that starts with a hyphen.
    let out = ok(warden(
        &[
            "gate",
            "consent",
            "sms",
            "+15550100",
            "-05:00",
            "signup form",
            p[0],
            p[1],
            p[2],
            p[3],
            "--now-ms",
            &time("08:00"),
        ],
        "",
    ));
    assert_eq!(parsed(&out), json!({"recorded": "consent", "channel": "sms"}));
    assert_eq!(check("+15550100", "12:00")["rule"], "gate.quiet-hours", "07:00 for the recipient");
    assert_eq!(check("+15550100", "15:00")["rule"], "gate.routine");
    let out = ok(warden(
        &[&["gate", "record"], &p[..], &["sms", "+15550100", "sent", "--now-ms", &time("15:01")]].concat(),
        "",
    ));
    assert_eq!(parsed(&out)["recorded"], "sent");
    assert_eq!(check("+15550100", "15:02")["rule"], "gate.unanswered-thread");
    assert_eq!(check("+15550199", "15:03")["rule"], "gate.no-consent");

    let table = ok(warden(&[&["gate", "log"], &p[..]].concat(), ""));
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().expect("header").split_whitespace().collect();
    assert_eq!(header, ["SEQ", "TIME", "(UTC)", "EVENT", "CHANNEL", "DECISION", "RULE", "THREAD", "RECIPIENT", "BODY"]);
    let rows: Vec<(String, String, String, String)> = lines
        .map(|line| {
            let cells: Vec<&str> = line.split_whitespace().collect();
            (cells[1].to_string(), cells[2].to_string(), cells[4].to_string(), cells[5].to_string())
        })
        .collect();
    let expected = [
        ("15:03", "check", "block", "gate.no-consent"),
        ("15:02", "check", "approve", "gate.unanswered-thread"),
        ("15:01", "sent", "-", "-"),
        ("15:00", "check", "pass", "gate.routine"),
        ("12:00", "check", "block", "gate.quiet-hours"),
        ("08:00", "consent", "-", "-"),
    ];
    assert_eq!(rows.len(), expected.len(), "{table}");
    for (row, (t, event, decision, rule)) in rows.iter().zip(expected) {
        assert_eq!(row.0, format!("2024-06-03T{t}:00.000Z"), "{table}");
        assert_eq!((row.1.as_str(), row.2.as_str(), row.3.as_str()), (event, decision, rule), "{table}");
    }
    assert!(!table.contains("+1555"), "the log shows keyed hashes, not recipients:\n{table}");
    println!("warden gate log:\n{table}");

    let entries = parsed(&ok(warden(&[&["gate", "log", "2", "--json"], &p[..]].concat(), "")));
    let entries = entries.as_array().expect("a list");
    assert_eq!(entries.len(), 2);
    assert_eq!(
        (entries[0]["decision"].as_str(), entries[0]["rule"].as_str()),
        (Some("block"), Some("gate.no-consent"))
    );
    assert_eq!(entries[1]["rule"], "gate.unanswered-thread");
    assert!(entries[0]["atMs"].as_u64() > entries[1]["atMs"].as_u64());
    assert_eq!(entries[0]["recipientHash"].as_str().map(str::len), Some(64));

    let status = parsed(&ok(warden(&[&["gate", "status", "--json"], &p[..]].concat(), "")));
    let expected = json!({"consents": 1, "optOuts": 0, "openThreads": 1, "entries": 6, "decisions": {"pass": 1, "approve": 1, "block": 2}});
    assert_eq!(status, expected);
    let text = ok(warden(&[&["gate", "status"], &p[..]].concat(), ""));
    assert!(
        text.contains("consents      1\n") && text.contains("checks        pass 1, approve 1, block 2\n"),
        "{text}"
    );
}

#[test]
fn every_gate_command_changes_the_ledger_as_it_says() {
    let db = TempDb::new();
    let config = gate_config(db.dir.path());
    let db_path = db.path().display().to_string();
    let p = ["--config", config.as_str(), "--db", db_path.as_str()];
    let gate = |args: &[&str]| parsed(&ok(warden(&[&["gate"], args, &p[..]].concat(), "")));
    let check = |t: &str, body: &str, thread: Option<&str>| {
        let request =
            json!({"channel": "sms", "recipient": "+15550100", "body": body, "thread": thread, "nowMs": at(t, 0)});
        let v = parsed(&ok(warden(&[&["check", "outbound"], &p[..]].concat(), &request.to_string())));
        (v["decision"].as_str().unwrap_or_default().to_string(), v["rule"].as_str().unwrap_or_default().to_string())
    };
    let is = |d: &str, r: &str| (d.to_string(), r.to_string());
    let routine = "Reminder: your appointment is tomorrow.";

    assert_eq!(check("12:00", routine, None), is("deny", "gate.no-consent"));
    gate(&["consent", "sms", "+15550100", "-", "said yes at the counter", "--now-ms", &at("08:00", 0).to_string()]);
    assert_eq!(check("12:00", routine, None), is("allow", "gate.routine"));
    gate(&["record", "sms", "+15550100", "sent", "t-1"]);
    assert_eq!(check("12:01", routine, Some("t-1")), is("ask", "gate.unanswered-thread"));
    gate(&["reply", "sms", "+15550100", "t-1"]);
    assert_eq!(check("12:02", routine, Some("t-1")), is("allow", "gate.routine"));
    assert_eq!(gate(&["revoke", "sms", "+15550100"])["hadConsent"], true);
    assert_eq!(gate(&["revoke", "sms", "+15550100"])["hadConsent"], false);
    assert_eq!(check("12:03", routine, None), is("deny", "gate.no-consent"));
    gate(&["consent", "sms", "+15550100"]);
    assert_eq!(gate(&["variables", "sms", "+15550100", "name=Ada;order=A-17"])["names"], json!(["name", "order"]));
    assert_eq!(gate(&["variables", "sms", "+15550100", ""])["names"], json!([]));
    gate(&["optout", "+15550100"]);
    gate(&["consent", "sms", "+15550100"]);
    assert_eq!(check("12:04", routine, None), is("deny", "gate.opted-out"));
    let status = gate(&["status", "--json"]);
    assert_eq!((status["consents"].as_u64(), status["optOuts"].as_u64()), (Some(1), Some(1)));
}

#[test]
fn a_reply_that_is_a_stop_keyword_opts_the_recipient_out_on_every_channel() {
    let db = TempDb::new();
    let gate = json!({"ownerOffset": "+00:00", "templates": ["Thanks!"], "stopKeywords": ["STOP", "Arrêt"]});
    let config = write_config(db.dir.path(), "config.json", &json!({ "gate": gate }));
    let db_path = db.path().display().to_string();
    let p = ["--config", config.as_str(), "--db", db_path.as_str()];
    let gate = |args: &[&str]| parsed(&ok(warden(&[&["gate"], args, &p[..]].concat(), "")));
    let rule = |to: &str, channel: &str| {
        let request = json!({"channel": channel, "recipient": to, "body": "Thanks!", "nowMs": at("12:00", 0)});
        let v = parsed(&ok(warden(&[&["check", "outbound"], &p[..]].concat(), &request.to_string())));
        v["rule"].as_str().unwrap_or_default().to_string()
    };
    for to in ["+15550100", "+15550101", "+15550102"] {
        gate(&["consent", "sms", to]);
        gate(&["consent", "email", to]);
    }
    // Not a keyword: a reply that only mentions one.
    assert_eq!(gate(&["reply", "sms", "+15550100", "--text", "please stop calling at night"])["optedOut"], false);
    assert_eq!(rule("+15550100", "sms"), "gate.routine");
    assert_eq!(gate(&["reply", "sms", "+15550101", "--text", " stop\n"])["optedOut"], true);
    assert_eq!(gate(&["record", "sms", "+15550102", "reply", "--text", "ARRÊT"])["optedOut"], true);
    for to in ["+15550101", "+15550102"] {
        assert_eq!((rule(to, "sms"), rule(to, "email")), ("gate.opted-out".into(), "gate.opted-out".into()));
    }
    let raw = std::fs::read(db.path()).expect("db");
    assert!(!raw.windows(5).any(|w| w == b"night"), "the reply's text is not stored");
}

#[test]
fn bad_gate_input_gets_one_line_naming_the_field_and_writes_nothing() {
    let db = TempDb::new();
    let config = gate_config(db.dir.path());
    let off = write_config(db.dir.path(), "off.json", &json!({}));
    let db_path = db.path().display().to_string();
    let cases: &[(&[&str], &str)] = &[
        (&["variables", "sms", "+15550100", "name=Ada;order"], "variables[1]: `order` must be `name=value`"),
        (&["variables", "sms", "+15550100", "=Ada"], "variables[0]: `=Ada` has no name before `=`"),
        (&["variables", "sms", "+15550100", "name=Ada;"], "variables[1]: is empty"),
        (&["variables", "sms", "+15550100", "a=1;a=2"], "variables[1]: `a` is given twice"),
        (&["variables", "sms", "+15550100", "1st=x"], "variables[0]: `1st` must be a letter or `_`"),
        (&["log", "0"], "limit: must be a whole number from 1 to 10000, got `0`"),
        (&["log", "10001"], "limit: must be a whole number from 1 to 10000, got `10001`"),
        (&["log", "--limit", "ten"], "limit: must be a whole number from 1 to 10000, got `ten`"),
        (&["record", "sms", "+15550100", "delivered"], "outcome: must be `sent`, `failed` or `reply`, got `delivered`"),
        (&["consent", "sms", "+15550100", "+25:00"], "offset: `+25:00` must be `+HH:MM` or `-HH:MM`"),
        (&["consent", "sms", "+15550100", "+01:00", " "], "how: must be 1 to 256 characters"),
        (&["consent", "sms/x", "+15550100"], "channel: `sms/x` must be 1 to 64 visible ASCII characters"),
        (&["consent", "sms", " "], "recipient:"),
        (&["optout", ""], "recipient:"),
        (&["reply", "sms", "+15550100", " "], "thread: must be 1 to 256 characters"),
        (&["record", "sms", "+15550100", "sent", ""], "thread: must be 1 to 256 characters"),
        (&["record", "sms", "+15550100", "sent", "--text", "STOP"], "text: only a `reply` has text, not `sent`"),
    ];
    let mut all: Vec<(Vec<&str>, &str)> = cases
        .iter()
        .map(|(args, e)| {
            ([&["gate"], *args, &["--config", config.as_str(), "--db", db_path.as_str()][..]].concat(), *e)
        })
        .collect();
    all.push((vec!["gate", "status", "--config", &off, "--db", &db_path], "gate: the consent gate is off in"));
    for (args, expected) in all {
        let out = warden(&args, "");
        assert_eq!(out.code, EXIT_INVALID, "{args:?}: {}", out.stderr);
        assert_eq!(out.stdout, "", "{args:?}");
        assert_eq!(out.stderr.lines().count(), 1, "one line: {}", out.stderr);
        assert!(out.stderr.starts_with("error: ") && out.stderr.contains(expected), "{args:?}: {}", out.stderr);
        assert!(!out.stderr.contains("+15550100"), "a recipient is never echoed: {}", out.stderr);
        assert!(matches!(db.records(), None | Some(0)), "{args:?} wrote to storage");
    }
}
